package index

import (
	"context"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.Renamer = (*FS)(nil)

// Rename forwards to the wrapped tree (vfs.Rename: its Renamer, or copy
// and delete), then moves the index entries of the moved files (one file,
// or each file now under a moved directory) before returning.
func (f *FS) Rename(ctx context.Context, from, to string) error {
	fp, tp := vfs.Clean(from), vfs.Clean(to)
	if f.isClosed() {
		return vfs.NewError(vfs.KindWriteFailed, tp, ErrClosed)
	}
	f.syncMu.RLock()
	defer f.syncMu.RUnlock()
	if err := vfs.Rename(ctx, f.inner, fp, tp); err != nil {
		return err
	}
	var moved []string
	if st, err := f.inner.Stat(ctx, tp); err == nil && st.Kind == vfs.KindDir {
		for e, err := range f.inner.Glob(ctx, "**", tp) {
			if err != nil {
				return indexUpdateFailed(tp, err)
			}
			if e.Kind == vfs.KindFile {
				moved = append(moved, e.Path)
			}
		}
	} else if fp != tp {
		moved = []string{tp}
	}
	for _, p := range moved {
		r, _ := vfs.Rel(p, tp)
		old := vfs.Join(fp, r)
		if f.remote != nil {
			// A following process sees the move as it sees anyone's.
		} else if err := f.idx.Delete(old); err != nil {
			return indexUpdateFailed(old, err)
		}
		data, err := f.inner.Read(ctx, p)
		if err != nil {
			continue // gone again; the next Sync settles it
		}
		if err := f.update(ctx, p, data); err != nil {
			return err
		}
		f.notify(vfs.Change{Path: old, Op: vfs.ChangeDelete})
		f.notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	}
	return nil
}
