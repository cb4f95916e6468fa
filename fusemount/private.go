package fusemount

import (
	"context"
	"errors"
	"io"
	"sync"
)

// privateStage is the staging of a file whose name is gone (unlinked, or
// renamed over, while open) and that had no staging yet: a buffer in
// memory that its open handles go on reading and writing, as an unlinked
// file on disk, and that is never committed (commitLocked skips deleted
// nodes). Sizes are bounded by the write path (Options.MaxFileSize).
type privateStage struct {
	mu  sync.RWMutex
	buf []byte
}

// errNoName is what committing a private staging answers.
var errNoName = errors.New("the file's name is gone: its writes are never committed")

func (s *privateStage) ReadAt(p []byte, off int64) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(s.buf)) {
		return 0, io.EOF
	}
	n := copy(p, s.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (s *privateStage) WriteAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if end := off + int64(len(p)); end > int64(len(s.buf)) {
		s.resize(end)
	}
	return copy(s.buf[off:], p), nil
}

// resize sets the buffer's length to n, zero-filling growth. Callers hold
// s.mu for writing.
func (s *privateStage) resize(n int64) {
	old := int64(len(s.buf))
	if n <= old {
		s.buf = s.buf[:n]
		return
	}
	if n > int64(cap(s.buf)) {
		grown := make([]byte, old, max(n, 2*int64(cap(s.buf)), 512))
		copy(grown, s.buf)
		s.buf = grown
	}
	s.buf = s.buf[:n]
	clear(s.buf[old:])
}

func (s *privateStage) Truncate(size int64) error {
	if size < 0 {
		return errors.New("negative size")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resize(size)
	return nil
}

func (s *privateStage) Size() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int64(len(s.buf))
}

func (s *privateStage) Commit(context.Context) error { return errNoName }

func (s *privateStage) Abort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = nil
	return nil
}
