package overlay

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

// Symlink fails: an overlay is read-only.
func (o *FS) Symlink(_ context.Context, _, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// Readlink reads the link at path in the first layer that has anything
// there (a dangling link counts); what that layer holds is not a link
// when it is a file or directory of a tree without links (EINVAL).
func (o *FS) Readlink(ctx context.Context, path string) (string, error) {
	p := vfs.Clean(path)
	for _, l := range o.layers {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		target, err := vfs.Readlink(ctx, l, p)
		if err == nil {
			return target, nil
		}
		st, serr := l.Stat(ctx, p)
		if serr != nil || st.Kind == vfs.KindMissing {
			continue
		}
		if errors.Is(err, errors.ErrUnsupported) {
			return "", vfs.NewError(vfs.KindOther, p, syscall.EINVAL)
		}
		return "", err
	}
	return "", vfs.NotFound(p)
}

// SetMode fails: an overlay is read-only.
func (o *FS) SetMode(_ context.Context, path string, _ fs.FileMode) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// SetModTime fails: an overlay is read-only.
func (o *FS) SetModTime(_ context.Context, path string, _ time.Time) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// SetLinkModTime fails: an overlay is read-only.
func (o *FS) SetLinkModTime(_ context.Context, path string, _ time.Time) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

var (
	_ vfs.OwnerSetter     = (*FS)(nil)
	_ vfs.LinkOwnerSetter = (*FS)(nil)
)

// SetOwner fails with "read-only mount: <path>".
func (o *FS) SetOwner(_ context.Context, path string, _, _ int) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// SetLinkOwner fails with "read-only mount: <path>".
func (o *FS) SetLinkOwner(_ context.Context, path string, _, _ int) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

var _ vfs.Linker = (*FS)(nil)

// Link fails with "read-only mount: <newpath>".
func (o *FS) Link(_ context.Context, _, newpath string) error {
	return vfs.ReadOnly(vfs.Clean(newpath))
}

var _ vfs.NodeMaker = (*FS)(nil)

// Mknod fails with "read-only mount: <path>".
func (o *FS) Mknod(_ context.Context, path string, _ fs.FileMode, _ uint64) error {
	return vfs.ReadOnly(vfs.Clean(path))
}
