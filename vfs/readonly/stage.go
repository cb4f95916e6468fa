package readonly

import (
	"context"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.FileOpener = (*FS)(nil)
	_ vfs.Stager     = (*FS)(nil)
)

// OpenFile opens the file at path through the tree's FileOpener, or its
// fallback.
func (r *FS) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	return vfs.OpenFile(ctx, r.fsys, path)
}

// Stage fails with "read-only mount: <path>": nothing can be staged for a
// tree that cannot be written.
func (r *FS) Stage(_ context.Context, path string, _ bool) (vfs.StagedFile, error) {
	return nil, vfs.ReadOnly(vfs.Clean(path))
}
