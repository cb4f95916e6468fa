package local

import (
	"context"
	"os"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.OwnerSetter     = (*FS)(nil)
	_ vfs.LinkOwnerSetter = (*FS)(nil)
)

// SetOwner sets the owner and group of the file or directory at path on
// the host (vfs.OwnerSetter), following links inside the root; a link out
// of it, a special file or nothing is "not found". It changes the very
// inode opened beneath the root (fchownat of its /proc/self/fd name, or
// fchown), never a name resolved again. The host decides who may: a
// process that is not root gets EPERM giving a file away; the kernel
// clears the setuid and setgid bits of a file whose owner changes.
func (fsys *FS) SetOwner(ctx context.Context, path string, uid, gid int) error {
	return fsys.setMeta(ctx, path, func(procPath string, f *os.File) error {
		if procPath != "" {
			return unix.Fchownat(unix.AT_FDCWD, procPath, uid, gid, 0)
		}
		return unix.Fchown(int(f.Fd()), uid, gid)
	})
}

// SetLinkOwner sets the owner and group of the link at path itself on the
// host (vfs.LinkOwnerSetter), by its name in its parent directory's
// handle (reached inside the root) with AT_SYMLINK_NOFOLLOW, so the link
// is never followed.
func (fsys *FS) SetLinkOwner(ctx context.Context, path string, uid, gid int) error {
	return fsys.linkMeta(ctx, path, func(dirfd int, name string) error {
		return unix.Fchownat(dirfd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW)
	})
}

// linkMeta calls set with the handle of the parent directory of the link
// at path (reached inside the root) and the link's name, once it checked
// that the name is a link: not found for nothing, cause EINVAL for
// anything else.
func (fsys *FS) linkMeta(ctx context.Context, path string, set func(dirfd int, name string) error) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == "/" {
		return vfs.NewError(vfs.KindOther, p, unix.EINVAL)
	}
	w, err := fsys.openWriteDir(vfs.Parent(p), false)
	if err != nil {
		if isMissing(err) {
			return vfs.NotFound(p)
		}
		return otherError(p, err)
	}
	defer w.close()
	var st unix.Stat_t
	switch err := unix.Fstatat(w.fd, vfs.Base(p), &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == unix.ENOENT || err == unix.ENOTDIR:
		return vfs.NotFound(p)
	case err != nil:
		return otherError(p, err)
	case st.Mode&unix.S_IFMT != unix.S_IFLNK:
		return vfs.NewError(vfs.KindOther, p, unix.EINVAL)
	}
	if err := set(w.fd, vfs.Base(p)); err != nil {
		return vfs.WriteFailed(p, err)
	}
	return nil
}
