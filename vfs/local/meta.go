package local

import (
	"context"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.Symlinker  = (*FS)(nil)
	_ vfs.ModeSetter = (*FS)(nil)
	_ vfs.TimeSetter = (*FS)(nil)
)

// Symlink makes a link on the host at path pointing at target, stored as
// given (vfs.Symlinker): it may point anywhere, but every verb that
// follows it still stays inside the root, so a link to /etc/passwd reads
// as missing here exactly like one made by anyone else. The link is made
// by a single name in its parent directory's handle (reached as Write
// reaches it, parents made); anything at path fails with EEXIST.
func (fsys *FS) Symlink(ctx context.Context, target, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case p == "/":
		return vfs.WriteFailed(p, unix.EEXIST)
	case target == "" || strings.IndexByte(target, 0) >= 0:
		return vfs.WriteFailed(p, unix.EINVAL)
	}
	w, err := fsys.openWriteDir(vfs.Parent(p), true)
	if err != nil {
		return writeDirError(p, err)
	}
	defer w.close()
	if err := unix.Symlinkat(target, w.fd, vfs.Base(p)); err != nil {
		return vfs.WriteFailed(p, err)
	}
	fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return nil
}

// Readlink returns the target of the link at path, not followed
// (vfs.Symlinker); links in its parent directories are followed inside
// the root. It reads the link's own text, which names no content outside
// the root, whatever it points at.
func (fsys *FS) Readlink(ctx context.Context, path string) (string, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if p == "/" {
		return "", vfs.NewError(vfs.KindOther, p, unix.EINVAL)
	}
	w, err := fsys.openWriteDir(vfs.Parent(p), false)
	if err != nil {
		if isMissing(err) {
			return "", vfs.NotFound(p)
		}
		return "", otherError(p, err)
	}
	defer w.close()
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(w.fd, vfs.Base(p), buf)
		switch {
		case err == unix.ENOENT || err == unix.ENOTDIR:
			return "", vfs.NotFound(p)
		case err != nil:
			return "", vfs.NewError(vfs.KindOther, p, err)
		case n < size:
			return string(buf[:n]), nil
		}
	}
}

// SetMode sets the permission, setuid, setgid and sticky bits of the file
// or directory at path on the host (vfs.ModeSetter), following links
// inside the root; a link out of it, a special file or nothing is "not
// found". A process may only change its own files unless it is root
// (EPERM otherwise).
func (fsys *FS) SetMode(ctx context.Context, path string, mode fs.FileMode) error {
	bits := vfs.ModeBits(mode)
	return fsys.setMeta(ctx, path, func(procPath string, f *os.File) error {
		if procPath != "" {
			return unix.Fchmodat(unix.AT_FDCWD, procPath, bits, 0)
		}
		return unix.Fchmod(int(f.Fd()), bits)
	})
}

// SetModTime sets the modification time of the file or directory at path
// on the host (vfs.TimeSetter), following links inside the root; the
// access time is left as it is. A file's etag changes with it.
func (fsys *FS) SetModTime(ctx context.Context, path string, mtime time.Time) error {
	ts := []unix.Timespec{keepAtime(), unix.NsecToTimespec(mtime.UnixNano())}
	return fsys.setMeta(ctx, path, func(procPath string, f *os.File) error {
		if procPath != "" {
			return unix.UtimesNanoAt(unix.AT_FDCWD, procPath, ts, 0)
		}
		tv := []unix.Timeval{unix.NsecToTimeval(time.Now().UnixNano()), unix.NsecToTimeval(mtime.UnixNano())}
		return unix.Futimes(int(f.Fd()), tv)
	})
}

// setMeta opens the file or directory at path (links followed inside the
// root) by O_PATH and calls set with its /proc/self/fd name, which
// reaches the very inode opened whatever happens to the path meanwhile;
// without /proc, with a descriptor opened for reading instead.
func (fsys *FS) setMeta(ctx context.Context, path string, set func(procPath string, f *os.File) error) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := fsys.openFile(rel(p), oPath)
	if err != nil {
		if isMissing(err) {
			return vfs.NotFound(p)
		}
		return otherError(p, err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return otherError(p, err)
	}
	isFile := st.Mode&unix.S_IFMT == unix.S_IFREG
	special := specialOf(st.Mode) != 0
	if !isFile && !special && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return vfs.NotFound(p)
	}
	err = set("/proc/self/fd/"+strconv.Itoa(int(f.Fd())), nil)
	if err == unix.ENOENT && !special { // no /proc (a special file is never opened)
		rf, oerr := fsys.openFile(rel(p), os.O_RDONLY|unix.O_NONBLOCK)
		if oerr != nil {
			return vfs.WriteFailed(p, errno(oerr))
		}
		err = set("", rf)
		rf.Close()
	}
	if err != nil {
		return vfs.WriteFailed(p, err)
	}
	if isFile {
		fsys.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	}
	return nil
}

var _ vfs.LinkTimeSetter = (*FS)(nil)

// SetLinkModTime sets the modification time of the link at path itself on
// the host (vfs.LinkTimeSetter), by its name in its parent directory's
// handle (reached inside the root); the access time is left as it is.
func (fsys *FS) SetLinkModTime(ctx context.Context, path string, mtime time.Time) error {
	ts := []unix.Timespec{keepAtime(), unix.NsecToTimespec(mtime.UnixNano())}
	return fsys.linkMeta(ctx, path, func(dirfd int, name string) error {
		return unix.UtimesNanoAt(dirfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
	})
}
