package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.Stager               = (*FS)(nil)
	_ vfs.ConditionalCommitter = (*staged)(nil)
	_ vfs.FileDescriptor       = (*staged)(nil)
)

// Stage opens a staging for the file at path: a temporary file on the
// host disk, so a file being written is never held in memory. On Linux it
// is an unnamed file (O_TMPFILE) in the target's directory (or its nearest
// existing ancestor), invisible to List and gone without a trace if the
// process dies; elsewhere, or on a filesystem without O_TMPFILE, it is a
// named temporary file in the target's directory, as Write uses. With keep
// the staging starts as a copy of the current file: a clone where the host
// filesystem shares extents, else its data ranges with copy_file_range,
// holes left holes (copyFile).
//
// Commit does what Write does: sync the data, give it a temporary name in
// the target's directory, rename it over the target under the FS's write
// lock, sync the directory, and report the change to watchers. Readers see
// the old file or the new one, never a part of the new one.
func (fsys *FS) Stage(ctx context.Context, path string, keep bool) (vfs.StagedFile, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, vfs.IsDir(p)
	}
	if fi, err := fsys.root.Stat(rel(p)); err == nil && fi.IsDir() {
		return nil, vfs.IsDir(p)
	}
	s := &staged{fsys: fsys, path: p}
	// The unnamed file goes in the nearest existing directory on the way
	// to the target: making the target's parents now would show them
	// before the commit.
	d := vfs.Parent(p)
	for d != "/" {
		if fi, err := fsys.root.Stat(rel(d)); err == nil && fi.IsDir() {
			break
		}
		d = vfs.Parent(d)
	}
	f, err := fsys.openUnnamedIn(d)
	if err != nil {
		w, err := fsys.openWriteDir(vfs.Parent(p), true)
		if err != nil {
			return nil, writeDirError(p, err)
		}
		s.tmp, f, err = w.createTemp()
		if err != nil {
			w.close()
			return nil, vfs.WriteFailed(p, err)
		}
		s.tdir = w
	}
	s.f = f
	if !keep {
		if st, err := fsys.Stat(ctx, p); err == nil && st.Kind == vfs.KindFile {
			s.base = st.ETag
		}
	}
	if keep {
		src, fi, err := fsys.open(p)
		switch {
		case vfs.KindOf(err) == vfs.KindNotFound:
		case err != nil:
			s.Abort()
			return nil, err
		default:
			s.base = etag(fi) // the very version copied: a write makes a new inode
			n, err := copyFile(f, src)
			src.Close()
			if err != nil {
				s.Abort()
				return nil, vfs.WriteFailed(p, errno(err))
			}
			s.size.Store(n) // what was copied, if the file changed meanwhile
		}
	}
	return s, nil
}

// openUnnamedIn opens an unnamed file (see openUnnamed) in the directory
// at clean posix path d, holding a shared flock on it as createTemp does:
// once Commit links it under a temporary name, a sweep leaves it alone.
func (fsys *FS) openUnnamedIn(d string) (*os.File, error) {
	w, err := fsys.openWriteDir(d, false)
	if err != nil {
		return nil, err
	}
	defer w.close()
	f, err := openUnnamed(w.fd)
	if err == nil {
		unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	}
	return f, err
}

// staged is a staging made by Stage.
type staged struct {
	fsys *FS
	path string   // clean posix path of the target
	f    *os.File // the staged contents
	tmp  string   // name of f in tdir, "" while f has none
	tdir *wdir    // the directory tmp was created in, or nil
	size atomic.Int64
	base string // the etag of the file when staged, "" when there was none

	mu   sync.RWMutex // held for writing by Truncate, Commit and Abort
	done bool
}

func (s *staged) closedError() error { return vfs.NewError(vfs.KindOther, s.path, fs.ErrClosed) }

// usable reports why a read or write at off cannot go on: the staging is
// committed or aborted, or off is negative. Callers hold s.mu.
func (s *staged) usable(off int64) error {
	switch {
	case s.done:
		return s.closedError()
	case off < 0:
		return vfs.NewError(vfs.KindOther, s.path, errors.New("negative offset"))
	}
	return nil
}

func (s *staged) ReadAt(b []byte, off int64) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(off); err != nil {
		return 0, err
	}
	n, err := s.f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return n, otherError(s.path, err)
	}
	return n, err
}

