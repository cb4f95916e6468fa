package vfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math"
	"sync"
)

// StagedFile is the next version of a file, written in private and then
// published whole: until Commit, readers of the tree (Read, ReadAt,
// OpenFile, Grep) see the file as it was; after it, the new contents; never
// a part of them. It is what a FUSE mount writes into between open and
// close. Its methods may be called from several goroutines at once.
type StagedFile interface {
	// ReadAt reads the staged contents, with io.ReaderAt semantics.
	ReadAt(p []byte, off int64) (int, error)
	// WriteAt writes p at off, growing the file (with zeros between its
	// end and off) as needed.
	WriteAt(p []byte, off int64) (int, error)
	// Truncate sets the staged size, cutting or zero-filling.
	Truncate(size int64) error
	// Size is the staged size.
	Size() int64
	// Commit replaces the file at the staged path with the staged
	// contents, atomically where the tree can (as Write), and ends the
	// staging. It fails as Write does; after a failure the staged data is
	// still there and Commit may be retried, or the staging aborted.
	Commit(ctx context.Context) error
	// Abort drops the staged contents and ends the staging; the tree is
	// unchanged. Aborting an ended staging is a no-op.
	Abort() error
}

// Stager is the optional capability of staged writes: a tree that can
// hold the next version of a file outside memory (the host disk: a
// temporary file next to the target) and publish it atomically.
type Stager interface {
	// Stage opens a staging for the file at path. With keep it starts
	// with the file's current contents (empty when there is no file),
	// else empty. It fails for the root or a directory ("is a directory")
	// and for a tree that cannot be written ("read-only mount").
	Stage(ctx context.Context, path string, keep bool) (StagedFile, error)
}

// Stage opens a staging for the file at path through fsys's Stager. A tree
// without one gets an in-memory staging: the current contents read whole
// with Read when keep is set, a buffer that grows geometrically, and a
// Commit that is one Write of the whole buffer. Operations on a staging
// that was committed or aborted fail with fs.ErrClosed as the cause.
func Stage(ctx context.Context, fsys FileSystem, path string, keep bool) (StagedFile, error) {
	if st, ok := fsys.(Stager); ok {
		return st.Stage(ctx, path, keep)
	}
	p := Clean(path)
	if p == "/" {
		return nil, IsDir(p)
	}
	s := &memStage{fsys: fsys, path: p}
	if keep {
		data, err := fsys.Read(ctx, p)
		switch {
		case KindOf(err) == KindNotFound:
		case err != nil:
			return nil, err
		default:
			s.buf = data
		}
		return s, nil
	}
	info, err := fsys.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if info.Kind == KindDir {
		return nil, IsDir(p)
	}
	return s, nil
}

// memStage is Stage's in-memory fallback.
type memStage struct {
	fsys FileSystem
	path string
	mu   sync.RWMutex
	buf  []byte
	done bool
}

func (s *memStage) closedError() error { return NewError(KindOther, s.path, fs.ErrClosed) }

func (s *memStage) ReadAt(p []byte, off int64) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch {
	case s.done:
		return 0, s.closedError()
	case off < 0:
		return 0, NewError(KindOther, s.path, errors.New("negative offset"))
	case off >= int64(len(s.buf)):
		return 0, io.EOF
	}
	n := copy(p, s.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// resize sets the length of s.buf to n, zero-filling growth; capacity
// grows by doubling, so a file written front to back is copied O(log n)
// times and each byte is zeroed at most once per growth. Callers hold
// s.mu for writing.
func (s *memStage) resize(n int) {
	old := len(s.buf)
	switch {
	case n <= old:
		s.buf = s.buf[:n]
		return
	case n > cap(s.buf):
		grown := make([]byte, old, max(n, 2*cap(s.buf), 512))
		copy(grown, s.buf)
		s.buf = grown
	}
	s.buf = s.buf[:n]
	clear(s.buf[old:])
}

func (s *memStage) WriteAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return 0, s.closedError()
	}
	end := off + int64(len(p))
	if off < 0 || end < off || end > math.MaxInt {
		return 0, NewError(KindOther, s.path, errors.New("offset out of range"))
	}
	if int(end) > len(s.buf) {
		if off > int64(len(s.buf)) {
			s.resize(int(off))
		}
		// The new tail is written over at once: extend without zeroing it.
		if int(end) > cap(s.buf) {
			grown := make([]byte, len(s.buf), max(int(end), 2*cap(s.buf), 512))
			copy(grown, s.buf)
			s.buf = grown
		}
		s.buf = s.buf[:end]
	}
	return copy(s.buf[off:], p), nil
}

func (s *memStage) Truncate(size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.closedError()
	}
	if size < 0 || size > math.MaxInt {
		return NewError(KindOther, s.path, errors.New("size out of range"))
	}
	s.resize(int(size))
	return nil
}

func (s *memStage) Size() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int64(len(s.buf))
}

func (s *memStage) Commit(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.closedError()
	}
	if err := s.fsys.Write(ctx, s.path, s.buf); err != nil {
		return err
	}
	s.buf, s.done = nil, true
	return nil
}

func (s *memStage) Abort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf, s.done = nil, true
	return nil
}
