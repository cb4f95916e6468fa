package overlay

import (
	"context"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.Stager   = (*FS)(nil)
	_ vfs.Notifier = notifyingFS{}
)

// Stage fails with "read-only mount: <path>": nothing can be staged for a
// tree that cannot be written.
func (o *FS) Stage(_ context.Context, path string, _ bool) (vfs.StagedFile, error) {
	return nil, vfs.ReadOnly(vfs.Clean(path))
}

// notifyingFS is the overlay of layers that are all vfs.Notifiers.
type notifyingFS struct{ *FS }

// Watch calls fn for each change a layer reports, at its path, whether or
// not that layer wins there: an invalidation too many costs a FUSE mount a
// re-read, one too few would serve a stale file.
func (o notifyingFS) Watch(fn func(vfs.Change)) (cancel func()) {
	cancels := make([]func(), 0, len(o.layers))
	for _, l := range o.layers {
		cancels = append(cancels, l.(vfs.Notifier).Watch(fn))
	}
	return func() {
		for _, c := range cancels {
			c()
		}
	}
}
