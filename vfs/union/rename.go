package union

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.Renamer = (*FS)(nil)

// Rename moves a file or directory within the mount that holds both paths,
// through that mount's Renamer (or vfs.Rename's copy and delete when it
// has none). Across two mounts it fails with "write failed: <to>" caused
// by syscall.EXDEV, as rename(2) does across filesystems, so vfs.Rename
// (and mv through a FUSE mount) falls back to copy and delete. A mount
// point and a directory of the union itself (one leading to a mount point)
// cannot be moved or replaced (EBUSY).
func (u *FS) Rename(ctx context.Context, from, to string) error {
	f, t := vfs.Clean(from), vfs.Clean(to)
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range []string{f, t} {
		if u.isInner(p) || u.byPath[p] != nil {
			return vfs.WriteFailed(p, syscall.EBUSY)
		}
	}
	mf, mt := u.route(f), u.route(t)
	switch {
	case mf == nil:
		return vfs.NoMount(f)
	case mt == nil:
		return vfs.NoMount(t)
	case mf != mt:
		st, err := u.Stat(ctx, f)
		switch {
		case err != nil:
			return err
		case st.Kind == vfs.KindMissing && !st.Link: // a dangling link moves too
			return vfs.NotFound(f)
		}
		return vfs.WriteFailed(t, syscall.EXDEV)
	}
	return mf.fixErr(vfs.Rename(ctx, mf.fs, mf.down(f), mf.down(t)), "")
}

var _ vfs.Linker = (*FS)(nil)

// Link gives a file a second name within the mount that holds both paths
// (vfs.Linker, where that mount has it); across two mounts it fails with
// cause EXDEV, as link(2) across file systems does, and a mount point or
// a directory of the union itself cannot be a name (EBUSY).
func (u *FS) Link(ctx context.Context, oldpath, newpath string) error {
	o, n := vfs.Clean(oldpath), vfs.Clean(newpath)
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range []string{o, n} {
		if u.isInner(p) || u.byPath[p] != nil {
			return vfs.WriteFailed(p, syscall.EBUSY)
		}
	}
	mo, mn := u.route(o), u.route(n)
	switch {
	case mo == nil:
		return vfs.NotFound(o)
	case mn == nil:
		return vfs.NoMount(n)
	case mo != mn:
		return vfs.WriteFailed(n, syscall.EXDEV)
	}
	return mo.fixErr(vfs.Link(ctx, mo.fs, mo.down(o), mo.down(n)), "")
}

var _ vfs.NodeMaker = (*FS)(nil)

// Mknod makes a special file in the mount that holds path, when that
// mount can (vfs.NodeMaker); a mount point or a directory of the union
// itself is there already (EEXIST).
func (u *FS) Mknod(ctx context.Context, path string, mode fs.FileMode, dev uint64) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if u.isInner(p) || u.byPath[p] != nil {
		return vfs.WriteFailed(p, syscall.EEXIST)
	}
	m := u.route(p)
	if m == nil {
		return vfs.NoMount(p)
	}
	return m.fixErr(vfs.Mknod(ctx, m.fs, m.down(p), mode, dev), "")
}

var _ vfs.HostLister = (*FS)(nil)

// ListHost lists directory path as the host has it in the mount that
// holds it (vfs.HostLister); nothing where that mount is no host tree,
// and no entry a mount point shadows.
func (u *FS) ListHost(ctx context.Context, path string) ([]vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := u.route(p)
	if m == nil {
		return nil, nil
	}
	sp, err := vfs.ListHost(ctx, m.fs, m.down(p))
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, nil
	case err != nil:
		return nil, m.fixErr(err, "")
	}
	out := sp[:0]
	for _, fi := range sp {
		fi.Path = m.up(fi.Path)
		if !u.isInner(fi.Path) && u.byPath[fi.Path] == nil {
			out = append(out, fi)
		}
	}
	return out, nil
}
