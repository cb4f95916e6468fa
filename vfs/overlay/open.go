package overlay

import (
	"context"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.FileOpener = (*FS)(nil)

// OpenFile opens the file at path in the first layer that has it, through
// the layer's FileOpener or its fallback.
func (o *FS) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	var r vfs.FileReader
	err := o.first(ctx, vfs.Clean(path), func(l vfs.FileSystem, p string) error {
		var err error
		r, err = vfs.OpenFile(ctx, l, p)
		return err
	})
	return r, err
}
