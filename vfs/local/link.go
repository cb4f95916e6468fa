package local

import (
	"context"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.Linker = (*FS)(nil)

// Link gives the file at oldpath a second name newpath on the host
// (vfs.Linker): one linkat(2) between the handles of the two parent
// directories, each reached inside the root as Write reaches it (no
// parent is made), and two single names, the old one not followed
// (flags 0), so neither name can lead out of the root. A directory fails
// with EPERM, as link(2) does; a special file is not found, as it is
// everywhere in the tree.
func (fsys *FS) Link(ctx context.Context, oldpath, newpath string) error {
	o, n := vfs.Clean(oldpath), vfs.Clean(newpath)
	if err := ctx.Err(); err != nil {
		return err
	}
	switch {
	case o == "/":
		return vfs.WriteFailed(n, unix.EPERM)
	case n == "/":
		return vfs.WriteFailed(n, unix.EEXIST)
	}
	ow, err := fsys.openWriteDir(vfs.Parent(o), false)
	if err != nil {
		if isMissing(err) {
			return vfs.NotFound(o)
		}
		return otherError(o, err)
	}
	defer ow.close()
	var st unix.Stat_t
	switch err := unix.Fstatat(ow.fd, vfs.Base(o), &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == unix.ENOENT || err == unix.ENOTDIR:
		return vfs.NotFound(o)
	case err != nil:
		return otherError(o, err)
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return vfs.WriteFailed(n, unix.EPERM)
	case st.Mode&unix.S_IFMT != unix.S_IFREG && st.Mode&unix.S_IFMT != unix.S_IFLNK && specialOf(st.Mode) == 0:
		return vfs.NotFound(o)
	}
	nw, err := fsys.openWriteDir(vfs.Parent(n), false)
	if err != nil {
		if isMissing(err) {
			return vfs.NotFound(n)
		}
		return writeDirError(n, err)
	}
	defer nw.close()
	if err := unix.Linkat(ow.fd, vfs.Base(o), nw.fd, vfs.Base(n), 0); err != nil {
		return vfs.WriteFailed(n, err)
	}
	fsys.Notify(vfs.Change{Path: n, Op: vfs.ChangeWrite})
	return nil
}
