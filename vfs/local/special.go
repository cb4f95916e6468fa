package local

import (
	"context"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.NodeMaker = (*FS)(nil)

// specialOf is the fs.FileMode type of a special file of POSIX mode
// bits; 0 for anything else.
func specialOf(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	}
	return 0
}

// Mknod makes a FIFO, a socket, a device node or an empty regular file at
// path on the host (vfs.NodeMaker): one mknodat(2) of a single name in
// the parent directory's handle, reached inside the root (no parent is
// made), which never follows a link at the name (EEXIST). The host
// decides who may make a device (CAP_MKNOD); a device made here opens
// nowhere through the tree, and a FUSE mount of it is nodev.
func (fsys *FS) Mknod(ctx context.Context, path string, mode fs.FileMode, dev uint64) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == "/" {
		return vfs.WriteFailed(p, unix.EEXIST)
	}
	var typ uint32
	switch mode & (fs.ModeType | fs.ModeCharDevice) {
	case fs.ModeNamedPipe:
		typ = unix.S_IFIFO
	case fs.ModeSocket:
		typ = unix.S_IFSOCK
	case fs.ModeDevice:
		typ = unix.S_IFBLK
	case fs.ModeDevice | fs.ModeCharDevice:
		typ = unix.S_IFCHR
	case 0:
		typ = unix.S_IFREG
	default:
		return vfs.WriteFailed(p, unix.EPERM)
	}
	w, err := fsys.openWriteDir(vfs.Parent(p), false)
	if err != nil {
		if isMissing(err) {
			return vfs.NotFound(p)
		}
		return writeDirError(p, err)
	}
	defer w.close()
	if err := unix.Mknodat(w.fd, vfs.Base(p), typ|vfs.ModeBits(mode), int(dev)); err != nil {
		return vfs.WriteFailed(p, err)
	}
	if typ == unix.S_IFREG {
		fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	}
	return nil
}
