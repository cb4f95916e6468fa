package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// Every change to a file (Write, WriteIf, a staging's Commit, Delete,
// Rename) happens through a handle on the file's directory, opened once by
// the path (links inside the root followed, as Read follows them): the
// temporary file is created in it by a single name, renamed over the
// target in it, and removed through it when anything fails, so a link
// swapped in meanwhile cannot send any of that elsewhere.
//
// The check and the rename hold an flock on that directory, so a
// conditional write is atomic against every process that writes the tree
// through this package, not only against this one: two processes that
// both read etag E and both WriteIf(IfMatch E) cannot both succeed. (A
// filesystem that refuses flock, which Linux's local filesystems never do,
// keeps only the per-FS mutex.) A commit also sets the new file's
// modification time later than the file it replaces, so the etag
// ("inode-size-mtime") of a path never repeats even when the kernel reuses
// the old inode number and its clock is coarse.

// wdir is a directory open for a change to one of its entries.
type wdir struct {
	fd int
	f  *os.File // os.Root's file that fd belongs to, or nil: fd is bare (see openFD)
}

func (w *wdir) close() {
	if w.f != nil {
		w.f.Close()
	} else {
		unix.Close(w.fd)
	}
}

// lock takes the directory's flock (blocking), unlock releases it. See
// above for why a directory: its inode stays while files in it are renamed
// over one another.
func (w *wdir) lock() {
	for unix.Flock(w.fd, unix.LOCK_EX) == unix.EINTR {
	}
}

func (w *wdir) unlock() { unix.Flock(w.fd, unix.LOCK_UN) }

// locked runs fn holding the per-FS mutex and w's flock, the locks every
// change's check and act hold together.
func (fsys *FS) locked(w *wdir, fn func()) {
	fsys.mu.Lock()
	w.lock()
	defer fsys.mu.Unlock()
	defer w.unlock()
	fn()
}

// remove removes the entry name of w, ignoring errors (a temporary file
// that failed to commit).
func (w *wdir) remove(name string) { unix.Unlinkat(w.fd, name, 0) }

// openWriteDir opens the directory at clean posix path d for a change,
// following links inside the root, relative or absolute, as Read does.
// With mk, a missing directory is made first, parents too. A file where a
// directory should be is ENOTDIR.
func (fsys *FS) openWriteDir(d string, mk bool) (*wdir, error) {
	name := rel(d)
	fd, f, err := fsys.openFD(name, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK)
	if err != nil && mk && errors.Is(err, fs.ErrNotExist) {
		if err := fsys.mkdirAll(name); err != nil {
			return nil, err
		}
		fd, f, err = fsys.openFD(name, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK)
	}
	if err != nil {
		return nil, err
	}
	return &wdir{fd: fd, f: f}, nil
}

// mkdirAll makes the directory dir (relative to the root) and its parents,
// following links inside the root (absolute ones too, see resolve). A file
// in the way is ENOTDIR. It returns the bare OS error.
func (fsys *FS) mkdirAll(dir string) error {
	err := fsys.root.MkdirAll(dir, 0o777)
	if r, ok := fsys.retry(dir, err); ok {
		err = fsys.root.MkdirAll(r, 0o777)
	}
	if err != nil {
		cause := errno(err)
		if errors.Is(cause, unix.EEXIST) {
			cause = unix.ENOTDIR
		}
		return cause
	}
	return nil
}

// writeDirError is the error of a write to p whose directory could not be
// opened or made.
func writeDirError(p string, err error) error {
	cause := errno(err)
	if errors.Is(cause, unix.EEXIST) {
		cause = unix.ENOTDIR
	}
	return vfs.WriteFailed(p, cause)
}

// tempPrefix starts the names of write temporaries.
const tempPrefix = ".julyfs-tmp-"

// tempName is a fresh name for a write temporary.
func tempName() string {
	var b [8]byte
	rand.Read(b[:])
	return tempPrefix + hex.EncodeToString(b[:])
}

