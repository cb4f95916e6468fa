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

// HostLister is the optional capability of listing a directory as the
// host has it (a tree of host files: vfs/local): every entry with the
// host's inode number and, for a special file (what NodeMaker makes,
// which List leaves out), its type. A FUSE mount lists special files
// with it, as ls does on disk (and rm -r finds them before it removes
// their directory), and gives readdir the inode numbers stat shows.
type HostLister interface {
	// ListHost returns the entries directly in the directory at path,
	// in name order, each with Path, Dev and Ino (the entry's own: a
	// link's, not its target's) and, for a FIFO, a socket or a device,
	// Special (Kind is KindMissing for every entry: List says the
	// others' kinds); none for a directory that is missing.
	ListHost(ctx context.Context, path string) ([]FileInfo, error)
}

// ListHost lists a directory through fsys's HostLister, or answers
// errors.ErrUnsupported when fsys has none.
func ListHost(ctx context.Context, fsys FileSystem, path string) ([]FileInfo, error) {
	if l, ok := fsys.(HostLister); ok {
		return l.ListHost(ctx, path)
	}
	return nil, errors.ErrUnsupported
}
