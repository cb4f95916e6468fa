package union

import (
	"github.com/julyfs/julyfs/vfs"
)

// notifyingFS is the union of mounts that are all vfs.Notifiers.
type notifyingFS struct{ *FS }

var _ vfs.Notifier = notifyingFS{}

// Watch calls fn for each change a mount reports, with the path in the
// union's namespace. Changes to paths the mount does not serve in the
// union (shadowed by a deeper mount) are not reported.
func (u notifyingFS) Watch(fn func(vfs.Change)) (cancel func()) {
	cancels := make([]func(), 0, len(u.mounts))
	for _, m := range u.mounts {
		cancels = append(cancels, m.fs.(vfs.Notifier).Watch(func(c vfs.Change) {
			c.Path = m.up(vfs.Clean(c.Path))
			if m.owns(c.Path) {
				fn(c)
			}
		}))
	}
	return func() {
		for _, c := range cancels {
			c()
		}
	}
}
