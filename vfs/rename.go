package vfs

import (
	"context"
	"errors"
	"syscall"
)

// Renamer is the optional capability of moving a file or a directory to
// another path of the same tree in one step.
type Renamer interface {
	// Rename moves the file or directory at from to to, replacing a file
	// (or an empty directory) at to, atomically where the backend can: a
	// reader sees the old or the new name, never a partial file. A missing
	// from fails with not found; a read-only tree fails with read-only; a
	// move the tree cannot make in one step (across the mounts of a union,
	// say) fails with a cause of syscall.EXDEV so callers can fall back to
	// copy and delete ([Rename] does).
	Rename(ctx context.Context, from, to string) error
}

// Rename moves the file at from to to through fsys's Renamer. Where fsys
// has none, or its Renamer answers syscall.EXDEV, a file is copied and the
// original deleted (not atomic; a directory is not moved and the error is
// returned).
func Rename(ctx context.Context, fsys FileSystem, from, to string) error {
	from, to = Clean(from), Clean(to)
	if r, ok := fsys.(Renamer); ok {
		err := r.Rename(ctx, from, to)
		if err == nil || !errors.Is(err, syscall.EXDEV) {
			return err
		}
	}
	info, err := fsys.Stat(ctx, from)
	if err != nil {
		return err
	}
	switch info.Kind {
	case KindMissing:
		return NewError(KindNotFound, from, nil)
	case KindDir:
		return NewError(KindIsDir, from, syscall.EXDEV)
	}
	if from == to {
		return nil // a copy onto itself, then a delete, would lose the file
	}
	data, err := fsys.Read(ctx, from)
	if err != nil {
		return err
	}
	if err := fsys.Write(ctx, to, data); err != nil {
		return err
	}
	return fsys.Delete(ctx, from)
}
