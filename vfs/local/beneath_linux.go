//go:build linux

package local

import (
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
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
	if fsys.rootDir == nil || noOpenat2.Load() {
		return nil, false, nil
	}
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	for {
		fd, err := fsys.openat2(name, &how)
		switch err {
		case nil:
			return os.NewFile(uintptr(fd), name), true, nil
		case unix.EINTR:
			continue
		case unix.ENOSYS:
			noOpenat2.Store(true)
			return nil, false, nil
		case unix.EXDEV, unix.EAGAIN, unix.EPERM, unix.ENAMETOOLONG:
			return nil, false, nil
		}
		return nil, true, &os.PathError{Op: "openat2", Path: name, Err: err}
	}
}

// oPath opens a name for its metadata only.
const oPath = unix.O_PATH

// oNoFollow opens a link itself.
const oNoFollow = unix.O_NOFOLLOW

// keepAtime is the utimensat time that leaves the access time as it is.
func keepAtime() unix.Timespec { return unix.Timespec{Nsec: unix.UTIME_OMIT} }

// openat2 runs openat2 relative to the root directory, holding it open
// for the call (a Close racing a verb cannot free the descriptor number
// for reuse under it).
func (fsys *FS) openat2(name string, how *unix.OpenHow) (fd int, err error) {
	rc, err := fsys.rootDir.SyscallConn()
	if err != nil {
		return -1, err
	}
	if cerr := rc.Control(func(root uintptr) {
		fd, err = unix.Openat2(int(root), name, how)
	}); cerr != nil {
		return -1, unix.EBADF // closed
	}
	return fd, err
}
