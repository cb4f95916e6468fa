package vfs

import (
	"context"
	"errors"
	"io/fs"
	"time"
)

// The contract has no links, modes or times to set. A tree that keeps
// them (a host directory under vfs/local, which real tools such as git
// expect to behave like the directory itself) can offer these
// capabilities, so a mount can serve ln -s, readlink, chmod and touch and
// have them persist. A tree, or a part of a union, that cannot answers
// errors.ErrUnsupported (a read-only one, read-only mount), never a fake
// success.

// Symlinker is the optional capability of making symbolic links and
// reading their targets. A link may name any target, inside the tree or
// not; following it (for Read, Stat, Write and the walks) stays the
// tree's business and never leaves its root.
type Symlinker interface {
	// Symlink makes a link at path whose target is target, stored as
	// given. Missing parent directories are made; anything already at
	// path fails (cause syscall.EEXIST), as does an empty target (EINVAL).
	Symlink(ctx context.Context, target, path string) error
	// Readlink returns the target of the link at path (the link itself,
	// not followed; links in its parent directories are). A missing path
	// fails with not found; a path that is not a link fails with cause
	// syscall.EINVAL.
	Readlink(ctx context.Context, path string) (string, error)
}

// ModeSetter is the optional capability of setting a file's or a
// directory's permission bits.
type ModeSetter interface {
	// SetMode sets the permission bits (fs.ModePerm) and the setuid,
	// setgid and sticky bits of the file or directory at path (links
	// followed inside the tree) from mode; other bits of mode are
	// ignored. A missing path fails with not found.
	SetMode(ctx context.Context, path string, mode fs.FileMode) error
}

// The POSIX bits of the setuid, setgid and sticky flags in a mode
// (S_ISUID, S_ISGID, S_ISVTX), the same on every Unix.
const (
	modeSetuid = 0o4000
	modeSetgid = 0o2000
	modeSticky = 0o1000
)

// ModeBits is what a ModeSetter sets of mode as POSIX mode bits
// (chmod(2)'s): the permission bits and the setuid, setgid and sticky
// bits; FileModeOf is its inverse. Trees on a host disk and FUSE mounts
// share them.
func ModeBits(mode fs.FileMode) uint32 {
	bits := uint32(mode.Perm())
	if mode&fs.ModeSetuid != 0 {
		bits |= modeSetuid
	}
	if mode&fs.ModeSetgid != 0 {
		bits |= modeSetgid
	}
	if mode&fs.ModeSticky != 0 {
		bits |= modeSticky
	}
	return bits
}

// FileModeOf is the fs.FileMode of POSIX mode bits (the permission,
// setuid, setgid and sticky bits; the file type and other bits are
// ignored): the inverse of ModeBits.
func FileModeOf(bits uint32) fs.FileMode {
	mode := fs.FileMode(bits & 0o777)
	if bits&modeSetuid != 0 {
		mode |= fs.ModeSetuid
	}
	if bits&modeSetgid != 0 {
		mode |= fs.ModeSetgid
	}
	if bits&modeSticky != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// TimeSetter is the optional capability of setting a file's or a
// directory's modification time.
type TimeSetter interface {
	// SetModTime sets the modification time of the file or directory at
	// path (links followed inside the tree); Stat reports it after. A
	// missing path fails with not found.
	SetModTime(ctx context.Context, path string, mtime time.Time) error
}

// Symlink makes a link through fsys's Symlinker, or answers
// errors.ErrUnsupported when fsys has none.
func Symlink(ctx context.Context, fsys FileSystem, target, path string) error {
	if s, ok := fsys.(Symlinker); ok {
		return s.Symlink(ctx, target, path)
	}
	return errors.ErrUnsupported
}

// Readlink reads a link's target through fsys's Symlinker, or answers
// errors.ErrUnsupported when fsys has none.
func Readlink(ctx context.Context, fsys FileSystem, path string) (string, error) {
	if s, ok := fsys.(Symlinker); ok {
		return s.Readlink(ctx, path)
	}
	return "", errors.ErrUnsupported
}

// SetMode sets permission bits through fsys's ModeSetter, or answers
// errors.ErrUnsupported when fsys has none.
func SetMode(ctx context.Context, fsys FileSystem, path string, mode fs.FileMode) error {
	if m, ok := fsys.(ModeSetter); ok {
		return m.SetMode(ctx, path, mode)
	}
	return errors.ErrUnsupported
}

// SetModTime sets a modification time through fsys's TimeSetter, or
// answers errors.ErrUnsupported when fsys has none.
func SetModTime(ctx context.Context, fsys FileSystem, path string, mtime time.Time) error {
	if t, ok := fsys.(TimeSetter); ok {
		return t.SetModTime(ctx, path, mtime)
	}
	return errors.ErrUnsupported
}

// LinkTimeSetter is the optional capability of setting a link's own
// modification time (lutimes), which cp -a and tar preserve.
type LinkTimeSetter interface {
	// SetLinkModTime sets the modification time of the link at path
	// itself, not followed (links in its parent directories are). A
	// missing path fails with not found; a path that is not a link
	// fails with cause syscall.EINVAL.
	SetLinkModTime(ctx context.Context, path string, mtime time.Time) error
}

// SetLinkModTime sets a link's own modification time through fsys's
// LinkTimeSetter, or answers errors.ErrUnsupported when fsys has none.
func SetLinkModTime(ctx context.Context, fsys FileSystem, path string, mtime time.Time) error {
	if t, ok := fsys.(LinkTimeSetter); ok {
		return t.SetLinkModTime(ctx, path, mtime)
	}
	return errors.ErrUnsupported
}