// createTemp creates a new temporary file in w for a write, open for
// reading and writing, and takes a shared flock on it: a sweep (see
// sweepTemps) never removes a temporary whose writer is alive.
func (w *wdir) createTemp() (string, *os.File, error) {
	for {
		name := tempName()
		fd, err := unix.Openat(w.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
		switch err {
		case unix.EEXIST, unix.EINTR:
			continue
		case nil:
			unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
			return name, os.NewFile(uintptr(fd), name), nil
		}
		return "", nil, err
	}
}

// Write atomically creates or replaces the file at path with data,
// creating parent directories.
func (fsys *FS) Write(ctx context.Context, path string, data []byte) error {
	_, err := fsys.WriteIf(ctx, path, data, vfs.Precondition{})
	return err
}

// WriteIf writes data when cond holds and returns the new etag. The check
// and the rename are atomic against every writer of the tree through this
// package, in this process or another.
func (fsys *FS) WriteIf(ctx context.Context, path string, data []byte, cond vfs.Precondition) (string, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if p == "/" {
		return "", vfs.IsDir(p)
	}
	w, err := fsys.openWriteDir(vfs.Parent(p), true)
	if err != nil {
		return "", writeDirError(p, err)
	}
	defer w.close()
	if len(data) == 0 && cond.IfNoneMatch && cond.IfMatch == "" {
		if etag, ok := fsys.createEmpty(w, p); ok {
			return etag, nil
		}
	}
	tmp, f, err := w.createTemp()
	if err != nil {
		return "", vfs.WriteFailed(p, err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		w.remove(tmp)
		return "", vfs.WriteFailed(p, errno(err))
	}
	if err := f.Sync(); err != nil {
		w.remove(tmp)
		return "", vfs.WriteFailed(p, errno(err))
	}
	st, err := fsys.commit(ctx, w, p, tmp, f, cond)
	if err != nil {
		w.remove(tmp)
		return "", err
	}
	return etagOf(&st), nil
}

// createEmpty creates the empty file p in its directory w where nothing
// is at its name, in one exclusive create (O_EXCL: nothing partial can
// show, so no temporary file and rename are needed), under the
// directory's lock like every commit, and returns its etag. ok false
// means something is at the name (a file, a directory, a link, dangling
// or not) or the create failed: the caller writes the usual way, which
// decides.
func (fsys *FS) createEmpty(w *wdir, p string) (string, bool) {
	var st unix.Stat_t
	var err error
	fsys.locked(w, func() {
		var fd int
		fd, err = unix.Openat(w.fd, vfs.Base(p), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o666)
		if err == nil {
			err = unix.Fstat(fd, &st)
			unix.Close(fd)
			if err != nil {
				w.remove(vfs.Base(p))
			}
		}
	})
	if err != nil {
		return "", false
	}
	unix.Fsync(w.fd) // make the create durable; best effort, as commit's
	fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return etagOf(&st), true
}

// commit renames the temporary file tmp of w (open as f, its data synced)
// over the entry for p in w when cond holds, under the directory's lock,
// keeping the owner, group and permission bits of the file it replaces
// (see keepAttrs). It syncs the directory and notifies watchers, and
// returns the new file's status. On an error the caller removes tmp.
func (fsys *FS) commit(ctx context.Context, w *wdir, p, tmp string, f *os.File, cond vfs.Precondition) (unix.Stat_t, error) {
	var st unix.Stat_t
	name := vfs.Base(p)
	fsys.mu.Lock()
	w.lock()
	locked := true
	defer func() {
		if locked {
			w.unlock()
			fsys.mu.Unlock()
		}
	}()
	var cur unix.Stat_t
	err := unix.Fstatat(w.fd, name, &cur, unix.AT_SYMLINK_NOFOLLOW)
	exists := err == nil
	switch {
	case err != nil && err != unix.ENOENT:
		return st, vfs.WriteFailed(p, err)
	case exists && cur.Mode&unix.S_IFMT == unix.S_IFDIR:
		return st, vfs.IsDir(p)
	}
	var last time.Time // the modification time of what the new file replaces
	if exists && cur.Mode&unix.S_IFMT == unix.S_IFREG {
		last = time.Unix(cur.Mtim.Unix())
	}
	if cond.IfNoneMatch || cond.IfMatch != "" {
		info, err := fsys.Stat(ctx, p) // what a reader sees, links followed
		if err != nil {
			return st, err
		}
		if (cond.IfNoneMatch && info.Kind != vfs.KindMissing) ||
			(cond.IfMatch != "" && (info.Kind != vfs.KindFile || info.ETag != cond.IfMatch)) {
			return st, vfs.NewError(vfs.KindConflict, p, nil)
		}
		if info.ModTime.After(last) {
			last = info.ModTime
		}
	}
	if exists && cur.Mode&unix.S_IFMT == unix.S_IFREG {
		keepAttrs(int(f.Fd()), &cur)
	}
	if commitCheckedForTest != nil {
		commitCheckedForTest(p)
	}
	mtime := time.Now()
	if !mtime.After(last) {
		mtime = last.Add(time.Microsecond)
	}
	times := []unix.Timespec{keepAtime(), unix.NsecToTimespec(mtime.UnixNano())}
	unix.UtimesNanoAt(w.fd, tmp, times, unix.AT_SYMLINK_NOFOLLOW) // best effort: the etag still changes with the inode
	if err := renameCommit(w.fd, tmp, name, cond.IfNoneMatch && !exists); err != nil {
		if err == unix.EEXIST {
			return st, vfs.NewError(vfs.KindConflict, p, nil)
		}
		return st, vfs.WriteFailed(p, err)
	}
	ferr := unix.Fstat(int(f.Fd()), &st)
	w.unlock()
	fsys.mu.Unlock()
	locked = false
	unix.Fsync(w.fd) // make the rename durable; best effort on filesystems that refuse
	fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	if ferr != nil {
		return st, vfs.WriteFailed(p, ferr)
	}
	return st, nil
}

// commitCheckedForTest, when set, is called by commit between its check
// and its rename (tests: what another process does in between).
var commitCheckedForTest func(p string)

// renameCommit renames tmp over name in the directory dirfd. With
// noReplace (a compare-and-swap that found the name free) the rename
// fails with EEXIST when something took the name since: an exclusive
// create that holds no lock (CreateInPlace) may have. A filesystem
// without RENAME_NOREPLACE gets a plain rename, which the directory's
// lock orders against every other commit.
func renameCommit(dirfd int, tmp, name string, noReplace bool) error {
	if noReplace {
		err := renameNoReplace(dirfd, tmp, name)
		if err != unix.EINVAL && err != unix.ENOSYS {
			return err
		}
	}
	return unix.Renameat(dirfd, tmp, dirfd, name)
}

// keepAttrs gives the new file fd the owner, group and permission bits of
// cur, the file it replaces, as far as the process may: a process that
// may not give a file away (not root) keeps itself as the owner and the
// group only where it is a member. The setuid and setgid bits are not
// carried over: a write by an unprivileged process clears them on the
// host too, and new contents must not inherit a privilege.
func keepAttrs(fd int, cur *unix.Stat_t) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && (st.Uid != cur.Uid || st.Gid != cur.Gid) {
		if unix.Fchown(fd, int(cur.Uid), int(cur.Gid)) != nil {
			unix.Fchown(fd, -1, int(cur.Gid))
		}
	}
	unix.Fchmod(fd, uint32(cur.Mode)&0o1777)
}

// etagOf is etag for a raw status.
func etagOf(st *unix.Stat_t) string {
	b := make([]byte, 0, 48)
	b = strconv.AppendUint(b, uint64(st.Ino), 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, st.Size, 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, time.Unix(st.Mtim.Unix()).UnixNano(), 16)
	return string(b)
}

// Delete removes the file at path. A link is removed, not its target
// (whatever it points at: a directory, nothing, the outside).
// Directories are never removed: deleting one fails with "is a directory".
func (fsys *FS) Delete(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == "/" {
		return vfs.IsDir(p)
	}
	w, err := fsys.openWriteDir(vfs.Parent(p), false)
	if err != nil {
		if isMissing(err) {
			return vfs.NotFound(p)
		}
		return otherError(p, err)
	}
	fsys.mu.Lock()
	w.lock()
	// A file, or a link itself (whatever it points at): one unlinkat in
	// the directory, which refuses a directory (EISDIR on Linux, EPERM
	// elsewhere) and says when the name is missing.
	//
	// Under the directory's lock, as every commit's check and rename:
	// an unlink between a WriteIf's check and its rename would let the
	// WriteIf succeed on a name a Delete had emptied meanwhile (it must
	// then have failed, or the name be gone). The lock goes with the
	// descriptor: closing it (the only descriptor of its open file;
	// O_CLOEXEC) releases the flock, so no LOCK_UN is made.
	err = nil
	if uerr := unix.Unlinkat(w.fd, vfs.Base(p), 0); uerr != nil {
		var st unix.Stat_t
		switch {
		case isMissing(uerr):
			err = vfs.NotFound(p)
		case (uerr == unix.EISDIR || uerr == unix.EPERM) &&
			unix.Fstatat(w.fd, vfs.Base(p), &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
			err = vfs.IsDir(p)
		default:
			err = otherError(p, uerr)
		}
	}
	w.close()
	fsys.mu.Unlock()
	if err != nil {
		return err
	}
	fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeDelete})
	return nil
}
