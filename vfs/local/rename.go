package local

import (
	"context"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.Renamer = (*FS)(nil)

// Rename moves the file or directory at from to to in one rename(2) on the
// host (vfs.Renamer): atomic, as fast for a 1 GiB file as for an empty
// one, replacing a file (or an empty directory, for a directory) at to and
// making to's missing parent directories, as Write does. Both parents are
// reached as Write reaches one (links inside the root followed) and the
// rename is made between the two directory handles by single names, so
// nothing outside the root is moved or replaced; a link at from is moved
// itself, not its target. Both directories' flocks are held around the
// check and the rename, as for a write.
//
// Errors: a missing from (or one that is missing for the read verbs: a
// special file, a link out of the root) is "not found: from"; a file onto
// a directory is "is a directory: to"; the rest are "write failed: to"
// with the OS cause: ENOTDIR (a directory onto a file), ENOTEMPTY, EINVAL
// (a directory into itself), EBUSY (the root), and EXDEV when from and to
// are on different host filesystems (a mount point inside the root), so
// [vfs.Rename] falls back to copy and delete for a file.
func (fsys *FS) Rename(ctx context.Context, from, to string) error {
	f, t := vfs.Clean(from), vfs.Clean(to)
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := fsys.Stat(ctx, f)
	switch {
	case err != nil:
		return err
	case st.Kind == vfs.KindMissing && !st.Link && st.Special == 0: // a link moves, wherever it points; so does a special file
		return vfs.NotFound(f)
	case f == "/":
		return vfs.WriteFailed(f, unix.EBUSY)
	case t == "/":
		return vfs.WriteFailed(t, unix.EBUSY)
	case f == t:
		return nil
	case vfs.HasPrefix(t, f):
		return vfs.WriteFailed(t, unix.EINVAL)
	}
	fd, err := fsys.openWriteDir(vfs.Parent(f), false)
	if err != nil {
		if isMissing(err) {
			return vfs.NotFound(f)
		}
		return otherError(f, err)
	}
	defer fd.close()
	td, err := fsys.openWriteDir(vfs.Parent(t), true)
	if err != nil {
		return writeDirError(t, err)
	}
	defer td.close()

	fsys.mu.Lock()
	unlock := lockPair(fd, td)
	err = fsys.renameLocked(ctx, fd, f, td, t)
	unlock()
	fsys.mu.Unlock()
	if err != nil {
		return err
	}
	unix.Fsync(td.fd) // make the rename durable; best effort
	if !sameFile(fd.fd, td.fd) {
		unix.Fsync(fd.fd)
	}
	fsys.notifyMoved(ctx, f, t, st.Kind == vfs.KindDir)
	return nil
}

// renameLocked checks and renames under the directories' locks.
func (fsys *FS) renameLocked(ctx context.Context, fd *wdir, f string, td *wdir, t string) error {
	// Checked again under the lock: what a reader sees at from.
	st, err := fsys.Stat(ctx, f)
	switch {
	case err != nil:
		return err
	case st.Kind == vfs.KindMissing && !st.Link && st.Special == 0: // a link moves, wherever it points; so does a special file
		return vfs.NotFound(f)
	}
	var src, dst unix.Stat_t
	if err := unix.Fstatat(fd.fd, vfs.Base(f), &src, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return vfs.NotFound(f)
	}
	if unix.Fstatat(td.fd, vfs.Base(t), &dst, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		dst.Mode&unix.S_IFMT == unix.S_IFDIR && src.Mode&unix.S_IFMT != unix.S_IFDIR {
		return vfs.NewError(vfs.KindIsDir, t, unix.EISDIR)
	}
	if err := unix.Renameat(fd.fd, vfs.Base(f), td.fd, vfs.Base(t)); err != nil {
		switch err {
		case unix.ENOENT:
			return vfs.NotFound(f)
		case unix.EISDIR:
			return vfs.NewError(vfs.KindIsDir, t, err)
		}
		return vfs.WriteFailed(t, err)
	}
	return nil
}

// lockPair takes the flocks of two directories, in the order of their
// inode numbers so two renames in opposite directions cannot deadlock,
// and once when both are the same directory. It returns the unlock.
func lockPair(a, b *wdir) (unlock func()) {
	if sameFile(a.fd, b.fd) {
		a.lock()
		return a.unlock
	}
	var sa, sb unix.Stat_t
	unix.Fstat(a.fd, &sa)
	unix.Fstat(b.fd, &sb)
	if sb.Dev < sa.Dev || (sb.Dev == sa.Dev && sb.Ino < sa.Ino) {
		a, b = b, a
	}
	a.lock()
	b.lock()
	return func() { b.unlock(); a.unlock() }
}

// notifyMoved tells watchers about a rename: the file at f deleted and the
// one at t written, or for a directory each file now under t.
func (fsys *FS) notifyMoved(ctx context.Context, f, t string, dir bool) {
	if !dir {
		fsys.Notify(vfs.Change{Path: f, Op: vfs.ChangeDelete})
		fsys.Notify(vfs.Change{Path: t, Op: vfs.ChangeWrite})
		return
	}
	for e, err := range fsys.walkEntries(ctx, t, 0) {
		if err != nil {
			return
		}
		if e.Kind != vfs.KindFile {
			continue
		}
		r, _ := vfs.Rel(e.Path, t)
		fsys.Notify(vfs.Change{Path: vfs.Join(f, r), Op: vfs.ChangeDelete})
		fsys.Notify(vfs.Change{Path: e.Path, Op: vfs.ChangeWrite})
	}
}
