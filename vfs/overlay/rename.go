package overlay

import (
	"context"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.Renamer = (*FS)(nil)

// Rename fails: an overlay is read-only (so vfs.Rename does not fall back
// to copy and delete either).
func (o *FS) Rename(_ context.Context, from, _ string) error {
	return vfs.ReadOnly(vfs.Clean(from))
}
