package vfs

import (
	"context"
	"errors"
)

// The contract has no directory verbs: a directory exists while something
// is under it. A tree whose directories exist on their own (a host
// directory under vfs/local) can offer these two capabilities, so a mount
// can make and remove directories the way a person at a shell expects
// (mkdir, then look from elsewhere; rmdir, and it is gone). A tree that
// cannot, or a part of a union that cannot, answers errors.ErrUnsupported.

// DirMaker is the optional capability of making an empty directory.
type DirMaker interface {
	// MakeDir makes the directory at path and any missing parents. A
	// directory already there is success; a file at path or at a parent
	// fails (its cause is syscall.EEXIST or ENOTDIR). A part of the tree
	// without directories of its own answers errors.ErrUnsupported.
	MakeDir(ctx context.Context, path string) error
}

// DirRemover is the optional capability of removing an empty directory.
type DirRemover interface {
	// RemoveDir removes the empty directory at path. A missing path fails
	// with not found; a file, a directory with anything in it, or the
	// root fail (cause ENOTDIR, ENOTEMPTY, EBUSY). A part of the tree
	// without directories of its own answers errors.ErrUnsupported.
	RemoveDir(ctx context.Context, path string) error
}

// MakeDir makes a directory through fsys's DirMaker, or answers
// errors.ErrUnsupported when fsys has none.
func MakeDir(ctx context.Context, fsys FileSystem, path string) error {
	if dm, ok := fsys.(DirMaker); ok {
		return dm.MakeDir(ctx, path)
	}
	return errors.ErrUnsupported
}

// RemoveDir removes an empty directory through fsys's DirRemover, or
// answers errors.ErrUnsupported when fsys has none.
func RemoveDir(ctx context.Context, fsys FileSystem, path string) error {
	if dr, ok := fsys.(DirRemover); ok {
		return dr.RemoveDir(ctx, path)
	}
	return errors.ErrUnsupported
}
