package cow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/julyfs/julyfs/vfs"
)

// Stage opens a staging of the file at path (vfs.Stager): a temporary
// file in the layer's tmp directory, published on Commit as a blob and
// the file's new entry in one step, so no reader and no checkpoint ever
// sees a part of it. With keep it starts as a copy of the file's current
// contents (the layer's or the base's).
func (c *FS) Stage(ctx context.Context, path string, keep bool) (vfs.StagedFile, error) {
	p := vfs.Clean(path)
	if c.view {
		return nil, vfs.ReadOnly(p)
	}
	if p == "/" {
		return nil, vfs.IsDir(p)
	}
	info, err := c.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	if info.Kind == vfs.KindDir {
		return nil, vfs.IsDir(p)
	}
	f, err := os.CreateTemp(filepath.Join(c.dir, tmpDir), "stage-")
	if err != nil {
		return nil, vfs.WriteFailed(p, err)
	}
	s := &staged{c: c, path: p, f: f}
	if info.Kind == vfs.KindFile {
		s.baseETag = info.ETag
		if keep {
			r, err := c.OpenFile(ctx, p)
			if err == nil {
				_, err = io.Copy(f, io.NewSectionReader(r, 0, r.Size()))
				r.Close()
			}
			if err != nil {
				s.Abort()
				return nil, err
			}
		}
	}
	return s, nil
}

type staged struct {
	c        *FS
	path     string
	baseETag string
	mu       sync.RWMutex
	f        *os.File // nil once ended
}

var _ vfs.ConditionalCommitter = (*staged)(nil)

func (s *staged) closed() error { return vfs.NewError(vfs.KindOther, s.path, fs.ErrClosed) }

func (s *staged) ReadAt(p []byte, off int64) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.f == nil {
		return 0, s.closed()
	}
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, s.path, errors.New("negative offset"))
	}
	return s.f.ReadAt(p, off)
}

func (s *staged) WriteAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return 0, s.closed()
	}
	if off < 0 {
		return 0, vfs.NewError(vfs.KindOther, s.path, errors.New("offset out of range"))
	}
	return s.f.WriteAt(p, off)
}

func (s *staged) Truncate(size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.closed()
	}
	if size < 0 {
		return vfs.NewError(vfs.KindOther, s.path, errors.New("size out of range"))
	}
	return s.f.Truncate(size)
}

func (s *staged) Size() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.f == nil {
		return 0
	}
	st, err := s.f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

func (s *staged) BaseETag() string { return s.baseETag }

func (s *staged) Commit(ctx context.Context) error { return s.commit(ctx, nil) }

func (s *staged) CommitIf(ctx context.Context, cond vfs.Precondition) error {
	return s.commit(ctx, &cond)
}

func (s *staged) commit(ctx context.Context, cond *vfs.Precondition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.closed()
	}
	c := s.c
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if cond != nil {
		if err := c.check(ctx, s.path, *cond); err != nil {
			return err
		}
	}
	return c.writeLocked(ctx, s.path, func() (string, int64, error) {
		hw := sha256.New()
		n, err := io.Copy(hw, io.NewSectionReader(s.f, 0, 1<<62))
		if err != nil {
			return "", 0, err
		}
		h := hex.EncodeToString(hw.Sum(nil))
		name := s.f.Name()
		if _, err := os.Lstat(c.blobs.path(h)); err == nil {
			s.f.Close()
			os.Remove(name)
		} else {
			if err := s.f.Close(); err != nil {
				return "", 0, err
			}
			if err := c.blobs.publish(name, h); err != nil {
				return "", 0, err
			}
		}
		s.f = nil
		return h, n, nil
	})
}

func (s *staged) Abort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	s.f.Close()
	os.Remove(s.f.Name())
	s.f = nil
	return nil
}
