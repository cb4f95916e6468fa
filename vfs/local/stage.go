package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.Stager = (*FS)(nil)

// Stage opens a staging for the file at path: a temporary file on the
// host disk, so a file being written is never held in memory. On Linux it
// is an unnamed file (O_TMPFILE) in the target's directory (or its nearest
// existing ancestor), invisible to List and gone without a trace if the
// process dies; elsewhere, or on a filesystem without O_TMPFILE, it is a
// named temporary file in the target's directory, as Write uses. With keep
// the staging starts as a copy of the current file (copy_file_range where
// the kernel has it).
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
	f, err := openUnnamed(fsys.root, rel(d))
	if err != nil {
		dir := rel(vfs.Parent(p))
		if err := fsys.mkdirAll(dir); err != nil {
			return nil, vfs.WriteFailed(p, err)
		}
		s.tmp, f, err = fsys.createTemp(dir)
		if err != nil {
			return nil, vfs.WriteFailed(p, errno(err))
		}
	}
	s.f = f
	if keep {
		src, fi, err := fsys.open(p)
		switch {
		case vfs.KindOf(err) == vfs.KindNotFound:
		case err != nil:
			s.Abort()
			return nil, err
		default:
			_, err := io.Copy(f, src)
			src.Close()
			if err != nil {
				s.Abort()
				return nil, vfs.WriteFailed(p, errno(err))
			}
			s.size.Store(fi.Size())
			if n, err := f.Seek(0, io.SeekCurrent); err == nil {
				s.size.Store(n) // what was copied, if the file changed meanwhile
			}
		}
	}
	return s, nil
}

// mkdirAll makes the directory dir (relative to the root) and its parents,
// as Write does: a file in the way is ENOTDIR.
func (fsys *FS) mkdirAll(dir string) error {
	if err := fsys.root.MkdirAll(dir, 0o777); err != nil {
		cause := errno(err)
		if errors.Is(cause, syscall.EEXIST) {
			cause = syscall.ENOTDIR
		}
		return cause
	}
	return nil
}

// staged is a staging made by Stage.
type staged struct {
	fsys *FS
	path string   // clean posix path of the target
	f    *os.File // the staged contents
	tmp  string   // name of f relative to the root, "" while f has none
	size atomic.Int64

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

func (s *staged) Size() int64 { return s.size.Load() }

// Commit publishes the staged contents at the staged path, as Write does.
func (s *staged) Commit(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.closedError()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fsys, p := s.fsys, s.path
	name, dir := rel(p), rel(vfs.Parent(p))
	if err := s.f.Sync(); err != nil {
		return vfs.WriteFailed(p, errno(err))
	}
	if err := fsys.mkdirAll(dir); err != nil {
		return vfs.WriteFailed(p, err)
	}
	tmp, err := s.name(dir)
	if err != nil {
		return vfs.WriteFailed(p, errno(err))
	}
	drop := func() { // a name given for this commit only
		if tmp != s.tmp {
			fsys.root.Remove(tmp)
		}
	}

	fsys.mu.Lock()
	cur, err := fsys.root.Lstat(name)
	switch {
	case err != nil && !isMissing(err):
		fsys.mu.Unlock()
		drop()
		return vfs.WriteFailed(p, errno(err))
	case err == nil && cur.IsDir():
		fsys.mu.Unlock()
		drop()
		return vfs.IsDir(p)
	case err == nil && cur.Mode().IsRegular():
		fsys.root.Chmod(tmp, cur.Mode().Perm()) // keep the file's permission bits; best effort
	}
	if err := fsys.root.Rename(tmp, name); err != nil {
		fsys.mu.Unlock()
		drop()
		return vfs.WriteFailed(p, errno(err))
	}
	fsys.mu.Unlock()
	s.done, s.tmp = true, ""
	s.f.Close()
	if d, err := fsys.root.Open(dir); err == nil {
		d.Sync() // make the rename durable; best effort on filesystems that refuse
		d.Close()
	}
	fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return nil
}

// name returns a name in dir (relative to the root) under which the staged
// contents can be renamed into place: the named temporary file when it is
// in dir already, else a new name linked to the unnamed file, else (the
// target's directory is on another filesystem) a synced copy.
func (s *staged) name(dir string) (string, error) {
	fsys := s.fsys
	if s.tmp != "" && rel(vfs.Parent("/"+s.tmp)) == dir {
		return s.tmp, nil
	}
	if s.tmp == "" {
		for range 10 {
			name := tempName()
			err := linkUnnamed(fsys.root, s.f, dir, name)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err == nil {
				if dir != "." {
					name = dir + "/" + name
				}
				return name, nil
			}
			break
		}
	}
	tmp, dst, err := fsys.createTemp(dir)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, io.NewSectionReader(s.f, 0, s.size.Load()))
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fsys.root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// tempName is a fresh name for a write temporary.
func tempName() string {
	var b [8]byte
	rand.Read(b[:])
	return tempPrefix + hex.EncodeToString(b[:])
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
	if s.tmp != "" {
		s.fsys.root.Remove(s.tmp)
	}
	return nil
}
