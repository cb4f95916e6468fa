package cow

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/julyfs/julyfs/vfs"
)

// Entries returns the layer's entries sorted by path: a consistent
// snapshot (no change is half made in it). Its cost is the layer's size,
// not the base's.
func (c *FS) Entries() []Entry {
	c.mu.RLock()
	out := entries(c.root, "/", nil)
	c.mu.RUnlock()
	SortEntries(out)
	return out
}

// Sync makes durable every blob written since the last Sync, so that a
// manifest written after it names only blobs that survive a crash.
func (c *FS) Sync() error { return c.blobs.sync() }

// Compact writes the layer's entries to head.json and starts an empty
// journal, so reopening does not replay every change ever made.
func (c *FS) Compact() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.resetLocked(c.Entries(), false)
}

// CompactOver compacts the layer when its journal has grown past limit
// bytes, so a checkpoint pays for a compaction only now and then.
func (c *FS) CompactOver(limit int64) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.journal == nil {
		return nil
	}
	st, err := c.journal.Stat()
	if err != nil || st.Size() <= limit {
		return err
	}
	return c.resetLocked(c.Entries(), false)
}

// Reset makes the layer es (entries as Entries returns them: a
// checkpoint's), durably: every blob es names must be in the layer. A
// missing blob is named in the error and nothing changes. Watchers hear
// of every file path whose entry changed.
func (c *FS) Reset(es []Entry) error {
	for _, e := range es {
		if msg := validEntry(e); msg != "" {
			return fmt.Errorf("cow: %s", msg)
		}
		if e.Type == TypeFile {
			if _, err := os.Stat(c.blobs.path(e.Hash)); err != nil {
				return fmt.Errorf("cow: layer %s: blob %s of %s is missing", c.dir, e.Hash, e.Path)
			}
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.resetLocked(es, true)
}

func (c *FS) resetLocked(es []Entry, notify bool) error {
	es = append([]Entry(nil), es...)
	SortEntries(es)
	old := c.Entries()
	if err := c.blobs.sync(); err != nil {
		return fmt.Errorf("cow: %w", err)
	}
	if err := c.journal.Close(); err != nil {
		return fmt.Errorf("cow: %w", err)
	}
	gen := c.gen + 1
	werr := writeHead(c.dir, head{Gen: gen, Entries: es})
	j, err := os.OpenFile(journalPath(c.dir), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("cow: reopening the journal: %w", err)
	}
	c.journal = j
	if werr != nil {
		return fmt.Errorf("cow: %w", werr)
	}
	c.gen = gen
	root := build(es)
	c.mu.Lock()
	c.root = root
	c.mu.Unlock()
	if notify {
		for _, ch := range Changes(old, es) {
			op := vfs.ChangeWrite
			if ch.New.Type != TypeFile && ch.New.Type != TypeLink {
				op = vfs.ChangeDelete
			}
			c.watchers.Notify(vfs.Change{Path: ch.Path, Op: op})
		}
	}
	return nil
}

// Change is one path where two sets of entries differ: Old or New is the
// zero Entry (Type "") where that set has no entry.
type Change struct {
	Path     string
	Old, New Entry
}

// Changes returns the paths where a and b (each sorted by path) differ,
// in path order.
func Changes(a, b []Entry) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || i < len(a) && a[i].Path < b[j].Path:
			out = append(out, Change{Path: a[i].Path, Old: a[i]})
			i++
		case i >= len(a) || b[j].Path < a[i].Path:
			out = append(out, Change{Path: b[j].Path, New: b[j]})
			j++
		default:
			if !SameContent(a[i], b[j]) {
				out = append(out, Change{Path: a[i].Path, Old: a[i], New: b[j]})
			}
			i++
			j++
		}
	}
	return out
}

// InitLayer makes dir a layer holding es, for a layer that is to start
// from a snapshot (a fork): the blobs es names must already be in dir's
// blobs directory (linked there: [BlobPath]). dir must not hold a layer.
func InitLayer(dir string, es []Entry) error {
	if _, err := os.Stat(journalPath(dir)); err == nil {
		return fmt.Errorf("cow: %s already holds a layer", dir)
	}
	for _, d := range []string{dir, filepath.Join(dir, blobsDir), filepath.Join(dir, tmpDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cow: %w", err)
		}
	}
	es = append([]Entry(nil), es...)
	SortEntries(es)
	for _, e := range es {
		if msg := validEntry(e); msg != "" {
			return fmt.Errorf("cow: %s", msg)
		}
	}
	return writeHead(dir, head{Gen: 1, Entries: es})
}

// View returns a read-only tree showing es (a checkpoint's entries) over
// base, its files read from the blobs of the layer directory dir: what a
// diff compares and a mount of a checkpoint serves. Its changes fail with
// "read-only mount".
func View(base vfs.FileSystem, dir string, es []Entry) *FS {
	return &FS{base: base, dir: dir, blobs: &blobStore{dir: dir},
		uid: uint32(os.Getuid()), gid: uint32(os.Getgid()), root: build(es), view: true}
}

// ReadEntries returns the entries of the layer in directory dir as they
// are on disk (head.json and the journal), without opening it: what
// another process reads while the layer's owner works.
func ReadEntries(dir string) ([]Entry, error) {
	h, err := readHead(dir)
	if err != nil {
		return nil, fmt.Errorf("cow: %w", err)
	}
	batches, err := readJournal(dir, h.Gen)
	if err != nil {
		return nil, fmt.Errorf("cow: %w", err)
	}
	root := build(h.Entries)
	for _, b := range batches {
		for _, o := range b {
			apply(root, o)
		}
	}
	es := entries(root, "/", nil)
	SortEntries(es)
	return es, nil
}
