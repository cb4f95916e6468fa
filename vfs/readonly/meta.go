package readonly

import (
	"context"
	"io/fs"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.Symlinker  = (*FS)(nil)
	_ vfs.ModeSetter = (*FS)(nil)
	_ vfs.TimeSetter = (*FS)(nil)

	_ vfs.LinkTimeSetter = (*FS)(nil)
)

// Symlink fails with "read-only mount: <path>".
func (r *FS) Symlink(_ context.Context, _, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// Readlink forwards to the tree (errors.ErrUnsupported when it has no
// links).
func (r *FS) Readlink(ctx context.Context, path string) (string, error) {
	return vfs.Readlink(ctx, r.fsys, path)
}

// SetMode fails with "read-only mount: <path>".
func (r *FS) SetMode(_ context.Context, path string, _ fs.FileMode) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// SetModTime fails with "read-only mount: <path>".
func (r *FS) SetModTime(_ context.Context, path string, _ time.Time) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// SetLinkModTime fails with "read-only mount: <path>".
func (r *FS) SetLinkModTime(_ context.Context, path string, _ time.Time) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

var (
	_ vfs.OwnerSetter     = (*FS)(nil)
	_ vfs.LinkOwnerSetter = (*FS)(nil)
)

// SetOwner fails with "read-only mount: <path>".
func (r *FS) SetOwner(_ context.Context, path string, _, _ int) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// SetLinkOwner fails with "read-only mount: <path>".
func (r *FS) SetLinkOwner(_ context.Context, path string, _, _ int) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

var _ vfs.Linker = (*FS)(nil)

// Link fails with "read-only mount: <newpath>".
func (r *FS) Link(_ context.Context, _, newpath string) error {
	return vfs.ReadOnly(vfs.Clean(newpath))
}

var _ vfs.NodeMaker = (*FS)(nil)

// Mknod fails with "read-only mount: <path>".
func (r *FS) Mknod(_ context.Context, path string, _ fs.FileMode, _ uint64) error {
	return vfs.ReadOnly(vfs.Clean(path))
}
