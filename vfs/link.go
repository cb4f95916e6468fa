package vfs

import (
	"context"
	"errors"
)

// Linker is the optional capability of hard links (link(2)): a second
// name for a file, in a tree whose files are host inodes (vfs/local).
// The contract's verbs stay path-based: a write through one name is seen
// through the other because the host says so, and a rewrite that stages
// a new file and renames it over one name (Write, a staging's Commit)
// gives that name a new file and leaves the other name the old one, as an
// editor's atomic save does on disk. FileInfo.Nlink counts the names.
type Linker interface {
	// Link gives the file at oldpath (a regular file or a link, the last
	// name not followed; links in its parent directories are, inside the
	// tree) the new name newpath, whose parent directory must exist.
	// A missing oldpath fails with not found; a directory with cause
	// syscall.EPERM; anything at newpath with cause syscall.EEXIST; two
	// paths the tree cannot link (two mounts of a union) with cause
	// syscall.EXDEV.
	Link(ctx context.Context, oldpath, newpath string) error
}

// Link gives a file a second name through fsys's Linker, or answers
// errors.ErrUnsupported when fsys has none.
func Link(ctx context.Context, fsys FileSystem, oldpath, newpath string) error {
	if l, ok := fsys.(Linker); ok {
		return l.Link(ctx, oldpath, newpath)
	}
	return errors.ErrUnsupported
}
