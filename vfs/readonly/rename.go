package readonly

import (
	"context"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.Renamer = (*FS)(nil)

// Rename fails with "read-only mount: <from>" and never reaches the tree
// (so vfs.Rename does not fall back to copy and delete either).
func (r *FS) Rename(_ context.Context, from, _ string) error {
	return vfs.ReadOnly(vfs.Clean(from))
}
