package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

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
	f, _, err := fsys.openRegularRW(ctx, vfs.Clean(path))
	return f, err
}

// openRegularRW opens the regular file at clean path p (following links
// inside the root) for reading and writing, with its status: what
// OpenInPlace and OpenDatalessInPlace open. Anything else is an error (not
// found, is a directory, not a regular file).
func (fsys *FS) openRegularRW(ctx context.Context, p string) (*os.File, fs.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if p == "/" {
		return nil, nil, vfs.IsDir(p)
	}
	f, err := fsys.openFile(rel(p), os.O_RDWR|syscall.O_NONBLOCK)
	if err != nil {
		if isMissing(err) {
			return nil, nil, vfs.NotFound(p)
		}
		if errors.Is(err, syscall.EISDIR) {
			return nil, nil, vfs.IsDir(p)
		}
		return nil, nil, otherError(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, otherError(p, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, nil, vfs.IsDir(p)
		}
		return nil, nil, vfs.NewError(vfs.KindOther, p, errors.New("not a regular file"))
	}
	return f, fi, nil
}

// OpenDatalessInPlace opens the file at path (following links inside the
// root) for reading and writing on one host descriptor, as OpenInPlace
// does, when the file holds no data: it is empty, or nothing but holes
// and space reserved with fallocate (SEEK_DATA from offset 0 finds none;
// tmpfs, ext4 and XFS keep fallocated space that was never written as
// unwritten extents, which read as holes). The check is made on the
// descriptor returned, after the open, so data another process wrote
// before it is seen. Such a file has no older contents a staging would
// protect, as a new file has none: the caller writes it in place as it
// writes one CreateInPlace made, and reports its writes with WroteInPlace
// (a FUSE mount's in-place writes: docs/mount.md, "Data safety"). fi is
// what Stat says of the file at the open. ok false, with no file and no
// error, means the file holds data (or SEEK_DATA is not supported): the
// caller stages it. What OpenInPlace refuses (a directory, a file that is
// not regular, a missing one) is refused with the same error. The open
// itself reports nothing to watchers.
func (fsys *FS) OpenDatalessInPlace(ctx context.Context, path string) (f *os.File, fi vfs.FileInfo, ok bool, err error) {
	p := vfs.Clean(path)
	f, st, err := fsys.openRegularRW(ctx, p)
	if err != nil {
		return nil, vfs.FileInfo{}, false, err
	}
	if st.Size() > 0 && !dataless(int(f.Fd())) {
		f.Close()
		return nil, vfs.FileInfo{}, false, nil
	}
	return f, info(p, st), true, nil
}

// dataless reports whether the open file fd holds no data: SEEK_DATA from
// offset 0 finds none (ENXIO). A failed SEEK_DATA leaves the offset where
// it was; any other answer (an offset, an error such as EINVAL where the
// filesystem cannot tell) is taken for data.
func dataless(fd int) bool {
	_, err := unix.Seek(fd, 0, unix.SEEK_DATA)
	return err == unix.ENXIO
}

// CreateInPlace makes the file at path, which must not exist (nothing at
// the name, not even a link: an exclusive create), with the permission
// bits perm (the process's umask not applied), and returns it open for
// reading and writing on one host descriptor with what Stat would say of
// it, for a caller that writes the new file in place (a FUSE mount's new
// files: docs/mount.md, "Data safety"). The create is one exclusive open
// beneath the root where openat2 can resolve the path (Linux), with no
// lock: a compare-and-swap commit that found the name free renames with
// RENAME_NOREPLACE (see commit), so it fails, a conflict, when this
// create came first, and this one fails when the commit did; elsewhere
// the create holds the directory's lock as every commit does. It is
// reported to watchers (vfs.ChangeWrite), and the writes, which the
// caller makes on the descriptor, by WroteInPlace. Unlike Write and Stage
// it gives a new file no atomicity: a reader sees the file empty, then
// partly written; a crash leaves what was written so far. There is no older file to
// protect. The parent directory must exist (not found otherwise); a name
// taken is a conflict.
func (fsys *FS) CreateInPlace(ctx context.Context, path string, perm fs.FileMode) (*os.File, vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, vfs.FileInfo{}, err
	}
	if p == "/" {
		return nil, vfs.FileInfo{}, vfs.IsDir(p)
	}
	bits := vfs.ModeBits(perm)
	fd, ok, err := fsys.createBeneath(rel(p), bits)
	if !ok {
		w, werr := fsys.openWriteDir(vfs.Parent(p), false)
		if werr != nil {
			if isMissing(werr) {
				return nil, vfs.FileInfo{}, vfs.NotFound(p)
			}
			return nil, vfs.FileInfo{}, writeDirError(p, werr)
		}
		fsys.locked(w, func() {
			fd, err = unix.Openat(w.fd, vfs.Base(p), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, bits)
		})
		w.close()
	}
	switch {
	case err == unix.EEXIST:
		return nil, vfs.FileInfo{}, vfs.NewError(vfs.KindConflict, p, nil)
	case err != nil:
		return nil, vfs.FileInfo{}, vfs.WriteFailed(p, err)
	}
	f := os.NewFile(uintptr(fd), vfs.Base(p))
	fi, err := f.Stat()
	if err == nil && vfs.ModeBits(fi.Mode()) != bits {
		// The umask took bits away: the caller asked for these.
		if unix.Fchmod(fd, bits) == nil {
			fi, err = f.Stat()
		}
	}
	if err != nil {
		f.Close()
		if w, werr := fsys.openWriteDir(vfs.Parent(p), false); werr == nil {
			w.remove(vfs.Base(p))
			w.close()
		}
		return nil, vfs.FileInfo{}, vfs.WriteFailed(p, errno(err))
	}
	fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return f, info(p, fi), nil
}

