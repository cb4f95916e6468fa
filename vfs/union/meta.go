package union

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.Symlinker  = (*FS)(nil)
	_ vfs.ModeSetter = (*FS)(nil)
	_ vfs.TimeSetter = (*FS)(nil)

	_ vfs.LinkTimeSetter = (*FS)(nil)
)

// Symlink makes a link in the mount that holds path, when that mount can
// (vfs.Symlinker); otherwise errors.ErrUnsupported. The target is stored
// as given, in the mount's own namespace. A mount point or a directory of
// the union itself is there already (EEXIST).
func (u *FS) Symlink(ctx context.Context, target, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if u.isInner(p) || u.byPath[p] != nil {
		return vfs.WriteFailed(p, syscall.EEXIST)
	}
	m := u.route(p)
	if m == nil {
		return vfs.NoMount(p)
	}
	return m.dirErr(vfs.Symlink(ctx, m.fs, target, m.down(p)), m.down(p))
}

// Readlink reads a link in the mount that holds path. A mount point or a
// directory of the union itself is not a link (EINVAL).
func (u *FS) Readlink(ctx context.Context, path string) (string, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if u.isInner(p) || u.byPath[p] != nil {
		return "", vfs.NewError(vfs.KindOther, p, syscall.EINVAL)
	}
	m := u.route(p)
	if m == nil {
		return "", vfs.NotFound(p)
	}
	target, err := vfs.Readlink(ctx, m.fs, m.down(p))
	return target, m.dirErr(err, m.down(p))
}

// SetMode sets a mode in the mount that holds path (a mount point is its
// tree's root), when that mount can; a directory of the union itself has
// no mode of its own (errors.ErrUnsupported).
func (u *FS) SetMode(ctx context.Context, path string, mode fs.FileMode) error {
	m, cp, err := u.metaTarget(ctx, path)
	if err != nil {
		return err
	}
	return m.dirErr(vfs.SetMode(ctx, m.fs, cp, mode), cp)
}

// SetModTime sets a modification time in the mount that holds path, as
// SetMode does.
func (u *FS) SetModTime(ctx context.Context, path string, mtime time.Time) error {
	m, cp, err := u.metaTarget(ctx, path)
	if err != nil {
		return err
	}
	return m.dirErr(vfs.SetModTime(ctx, m.fs, cp, mtime), cp)
}

// metaTarget routes SetMode and SetModTime.
func (u *FS) metaTarget(ctx context.Context, path string) (*mount, string, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	if u.isInner(p) && u.byPath[p] == nil {
		return nil, "", errors.ErrUnsupported
	}
	m := u.route(p)
	if m == nil {
		return nil, "", vfs.NotFound(p)
	}
	return m, m.down(p), nil
}

// SetLinkModTime sets a link's own time in the mount that holds path, as
// SetMode does.
func (u *FS) SetLinkModTime(ctx context.Context, path string, mtime time.Time) error {
	m, cp, err := u.metaTarget(ctx, path)
	if err != nil {
		return err
	}
	return m.dirErr(vfs.SetLinkModTime(ctx, m.fs, cp, mtime), cp)
}

var (
	_ vfs.OwnerSetter     = (*FS)(nil)
	_ vfs.LinkOwnerSetter = (*FS)(nil)
)

// SetOwner sets an owner and group in the mount that holds path, as
// SetMode does.
func (u *FS) SetOwner(ctx context.Context, path string, uid, gid int) error {
	m, cp, err := u.metaTarget(ctx, path)
	if err != nil {
		return err
	}
	return m.dirErr(vfs.SetOwner(ctx, m.fs, cp, uid, gid), cp)
}

// SetLinkOwner sets a link's own owner and group in the mount that holds
// path, as SetMode does.
func (u *FS) SetLinkOwner(ctx context.Context, path string, uid, gid int) error {
	m, cp, err := u.metaTarget(ctx, path)
	if err != nil {
		return err
	}
	return m.dirErr(vfs.SetLinkOwner(ctx, m.fs, cp, uid, gid), cp)
}