func (s *staged) WriteAt(b []byte, off int64) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if err := s.usable(off); err != nil {
		return 0, err
	}
	n, err := s.f.WriteAt(b, off)
	for end := off + int64(n); ; {
		cur := s.size.Load()
		if end <= cur || s.size.CompareAndSwap(cur, end) {
			break
		}
	}
	if err != nil {
		return n, vfs.WriteFailed(s.path, errno(err))
	}
	return n, nil
}

func (s *staged) Truncate(size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.closedError()
	}
	if err := s.f.Truncate(size); err != nil {
		return vfs.WriteFailed(s.path, errno(err))
	}
	s.size.Store(size)
	return nil
}

// Size is the staged size: the staging file's own (fstat), so it counts
// writes made on its descriptor directly (Fd), else the size this staging's
// own writes left.
func (s *staged) Size() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.done {
		if fi, err := s.f.Stat(); err == nil {
			return fi.Size()
		}
	}
	return s.size.Load()
}

// Fd is the staging file's host descriptor, open for reading and writing
// (vfs.FileDescriptor): what is written on it is staged, and published by
// Commit with the rest. It is the file Commit renames into place (when the
// target's directory is the one the staging was made in), so after a
// commit it is the published file.
func (s *staged) Fd() uintptr { return s.f.Fd() }

// Commit publishes the staged contents at the staged path, as Write does.
func (s *staged) Commit(ctx context.Context) error {
	return s.CommitIf(ctx, vfs.Precondition{})
}

// BaseETag is the etag of the file when it was staged
// (vfs.ConditionalCommitter).
func (s *staged) BaseETag() string { return s.base }

// CommitIf publishes the staged contents when cond holds, checked under
// the same directory lock as WriteIf's, so it holds against every writer
// of the tree through this package in any process
// (vfs.ConditionalCommitter). On a conflict nothing is published and the
// staging stays open.
func (s *staged) CommitIf(ctx context.Context, cond vfs.Precondition) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.closedError()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fsys, p := s.fsys, s.path
	if err := s.f.Sync(); err != nil {
		return vfs.WriteFailed(p, errno(err))
	}
	w, err := fsys.openWriteDir(vfs.Parent(p), true)
	if err != nil {
		return writeDirError(p, err)
	}
	defer w.close()
	tmp, f, err := s.name(w)
	if err != nil {
		return vfs.WriteFailed(p, errno(err))
	}
	if f != s.f {
		defer f.Close()
	}
	if _, err := fsys.commit(ctx, w, p, tmp, f, cond); err != nil {
		if tmp != s.tmp {
			w.remove(tmp) // a name given for this commit only
		}
		return err
	}
	s.done, s.tmp = true, ""
	s.f.Close()
	if s.tdir != nil {
		s.tdir.close()
	}
	return nil
}

// name returns a name in w under which the staged contents can be renamed
// into place, and a file open on it: the named temporary file when it is
// in w already, else a new name linked to the unnamed file, else (the
// target's directory is on another filesystem) a synced copy.
func (s *staged) name(w *wdir) (string, *os.File, error) {
	if s.tmp != "" && sameFile(s.tdir.fd, w.fd) {
		return s.tmp, s.f, nil
	}
	if s.tmp == "" {
		for range 10 {
			name := tempName()
			err := linkUnnamed(s.f, w.fd, name)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err == nil {
				return name, s.f, nil
			}
			break
		}
	}
	tmp, dst, err := w.createTemp()
	if err != nil {
		return "", nil, err
	}
	size := s.size.Load()
	if fi, err := s.f.Stat(); err == nil {
		size = fi.Size() // writes made on Fd count too
	}
	_, err = io.Copy(dst, io.NewSectionReader(s.f, 0, size))
	if err == nil {
		err = dst.Sync()
	}
	if err != nil {
		dst.Close()
		w.remove(tmp)
		return "", nil, err
	}
	return tmp, dst, nil
}

// sameFile reports whether two descriptors are open on the same file.
func sameFile(a, b int) bool {
	var sa, sb unix.Stat_t
	return unix.Fstat(a, &sa) == nil && unix.Fstat(b, &sb) == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// Abort drops the staging; nothing is left on the disk.
func (s *staged) Abort() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	s.f.Close()
	if s.tdir != nil {
		if s.tmp != "" {
			s.tdir.remove(s.tmp)
		}
		s.tdir.close()
	}
	return nil
}
