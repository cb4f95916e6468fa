package fusemount

import (
	"context"
	"errors"
	"log"
	"syscall"

	"github.com/julyfs/julyfs/vfs"
)

// toErrno converts an error from the tree into the errno the kernel sees.
// It is the only place where vfs error kinds become errnos:
//
//	nil                        0
//	not found                  ENOENT
//	read-only mount            EROFS
//	no mount for path          EROFS (a write outside every mount of a union)
//	is a directory             EISDIR
//	conflict                   EEXIST (the mount only writes conditionally to create exclusively)
//	delete not supported       EPERM
//	invalid pattern, edit      EINVAL
//	cancelled context          EINTR
//	anything else              the errno in the cause chain when there is one
//	                           (ENOSPC, ENOTDIR, ...), else EIO
//
// The last row also writes one log line naming op, path and cause, so a
// failing backend is visible while the daemon keeps serving.
func toErrno(logger *log.Logger, op, path string, err error) syscall.Errno {
	if err == nil {
		return 0
	}
	switch vfs.KindOf(err) {
	case vfs.KindNotFound:
		return syscall.ENOENT
	case vfs.KindReadOnly, vfs.KindNoMount:
		return syscall.EROFS
	case vfs.KindIsDir:
		return syscall.EISDIR
	case vfs.KindConflict:
		return syscall.EEXIST
	case vfs.KindDeleteNotSupported:
		return syscall.EPERM
	case vfs.KindInvalidGrepPattern, vfs.KindInvalidGlobPattern, vfs.KindEdit:
		return syscall.EINVAL
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return syscall.EINTR
	}
	errno := syscall.EIO
	var cause syscall.Errno
	if errors.As(err, &cause) && cause != 0 {
		errno = cause
	}
	if logger != nil {
		logger.Printf("%s %s: %v (%v)", op, path, err, errno)
	}
	return errno
}
