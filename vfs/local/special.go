package local

import (
	"context"
	"io/fs"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.NodeMaker  = (*FS)(nil)
	_ vfs.HostLister = (*FS)(nil)
)

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

// ListHost returns every entry directly in the directory at path
// (vfs.HostLister) from one read of the directory: its inode number and,
// for a FIFO, a socket or a device, its type (as the directory gives it;
// a filesystem that gives none is asked per entry), in name order.
func (fsys *FS) ListHost(ctx context.Context, path string) ([]vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, ok, err := fsys.openTree(p)
	if err != nil || !ok {
		return nil, err
	}
	defer d.close()
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return nil, otherError(p, err)
	}
	dev := uint64(st.Dev)
	var out []vfs.FileInfo
	err = readDirents(d.fd, func(name string, typ byte, ino uint64) {
		if strings.HasPrefix(name, tempPrefix) {
			return // a write in flight
		}
		var sp fs.FileMode
		switch typ {
		case unix.DT_FIFO:
			sp = fs.ModeNamedPipe
		case unix.DT_SOCK:
			sp = fs.ModeSocket
		case unix.DT_BLK:
			sp = fs.ModeDevice
		case unix.DT_CHR:
			sp = fs.ModeDevice | fs.ModeCharDevice
		case unix.DT_UNKNOWN:
			var st unix.Stat_t
			if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				sp = specialOf(st.Mode)
			}
		}
		out = append(out, vfs.FileInfo{Path: vfs.Join(p, name), Kind: vfs.KindMissing, Special: sp, Dev: dev, Ino: ino})
	})
	if err != nil {
		return nil, otherError(p, err)
	}
	slices.SortFunc(out, func(a, b vfs.FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
