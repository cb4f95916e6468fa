// Package checkpoint keeps the checkpoints of a copy-on-write session
// (july run --cow): at the end of every turn, a manifest of the session's
// layer (vfs/cow) — every path that differs from the base, with its
// content hash, mode, link target, or whiteout — written atomically to
//
//	sessions/<id>/layer/checkpoints/<turn>.json
//
// over the layer's content-addressed blobs, which every checkpoint and
// every fork of the session shares (a fork links the blobs its checkpoint
// names into its own layer: no content is copied). Taking a checkpoint
// costs what the layer holds, never the base's size: it makes the blobs
// written since the last one durable, then writes the manifest; the
// layer's stagings are not entries until committed, so no checkpoint
// holds part of a file.
//
// Rewind ([Rewind]) resets the layer to a checkpoint; [Fork] starts a new
// layer from one; [Diff] compares two states (the base, a checkpoint, the
// live layer); [Apply] writes a layer's changes into the base with
// compare-and-swap against what the base had when each path was first
// shadowed.
//
// # Errors
//
// A checkpoint or a blob missing from a damaged layer is named in the
// error; nothing else is lost.
package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs/cow"
)

// LayerDir is the name of a session's layer directory inside its session
// directory.
const LayerDir = "layer"

const checkpointsDir = "checkpoints"

// compactLimit is the journal size past which a checkpoint compacts the
// layer (head.json rewritten, the journal started afresh).
const compactLimit = 1 << 20

// Manifest is one checkpoint.
type Manifest struct {
	Version int    `json:"version"`
	Turn    int    `json:"turn"`
	TurnID  string `json:"turnId,omitempty"`
	// Entries are the layer's entries, sorted by path.
	Entries []cow.Entry `json:"entries"`
}

// ManifestPath is the path of turn's manifest in the layer directory.
func ManifestPath(layer string, turn int) string {
	return filepath.Join(layer, checkpointsDir, fmt.Sprintf("%06d.json", turn))
}

// Take records the checkpoint of turn (its id turnID) for the layer c,
// whose directory is sessionDir/layer: the blobs made durable, then the
// manifest written atomically, then the layer compacted. prev is the
// previous state the turn started from (for Changed), nil for none.
func Take(c *cow.FS, sessionDir string, turn int, turnID string, prev []cow.Entry) (sessions.Checkpoint, []cow.Entry, error) {
	es := c.Entries()
	ref := sessions.Checkpoint{Turn: turn, Entries: len(es), Changed: len(cow.Changes(prev, es))}
	if err := c.Sync(); err != nil {
		return ref, nil, fmt.Errorf("checkpoint of turn %d: %w", turn, err)
	}
	data, err := json.Marshal(Manifest{Version: 1, Turn: turn, TurnID: turnID, Entries: nonNil(es)})
	if err != nil {
		return ref, nil, err
	}
	p := ManifestPath(c.Dir(), turn)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return ref, nil, fmt.Errorf("checkpoint of turn %d: %w", turn, err)
	}
	if err := cow.WriteFileAtomic(p, data); err != nil {
		return ref, nil, fmt.Errorf("checkpoint of turn %d: %w", turn, err)
	}
	if rel, err := filepath.Rel(sessionDir, p); err == nil {
		ref.Manifest = filepath.ToSlash(rel)
	}
	if err := c.CompactOver(compactLimit); err != nil {
		return ref, es, fmt.Errorf("checkpoint of turn %d: compacting the layer: %w", turn, err)
	}
	return ref, es, nil
}

func nonNil(es []cow.Entry) []cow.Entry {
	if es == nil {
		return []cow.Entry{}
	}
	return es
}

// ErrNoCheckpoint is a turn without a checkpoint.
var ErrNoCheckpoint = errors.New("no checkpoint")

// Load reads turn's checkpoint from the layer directory; turn 0 is the
// base (no entries).
func Load(layer string, turn int) (Manifest, error) {
	if turn == 0 {
		return Manifest{Version: 1}, nil
	}
	p := ManifestPath(layer, turn)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, fmt.Errorf("turn %d: %w (%s is missing)", turn, ErrNoCheckpoint, p)
	}
	if err != nil {
		return Manifest{}, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", p, err)
	}
	if m.Turn != turn {
		return Manifest{}, fmt.Errorf("%s: holds turn %d, want %d", p, m.Turn, turn)
	}
	return m, nil
}

// Turns lists the turns the layer directory has checkpoints of, in
// order.
func Turns(layer string) ([]int, error) {
	des, err := os.ReadDir(filepath.Join(layer, checkpointsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []int
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".json")
		if n, err := strconv.Atoi(name); ok && err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Rewind resets the layer c to turn's checkpoint (0: the base). A
// missing checkpoint or blob is named and nothing changes.
func Rewind(c *cow.FS, turn int) error {
	m, err := Load(c.Dir(), turn)
	if err != nil {
		return err
	}
	return c.Reset(m.Entries)
}

// Fork makes dst a new layer starting at turn's checkpoint of the layer
// src: the blobs it names are hard-linked (copied only where the host
// cannot link), then the layer's head is written.
func Fork(src string, turn int, dst string) error {
	m, err := Load(src, turn)
	if err != nil {
		return err
	}
	for _, e := range m.Entries {
		for _, h := range []string{e.Hash, e.BaseHash} {
			if h == "" {
				continue
			}
			if h != e.Hash {
				// A base side a damaged layer lost: its three-way diff
				// says so; the fork goes on.
				if _, err := os.Stat(cow.BlobPath(src, h)); err != nil {
					continue
				}
			}
			if err := linkBlob(src, dst, h, e.Path); err != nil {
				return err
			}
		}
	}
	return cow.InitLayer(dst, m.Entries)
}

// linkBlob hard-links blob h (of path p) of layer directory src into
// dst's, copying it where the host cannot link.
func linkBlob(src, dst, h, p string) error {
	from, to := cow.BlobPath(src, h), cow.BlobPath(dst, h)
	if _, err := os.Stat(to); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Link(from, to); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("layer %s: blob %s of %s is missing", src, h, p)
		}
		data, rerr := os.ReadFile(from)
		if rerr != nil {
			return rerr
		}
		if err := os.WriteFile(to, data, 0o444); err != nil {
			return err
		}
	}
	return nil
}
