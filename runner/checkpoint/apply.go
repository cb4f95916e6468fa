package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
)

// Action is what Apply did, or would do, with one path.
type Action struct {
	Path string `json:"path"`
	// Op is "write", "delete", "mkdir", "link" or "mode".
	Op string `json:"op"`
	// Conflict says why the path was not written: the base changed since
	// the layer first shadowed it.
	Conflict string `json:"conflict,omitempty"`
	// Done: the base already holds the change (a rerun after a crash).
	Done bool `json:"done,omitempty"`
	// ThreeWay is a conflicting file's three versions (nil for a
	// directory or link).
	ThreeWay *ThreeWay `json:"threeWay,omitempty"`
}

// Apply writes the layer c's changes into its base, each with
// compare-and-swap against what the base had when the layer first
// shadowed the path (Entry.BaseKind, BaseETag): a path the base changed
// since is a conflict, listed and not written; everything else is
// written, and dropped from the layer, which then shows the base. With
// dryRun nothing is written. A change the base already holds counts as
// done, so a rerun after a crash completes an apply; a base on a host
// disk writes each file atomically (old or new, never a part).
func Apply(ctx context.Context, c *cow.FS, dryRun bool) ([]Action, error) {
	base := c.Base()
	es := c.Entries()
	var acts []Action
	keep := map[string]bool{} // entries that stay in the layer
	for _, e := range es {
		a, err := applyOne(ctx, c, base, e, dryRun)
		if err != nil {
			return acts, err
		}
		if a.Op == "" {
			continue
		}
		if a.Conflict != "" {
			keep[e.Path] = true
			if e.Type == cow.TypeFile || e.Type == cow.TypeWhiteout && e.BaseKind == "file" {
				if a.ThreeWay, err = threeWay(ctx, c, e); err != nil {
					return acts, err
				}
			}
		}
		acts = append(acts, a)
	}
	// Base files under removed or opaque directories that the layer does
	// not show.
	for _, e := range es {
		if !(e.Type == cow.TypeWhiteout && e.BaseKind == "dir" || e.Type == cow.TypeDir && e.Opaque) || keep[e.Path] {
			continue
		}
		var dirs []string
		for p, err := range vfs.WalkFiles(ctx, base, e.Path) {
			if err != nil {
				return acts, err
			}
			if info, err := c.Stat(ctx, p); err != nil || info.Kind != vfs.KindMissing {
				continue
			}
			acts = append(acts, Action{Path: p, Op: "delete"})
			if !dryRun {
				if err := base.Delete(ctx, p); err != nil && !errors.Is(err, vfs.ErrNotFound) {
					return acts, err
				}
			}
			dirs = append(dirs, vfs.Parent(p))
		}
		if e.Type == cow.TypeWhiteout && !dryRun {
			dirs = append(dirs, e.Path)
			slices.Sort(dirs)
			dirs = slices.Compact(dirs)
			for i := len(dirs) - 1; i >= 0; i-- {
				if vfs.HasPrefix(dirs[i], e.Path) {
					vfs.RemoveDir(ctx, base, dirs[i]) // best effort: a tree without directories of its own has none
				}
			}
		}
	}
	if dryRun {
		return acts, nil
	}
	var rest []cow.Entry
	for _, e := range es {
		if keep[e.Path] {
			rest = append(rest, e)
		}
	}
	return acts, c.Reset(rest)
}

func applyOne(ctx context.Context, c *cow.FS, base vfs.FileSystem, e cow.Entry, dryRun bool) (Action, error) {
	st, err := base.Stat(ctx, e.Path)
	if err != nil {
		return Action{}, err
	}
	kind := ""
	switch {
	case st.Link:
		kind = "link"
	case st.Kind == vfs.KindFile:
		kind = "file"
	case st.Kind == vfs.KindDir:
		kind = "dir"
	}
	changed := func() string {
		if kind == e.BaseKind && (kind != "file" || st.ETag == e.BaseETag) {
			return ""
		}
		was := e.BaseKind
		if was == "" {
			was = "nothing"
		}
		return fmt.Sprintf("the base changed: it had %s when the session first changed the path", was)
	}
	switch e.Type {
	case cow.TypeFile:
		a := Action{Path: e.Path, Op: "write"}
		data, err := c.Read(ctx, e.Path)
		if err != nil {
			return a, err
		}
		if kind == "file" {
			if cur, err := base.Read(ctx, e.Path); err == nil && bytes.Equal(cur, data) {
				a.Done = true
				return a, setMode(ctx, base, e, st, dryRun)
			}
		}
		if a.Conflict = changed(); a.Conflict != "" || dryRun {
			return a, nil
		}
		cond := vfs.Precondition{IfMatch: e.BaseETag}
		if e.BaseKind == "" {
			cond = vfs.Precondition{IfNoneMatch: true}
		}
		if _, err := vfs.WriteIf(ctx, base, e.Path, data, cond); err != nil {
			if errors.Is(err, vfs.ErrConflict) {
				a.Conflict = "the base changed while applying"
				return a, nil
			}
			return a, err
		}
		st, _ = base.Stat(ctx, e.Path)
		return a, setMode(ctx, base, e, st, false)
	case cow.TypeWhiteout:
		a := Action{Path: e.Path, Op: "delete"}
		if kind == "" {
			a.Done = true
			return a, nil
		}
		if e.BaseKind == "dir" {
			return a, nil // its files are deleted by Apply's second pass
		}
		if a.Conflict = changed(); a.Conflict != "" || dryRun {
			return a, nil
		}
		if err := base.Delete(ctx, e.Path); err != nil && !errors.Is(err, vfs.ErrNotFound) {
			return a, err
		}
		return a, nil
	case cow.TypeDir:
		a := Action{Path: e.Path, Op: "mkdir"}
		if kind == "dir" {
			a.Op, a.Done = "mode", true
			if e.Mode != 0 && st.HasMode && vfs.ModeBits(st.Mode) != e.Mode {
				a.Done = false
			}
			if a.Done {
				return Action{}, nil
			}
			return a, setMode(ctx, base, e, st, dryRun)
		}
		if kind != "" {
			a.Conflict = changed()
			return a, nil
		}
		if dryRun {
			return a, nil
		}
		if err := vfs.MakeDir(ctx, base, e.Path); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			return a, err
		}
		return a, nil
	case cow.TypeLink:
		a := Action{Path: e.Path, Op: "link"}
		if kind == "link" {
			if t, err := vfs.Readlink(ctx, base, e.Path); err == nil && t == e.Target {
				a.Done = true
				return a, nil
			}
		}
		if a.Conflict = changed(); a.Conflict != "" || dryRun {
			return a, nil
		}
		if kind != "" {
			if err := base.Delete(ctx, e.Path); err != nil {
				return a, err
			}
		}
		return a, vfs.Symlink(ctx, base, e.Target, e.Path)
	}
	return Action{}, nil
}

// setMode gives the base's file or directory e's mode, where both have
// one.
func setMode(ctx context.Context, base vfs.FileSystem, e cow.Entry, st vfs.FileInfo, dryRun bool) error {
	if dryRun || e.Mode == 0 || !st.HasMode || vfs.ModeBits(st.Mode) == e.Mode {
		return nil
	}
	err := vfs.SetMode(ctx, base, e.Path, vfs.FileModeOf(e.Mode))
	if errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
