package local

import (
	"context"
	"errors"
	"io"
	"os"

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
