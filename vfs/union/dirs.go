package union

import (
	"context"
	"errors"
	"syscall"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.DirMaker   = (*FS)(nil)
	_ vfs.DirRemover = (*FS)(nil)
)

// MakeDir makes a directory in the mount that holds path, when that mount
// can (vfs.DirMaker); otherwise it answers errors.ErrUnsupported. A
// directory of the union itself (one leading to a mount point) and a mount
// point are there already.
func (u *FS) MakeDir(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if u.isInner(p) && u.byPath[p] == nil {
		return nil
	}
	m := u.route(p)
	if m == nil {
		return vfs.NoMount(p)
	}
	return m.dirErr(vfs.MakeDir(ctx, m.fs, m.down(p)), m.down(p))
}

// RemoveDir removes an empty directory in the mount that holds path, when
// that mount can (vfs.DirRemover); otherwise it answers
// errors.ErrUnsupported. A directory of the union itself and a mount point
// cannot be removed (EBUSY).
func (u *FS) RemoveDir(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if u.isInner(p) || u.byPath[p] != nil {
		return vfs.NewError(vfs.KindOther, p, syscall.EBUSY)
	}
	m := u.route(p)
	if m == nil {
		return vfs.NoMount(p)
	}
	return m.dirErr(vfs.RemoveDir(ctx, m.fs, m.down(p)), m.down(p))
}

// dirErr rebases a directory verb's error into the union, keeping
// errors.ErrUnsupported as it is.
func (m *mount) dirErr(err error, cp string) error {
	if errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return m.fixErr(err, cp)
}
