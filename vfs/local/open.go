package local

import (
	"context"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.FileOpener     = (*FS)(nil)
	_ vfs.FileDescriptor = (*openFile)(nil)
)

// OpenFile opens the file at path (following links inside the root) for
// ranged reads on one host descriptor. The reader keeps reading the file
// it opened: a later Write of the path makes a new file (Write renames a
// new one into place), so the reader never sees a mix of versions.
func (fsys *FS) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, fi, err := fsys.open(p)
	if err != nil {
		return nil, err
	}
	return &openFile{f: f, path: p, size: fi.Size()}, nil
}

// openFile is a file opened by OpenFile.
type openFile struct {
	f    *os.File
	path string
	size int64
}

func (o *openFile) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, o.path, errors.New("negative offset"))
	}
	n, err := o.f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return n, otherError(o.path, err)
	}
	return n, err
}

func (o *openFile) Size() int64 { return o.size }

// Fd is the reader's host descriptor, open read-only on the file it opened
// (vfs.FileDescriptor).
func (o *openFile) Fd() uintptr { return o.f.Fd() }

// File is the reader's open host file, which stays the reader's (Close
// closes it): a plugin serving a local tree hands its descriptor to the
// host for large reads (plugins.OSFile).
func (o *openFile) File() *os.File { return o.f }

func (o *openFile) Close() error {
	if err := o.f.Close(); err != nil {
		return otherError(o.path, err)
	}
	return nil
}

// OpenInPlace opens the file at path (following links inside the root)
// for reading and writing on one host descriptor, for a caller that
// writes the file in place: what it writes is in the tree's file at once,
// with none of Write's and Stage's guarantees (a reader sees a write in
// progress, a crash leaves the file partly written, no compare-and-swap,
// no change reported to watchers). The caller closes the file. It is for
// a FUSE mount's opt-in in-place writes (docs/mount.md, "FUSE
// passthrough"); nothing else in julyfs writes this way.
func (fsys *FS) OpenInPlace(ctx context.Context, path string) (*os.File, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, vfs.IsDir(p)
	}
	f, err := fsys.openFile(rel(p), os.O_RDWR|syscall.O_NONBLOCK)
	if err != nil {
		if isMissing(err) {
			return nil, vfs.NotFound(p)
		}
		if errors.Is(err, syscall.EISDIR) {
			return nil, vfs.IsDir(p)
		}
		return nil, otherError(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, otherError(p, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, vfs.IsDir(p)
		}
		return nil, vfs.NewError(vfs.KindOther, p, errors.New("not a regular file"))
	}
	return f, nil
}
