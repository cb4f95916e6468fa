package index

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

// Symlink forwards to the wrapped tree; a link holds no text of its own
// to index (the next Sync indexes a link to a file as the file).
func (f *FS) Symlink(ctx context.Context, target, path string) error {
	return vfs.Symlink(ctx, f.inner, target, path)
}

// Readlink forwards to the wrapped tree.
func (f *FS) Readlink(ctx context.Context, path string) (string, error) {
	return vfs.Readlink(ctx, f.inner, path)
}

// SetMode forwards to the wrapped tree: no text changes.
func (f *FS) SetMode(ctx context.Context, path string, mode fs.FileMode) error {
	return vfs.SetMode(ctx, f.inner, path, mode)
}

// SetModTime forwards to the wrapped tree: no text changes.
func (f *FS) SetModTime(ctx context.Context, path string, mtime time.Time) error {
	return vfs.SetModTime(ctx, f.inner, path, mtime)
}

// SetLinkModTime forwards to the wrapped tree: no text changes.
func (f *FS) SetLinkModTime(ctx context.Context, path string, mtime time.Time) error {
	return vfs.SetLinkModTime(ctx, f.inner, path, mtime)
}

var (
	_ vfs.OwnerSetter     = (*FS)(nil)
	_ vfs.LinkOwnerSetter = (*FS)(nil)
)

// SetOwner forwards to the wrapped tree: no text changes.
func (f *FS) SetOwner(ctx context.Context, path string, uid, gid int) error {
	return vfs.SetOwner(ctx, f.inner, path, uid, gid)
}

// SetLinkOwner forwards to the wrapped tree: no text changes.
func (f *FS) SetLinkOwner(ctx context.Context, path string, uid, gid int) error {
	return vfs.SetLinkOwner(ctx, f.inner, path, uid, gid)
}
