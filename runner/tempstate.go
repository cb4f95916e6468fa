package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
)

// This file keeps the contents of an agent's temp: mounts with its
// session, so a session continued in another process finds the in-memory
// files its earlier turns wrote. After each turn the loop saves every
// file under each writable top-level temp mount to the session's
// temp.json; before the first turn of a process it puts that state back
// (files written, files the session had deleted deleted). Temp trees
// nested in an overlay or union are not kept.

// TempStateFile holds a session's temp mounts, in its directory.
const TempStateFile = "temp.json"

// tempState is temp.json: mount prefix to file path to contents.
type tempState struct {
	Mounts map[string]map[string][]byte `json:"mounts"`
}

// tempPrefixes returns the prefixes of the writable top-level temp mounts,
// or nil when the session's tree is not agent.yaml's root.
func (s *Session) tempPrefixes() []string {
	if s.opts.Root != nil || s.agent.root == nil {
		return nil
	}
	var out []string
	for _, m := range s.agent.root.table {
		if m.Spec.Kind == rootspec.KindTemp && m.Spec.Writable() {
			out = append(out, m.Prefix)
		}
	}
	return out
}

// mountOf returns the prefix of the mount that serves p.
func (s *Session) mountOf(p string) string {
	best := ""
	for _, m := range s.agent.root.table {
		if vfs.HasPrefix(p, m.Prefix) && len(m.Prefix) > len(best) {
			best = m.Prefix
		}
	}
	return best
}

// tempFiles returns the files of the temp mount at prefix.
func (s *Session) tempFiles(ctx context.Context, prefix string) (map[string][]byte, error) {
	files := map[string][]byte{}
	for p, err := range vfs.WalkFiles(ctx, s.fs, prefix) {
		if err != nil {
			return nil, err
		}
		if s.mountOf(p) != prefix {
			continue // under a mount nested below this one
		}
		data, err := s.fs.Read(ctx, p)
		if err != nil {
			return nil, err
		}
		files[p] = data
	}
	return files, nil
}

// saveTemp writes the temp mounts' files to dir/temp.json (atomically).
func (s *Session) saveTemp(ctx context.Context, dir string) error {
	prefixes := s.tempPrefixes()
	if len(prefixes) == 0 {
		return nil
	}
	st := tempState{Mounts: map[string]map[string][]byte{}}
	for _, p := range prefixes {
		files, err := s.tempFiles(ctx, p)
		if err != nil {
			return fmt.Errorf("keeping temp mount %s: %w", p, err)
		}
		st.Mounts[p] = files
	}
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, TempStateFile+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("keeping temp mounts: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, TempStateFile))
	}
	if err != nil {
		return fmt.Errorf("keeping temp mounts: %w", err)
	}
	return nil
}

// restoreTemp puts the temp mounts back as dir/temp.json has them; with no
// such file it leaves the tree as agent.yaml seeds it.
func (s *Session) restoreTemp(ctx context.Context, dir string) error {
	prefixes := s.tempPrefixes()
	if len(prefixes) == 0 {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, TempStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restoring temp mounts: %w", err)
	}
	var st tempState
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("restoring temp mounts: %s: %w", filepath.Join(dir, TempStateFile), err)
	}
	for _, p := range prefixes {
		want, ok := st.Mounts[p]
		if !ok {
			continue // a mount agent.yaml gained since: as seeded
		}
		have, err := s.tempFiles(ctx, p)
		if err != nil {
			return fmt.Errorf("restoring temp mount %s: %w", p, err)
		}
		for _, f := range slices.Sorted(maps.Keys(have)) {
			if _, keep := want[f]; !keep {
				if err := s.fs.Delete(ctx, f); err != nil {
					return fmt.Errorf("restoring temp mount %s: %w", p, err)
				}
			}
		}
		for _, f := range slices.Sorted(maps.Keys(want)) {
			if s.mountOf(f) != p {
				continue
			}
			if err := s.fs.Write(ctx, f, want[f]); err != nil {
				return fmt.Errorf("restoring temp mount %s: %w", p, err)
			}
		}
	}
	return nil
}
