package vfs

import (
	"context"
	"errors"
	"io/fs"
)

// NodeMaker is the optional capability of making special files (mknod(2),
// mkfifo(3), a socket's bind(2)) in a tree that keeps them (a host
// directory under vfs/local), so make's jobserver, daemons and tar find
// them where they made them. The contract's verbs do not see them: Stat
// reports one with KindMissing and FileInfo.Special set, List, the walks
// and the index leave them out, and Read never opens one (a FIFO would
// block).
type NodeMaker interface {
	// Mknod makes the node at path (its parent must exist) of the type
	// in mode's type bits (fs.ModeNamedPipe, fs.ModeSocket, fs.ModeDevice,
	// fs.ModeDevice|fs.ModeCharDevice; none: an empty regular file) with
	// its permission bits, dev the device number of a device. Anything at
	// path fails with cause syscall.EEXIST; a type the tree does not make
	// with cause syscall.EPERM.
	Mknod(ctx context.Context, path string, mode fs.FileMode, dev uint64) error
}

// Mknod makes a special file through fsys's NodeMaker, or answers
// errors.ErrUnsupported when fsys has none.
func Mknod(ctx context.Context, fsys FileSystem, path string, mode fs.FileMode, dev uint64) error {
	if m, ok := fsys.(NodeMaker); ok {
		return m.Mknod(ctx, path, mode, dev)
	}
	return errors.ErrUnsupported
}
