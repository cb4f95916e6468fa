package vfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"sync"
)

// FileReader is a file opened for ranged reads. ReadAt has io.ReaderAt
// semantics (fewer bytes only with an error, io.EOF at the end of the
// file) and may be called from several goroutines at once; Close releases
// what the reader holds, after which ReadAt fails.
type FileReader interface {
	io.ReaderAt
	io.Closer
	// Size is the size of the file when it was opened.
	Size() int64
}

// FileOpener is the optional capability of opening a file once for many
// ranged reads (what a FUSE mount needs to serve a large file without
// resolving its path on every read).
type FileOpener interface {
	// OpenFile opens the file at path. It fails as Read does: "not found"
	// for a missing file, "is a directory" for a directory. The reader
	// sees the file as it was when opened where the tree can hold it so
	// (an open descriptor on the host disk); a later Write of the path
	// does not change what it reads.
	OpenFile(ctx context.Context, path string) (FileReader, error)
}

// OpenFile opens the file at path through fsys's FileOpener. A tree
// without one gets a reader that checks the file with Stat and then reads
// each range with [ReadAt] when fsys is a [RangeReader] (so it sees later
// writes of the path), or else reads the file whole once and serves the
// ranges from that copy. The fallback reader reads with ctx.
func OpenFile(ctx context.Context, fsys FileSystem, path string) (FileReader, error) {
	if fo, ok := fsys.(FileOpener); ok {
		return fo.OpenFile(ctx, path)
	}
	p := Clean(path)
	if _, ok := fsys.(RangeReader); ok {
		info, err := fsys.Stat(ctx, p)
		if err != nil {
			return nil, err
		}
		switch info.Kind {
		case KindMissing:
			return nil, NotFound(p)
		case KindDir:
			return nil, IsDir(p)
		}
		return &rangeFile{ctx: ctx, fsys: fsys, path: p, size: info.Size}, nil
	}
	data, err := fsys.Read(ctx, p)
	if err != nil {
		return nil, err
	}
	return &memFile{path: p, r: bytes.NewReader(data)}, nil
}

// rangeFile is OpenFile's fallback over a RangeReader.
type rangeFile struct {
	ctx    context.Context
	fsys   FileSystem
	path   string
	size   int64
	mu     sync.RWMutex
	closed bool
}

func (f *rangeFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return 0, NewError(KindOther, f.path, fs.ErrClosed)
	}
	return ReadAt(f.ctx, f.fsys, f.path, p, off)
}

func (f *rangeFile) Size() int64 { return f.size }

func (f *rangeFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// memFile is OpenFile's fallback over a whole Read.
type memFile struct {
	path string
	mu   sync.RWMutex
	r    *bytes.Reader // nil once closed
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.r == nil {
		return 0, NewError(KindOther, f.path, fs.ErrClosed)
	}
	if off < 0 {
		return 0, NewError(KindOther, f.path, errors.New("negative offset"))
	}
	return f.r.ReadAt(p, off)
}

func (f *memFile) Size() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.r == nil {
		return 0
	}
	return f.r.Size()
}

func (f *memFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.r = nil
	return nil
}