// WroteInPlace reports the writes made to f, a file CreateInPlace made
// or OpenDatalessInPlace opened at path, since since (what that call or
// the last WroteInPlace returned): when f's size and modification time
// are still since's, nothing was written and nothing is checked or
// reported (wrote false, fi since). Otherwise it checks that path still
// names f, under the directory's lock so that the check is ordered
// against every compare-and-swap commit in any process, reports the
// writes to watchers (vfs.ChangeWrite) and returns what Stat says of
// the file now: a file another writer put at the name
// meanwhile (a rename over it, a Write through this package in any
// process) or a name removed is a conflict, reported to no one (the
// writes went to a file the tree no longer has at path).
func (fsys *FS) WroteInPlace(ctx context.Context, path string, f *os.File, since vfs.FileInfo) (fi vfs.FileInfo, wrote bool, err error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, false, err
	}
	st, err := f.Stat()
	if err != nil {
		return vfs.FileInfo{}, false, otherError(p, err)
	}
	if st.Size() == since.Size && st.ModTime().Equal(since.ModTime) {
		return since, false, nil
	}
	// The check holds the directory's lock, as every commit's check and
	// rename do: a compare-and-swap that checked the file's etag before
	// these writes has renamed its file over the name by the time this
	// check runs (a conflict here), and one that checks after it sees
	// their etag. Without the lock, a commit could check, these writes
	// land and be reported, and the rename then drop them.
	w, err := fsys.openWriteDir(vfs.Parent(p), false)
	switch {
	case err == nil:
		fsys.locked(w, func() { err = fsys.namesFile(p, st) })
		w.close()
	case isMissing(err):
		return vfs.FileInfo{}, false, vfs.NewError(vfs.KindConflict, p, nil)
	case errors.Is(err, fs.ErrPermission):
		// A directory this process may search but not read (mode
		// 0333, 1733) cannot be opened for its lock; nor can it by a
		// commit of this user, which needs the same. The check is
		// made under the mutex alone.
		fsys.mu.Lock()
		err = fsys.namesFile(p, st)
		fsys.mu.Unlock()
	default:
		return vfs.FileInfo{}, false, otherError(p, err)
	}
	if err != nil {
		return vfs.FileInfo{}, false, err
	}
	fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return info(p, st), true, nil
}

// namesFile is nil when clean path p names the file fi describes, a
// conflict when it names another file or none.
func (fsys *FS) namesFile(p string, fi fs.FileInfo) error {
	if fsys.names(p, fi) {
		return nil
	}
	cur, _, err := fsys.statLink(rel(p))
	if err != nil || !os.SameFile(fi, cur) {
		if err != nil && !isMissing(err) {
			return otherError(p, err)
		}
		return vfs.NewError(vfs.KindConflict, p, nil)
	}
	return nil
}

// names reports whether the entry at clean path p, not following a link
// there, is the file fi describes, by one fstatat from the root directory:
// the fast answer of WroteInPlace's check. false means "not known": the
// caller asks statLink, which resolves the name as every verb does
// (beneath the root, links inside it followed, absolute ones too). The
// fstatat resolves links in the path's directories as the host does,
// which can only differ from the tree's resolution for a link that
// leaves the root or has an absolute target: its answer then is another
// file (or none), and statLink decides.
func (fsys *FS) names(p string, fi fs.FileInfo) bool {
	want, ok := fi.Sys().(*syscall.Stat_t)
	if fsys.rootDir == nil || !ok || p == "/" {
		return false
	}
	rc, err := fsys.rootDir.SyscallConn()
	if err != nil {
		return false
	}
	var st unix.Stat_t
	var serr error
	if rc.Control(func(d uintptr) {
		serr = unix.Fstatat(int(d), rel(p), &st, unix.AT_SYMLINK_NOFOLLOW)
	}) != nil || serr != nil {
		return false
	}
	return uint64(st.Dev) == uint64(want.Dev) && uint64(st.Ino) == uint64(want.Ino)
}
