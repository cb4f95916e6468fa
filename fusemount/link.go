package fusemount

import (
	"context"
	"errors"
	"syscall"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"

	"github.com/julyfs/julyfs/vfs"
)

// Link makes name in directory n a second name of the file target
// through the tree (vfs.Linker: a confined linkat on local:); EXDEV
// across the mounts of a union, ENOTSUP where the tree has no hard links,
// EROFS on a read-only mount. Writes staged on target are committed
// first, so the new name shows them. On a tree with host inode numbers
// (local:) the new name is the target's node, with its number (see
// child); elsewhere a node of its own. Every name shows the host's
// Nlink: the kernel is made to drop the attributes of every file
// with several names at each link and unlink of one of them, so the
// count shows at once through every name.
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.m.opts.ReadOnly {
		return nil, syscall.EROFS
	}
	tn, ok := target.(*node)
	if !ok {
		return nil, syscall.EXDEV
	}
	from, stale := tn.livePath()
	if stale != 0 {
		return nil, stale
	}
	dir, stale := n.livePath()
	if stale != 0 {
		return nil, stale
	}
	p := vfs.Join(dir, name)
	if errno := tn.commit(); errno != 0 {
		return nil, errno
	}
	switch err := vfs.Link(n.m.ctx, n.m.fsys, from, p); {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, syscall.ENOTSUP
	case err != nil:
		return nil, n.m.errno("link", p, err)
	}
	tn.changes.Add(1)
	// The other names' Nlink and ctime moved: dropped before the reply
	// (the kernel locks no inode for that), or a stat right after the
	// link shows the old count.
	n.m.dropLinkedAttrs()
	tn.NotifyContent(0, 0)
	gen := n.m.hostGen.Load()
	fi, err := n.m.stat(p)
	if err != nil {
		return nil, n.m.errno("link", p, err)
	}
	return n.lookedUp(ctx, name, p, fi, gen, out), 0
}
