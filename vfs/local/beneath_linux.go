//go:build linux

package local

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// Exact-path opens take one openat2 with RESOLVE_BENEATH where the kernel
// has it (Linux 5.6+): the kernel resolves the whole name, following links
// that stay beneath the root and refusing "..", absolute targets and magic
// links (EXDEV), atomically. os.Root walks the name a component at a time
// instead (an openat and a close per directory), which made a lookup of
// src/cmd/compile/internal/ssa/x.go eleven system calls.

// noOpenat2 is set once the kernel answers ENOSYS: os.Root does it all.
var noOpenat2 atomic.Bool

// openRootFD opens the root directory for openBeneath, through the os.Root
// so both name the same directory (nil when it cannot: openBeneath then
// always defers to os.Root).
func openRootFD(root *os.Root) *os.File {
	f, err := root.Open(".")
	if err != nil {
		return nil
	}
	return f
}

// openBeneath opens name (relative to the root) with flags, resolved
// beneath the root by the kernel. ok is false when the caller must use
// os.Root instead: no openat2, or a refusal os.Root may judge otherwise
// (EXDEV: a link leaving the root, or an absolute target, which the tree
// resolves by hand when it stays inside; EAGAIN). Other errors are the
// answer.
func (fsys *FS) openBeneath(name string, flags int) (f *os.File, ok bool, err error) {
	fd, ok, err := fsys.openBeneathFD(name, flags)
	if !ok || err != nil {
		return nil, ok, err
	}
	return os.NewFile(uintptr(fd), name), true, nil
}

// openBeneathFD is openBeneath answering the bare descriptor, which the
// caller closes (unix.Close). For a directory or an O_PATH descriptor used
// for a system call or two and closed, it saves what os.NewFile costs: an
// fcntl to read the flags and, for a nonblocking descriptor, a failed
// epoll_ctl, more fcntls and a cleanup registered with the runtime.
func (fsys *FS) openBeneathFD(name string, flags int) (fd int, ok bool, err error) {
	if fsys.rootDir == nil || noOpenat2.Load() {
		return -1, false, nil
	}
	fd, err = openat2Beneath(fsys.rootDir, name, flags)
	switch err {
	case nil:
		return fd, true, nil
	case unix.ENOSYS:
		noOpenat2.Store(true)
		return -1, false, nil
	case unix.EXDEV, unix.EAGAIN, unix.EPERM, unix.ENAMETOOLONG:
		return -1, false, nil
	}
	return -1, true, &os.PathError{Op: "openat2", Path: name, Err: err}
}

// createBeneath makes the file name (relative to the root) in one
// exclusive create beneath the root, with the permission bits mode (less
// the umask) and open for reading and writing: ok false when that cannot
// decide (no openat2; a link to resolve another way: an absolute one;
// any failure but the name being taken, EEXIST), and the caller goes the
// slow way, which says why.
func (fsys *FS) createBeneath(name string, mode uint32) (fd int, ok bool, err error) {
	if fsys.rootDir == nil || noOpenat2.Load() {
		return -1, false, nil
	}
	fd, err = openat2BeneathMode(fsys.rootDir, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, mode)
	switch err {
	case nil:
		return fd, true, nil
	case unix.EEXIST:
		return -1, true, err
	case unix.ENOSYS:
		noOpenat2.Store(true)
	}
	return -1, false, nil
}

// OpenBeneath opens path beneath dir, a tree's [FS.BeneathDir], as the
// tree's Read, ReadAt and OpenFile first open it (the rule BeneathDir
// states), and answers the descriptor and the file's size (fstat after
// the open) only when that open succeeds on a regular file: the caller
// reads it and closes fd. For every other outcome ok is false, and only
// the tree may answer (a plugin's host asks the plugin). dir stays open
// during the open even if another goroutine closes it.
func OpenBeneath(dir *os.File, path string) (fd int, size int64, ok bool) {
	p := vfs.Clean(path)
	if p == "/" || noOpenat2.Load() {
		return -1, 0, false
	}
	fd, err := openat2Beneath(dir, p[1:], readFlags)
	if err != nil {
		return -1, 0, false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, 0, false
	}
	return fd, st.Size, true
}

// oPath opens a name for its metadata only.
const oPath = unix.O_PATH

// oNoFollow opens a link itself.
const oNoFollow = unix.O_NOFOLLOW

// keepAtime is the utimensat time that leaves the access time as it is.
func keepAtime() unix.Timespec { return unix.Timespec{Nsec: unix.UTIME_OMIT} }

// openat2Beneath opens name beneath the directory dir with flags (and
// O_CLOEXEC), resolved as every exact-path open of the tree is
// (RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS), holding dir open for the call
// (a Close racing a verb cannot free the descriptor number for reuse
// under it: EBADF instead).
func openat2Beneath(dir *os.File, name string, flags int) (fd int, err error) {
	return openat2BeneathMode(dir, name, flags, 0)
}

// openat2BeneathMode is openat2Beneath with the permission bits of a file
// O_CREAT makes.
func openat2BeneathMode(dir *os.File, name string, flags int, mode uint32) (fd int, err error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Mode:    uint64(mode),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	rc, err := dir.SyscallConn()
	if err != nil {
		return -1, err
	}
	if cerr := rc.Control(func(d uintptr) {
		for {
			fd, err = unix.Openat2(int(d), name, &how)
			if err != unix.EINTR {
				return
			}
		}
	}); cerr != nil {
		return -1, unix.EBADF // closed
	}
	return fd, err
}

// renameNoReplace renames from over nothing but a free name to in the
// directory dirfd (EEXIST when to is taken).
func renameNoReplace(dirfd int, from, to string) error {
	return unix.Renameat2(dirfd, from, dirfd, to, unix.RENAME_NOREPLACE)
}
