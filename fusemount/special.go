package fusemount

import (
	"context"
	"errors"
	iofs "io/fs"
	"syscall"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"

	"github.com/julyfs/julyfs/vfs"
)

var _ fs.NodeMknoder = (*node)(nil)

// Mknod makes a FIFO, a socket, a device node or an empty regular file
// named name in directory n through the tree (vfs.NodeMaker: a confined
// mknodat on local:), with the caller's mode less its umask (the kernel
// applies it); ENOTSUP where the tree keeps no special files, EROFS on a
// read-only mount. The kernel lets only a privileged caller make a
// device, and the mount is nodev: a device node shows, never opens.
func (n *node) Mknod(ctx context.Context, name string, mode, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.m.opts.ReadOnly {
		return nil, syscall.EROFS
	}
	dir, stale := n.livePath()
	if stale != 0 {
		return nil, stale
	}
	p := vfs.Join(dir, name)
	fm := vfs.FileModeOf(mode)
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		fm |= iofs.ModeNamedPipe
	case syscall.S_IFSOCK:
		fm |= iofs.ModeSocket
	case syscall.S_IFBLK:
		fm |= iofs.ModeDevice
	case syscall.S_IFCHR:
		fm |= iofs.ModeDevice | iofs.ModeCharDevice
	case syscall.S_IFREG, 0:
	default:
		return nil, syscall.EINVAL
	}
	switch err := vfs.Mknod(n.m.ctx, n.m.fsys, p, fm, uint64(dev)); {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, syscall.ENOTSUP
	case err != nil:
		return nil, n.m.errno("mknod", p, err)
	}
	n.m.ownByCaller(ctx, p)
	gen := n.m.hostGen.Load()
	fi, err := n.m.stat(p)
	if err != nil {
		return nil, n.m.errno("mknod", p, err)
	}
	if fi.Kind == vfs.KindMissing && fi.Special == 0 {
		return nil, syscall.ENOENT
	}
	return n.lookedUp(ctx, name, p, fi, gen, out), 0
}
