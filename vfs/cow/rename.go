package cow

import (
	"context"
	"syscall"

	"github.com/julyfs/julyfs/vfs"
)

// Rename moves a file, a link, or a directory of the layer's own
// (vfs.Renamer). A file or link of the base is copied up to its new name
// and whited out at its old one. A directory with anything of the base
// in it fails with a cause of syscall.EXDEV, as on Linux's overlayfs, so
// callers copy and delete (mv does; vfs.Rename does for files).
func (c *FS) Rename(ctx context.Context, from, to string) error {
	f, t := vfs.Clean(from), vfs.Clean(to)
	if err := ctx.Err(); err != nil {
		return err
	}
	if f == "/" {
		return vfs.NewError(vfs.KindOther, f, syscall.EBUSY)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	pf, ok := c.parentOf(f)
	if !ok {
		return vfs.NotFound(f)
	}
	fr := vfs.Join(pf, vfs.Base(f))
	fe, fok, fdir, fvis := c.look(fr)
	var fst vfs.FileInfo
	switch {
	case fok && fe.Type == TypeWhiteout:
		return vfs.NotFound(f)
	case !fok && !fvis:
		return vfs.NotFound(f)
	case !fok:
		has, st, err := c.baseHas(ctx, fr)
		if err != nil {
			return err
		}
		if !has {
			return vfs.NotFound(f)
		}
		fst, fdir = st, st.Kind == vfs.KindDir && !st.Link
	}
	if t == "/" {
		return vfs.NewError(vfs.KindOther, t, syscall.EBUSY)
	}
	if f == t {
		return nil
	}
	if vfs.HasPrefix(t, f) {
		return vfs.NewError(vfs.KindOther, t, syscall.EINVAL)
	}
	// What is at to, before anything is made.
	if pt, ok := c.parentOf(t); ok {
		if tr := vfs.Join(pt, vfs.Base(t)); tr == fr {
			return nil
		} else if vfs.HasPrefix(tr, fr) {
			return vfs.NewError(vfs.KindOther, t, syscall.EINVAL)
		}
	}
	tinfo, err := c.Stat(ctx, t)
	if err != nil {
		return err
	}
	tdir := tinfo.Kind == vfs.KindDir && !tinfo.Link
	switch {
	case !fdir && tdir:
		return vfs.IsDir(t)
	case fdir && tinfo.Kind != vfs.KindMissing && !tdir:
		return vfs.NewError(vfs.KindOther, t, syscall.ENOTDIR)
	case fdir && tdir:
		for _, err := range c.List(ctx, t) {
			if err != nil {
				return err
			}
			return vfs.NewError(vfs.KindOther, t, syscall.ENOTEMPTY)
		}
	}
	if fdir {
		pure := fok && fe.Type == TypeDir && (fe.Opaque || !fvis)
		if fok && !pure && fe.Type == TypeDir && fvis {
			has, _, err := c.baseHas(ctx, fr)
			if err != nil {
				return err
			}
			pure = !has
		}
		if !pure {
			return vfs.NewError(vfs.KindOther, f, syscall.EXDEV)
		}
	}
	pt, err := c.ensureDir(ctx, vfs.Parent(t), 0)
	if err != nil {
		return rebaseWrite(err, t)
	}
	tr := vfs.Join(pt, vfs.Base(t))
	te, tok, _, tvis := c.look(tr)
	var tst vfs.FileInfo
	tbase := false
	if tvis {
		if tbase, tst, err = c.baseHas(ctx, tr); err != nil {
			return err
		}
	}
	// The moved entry, with to's origin.
	var moved Entry
	switch {
	case fok:
		moved = fe
	case fst.Link:
		target, err := vfs.Readlink(ctx, c.base, fr)
		if err != nil {
			return rebase(err, fr, f)
		}
		moved = Entry{Type: TypeLink, Target: target, ModTime: fst.LinkModTime}
	default:
		if moved, err = c.copyUp(ctx, fr, fst); err != nil {
			return rebase(err, fr, f)
		}
	}
	if tok {
		keepOrigin(&moved, te)
	} else {
		c.origin(ctx, &moved, tr, tst)
	}
	var ops []op
	if fdir {
		moved.Opaque = tbase
		if tok {
			ops = append(ops, op{Op: "rm", Path: tr})
		}
		ops = append(ops, op{Op: "mv", From: fr, Path: tr, E: &moved})
	} else {
		ops = append(ops, c.set(tr, moved))
	}
	fhas := false
	if fvis {
		if fhas, _, err = c.baseHas(ctx, fr); err != nil {
			return err
		}
	}
	switch {
	case fhas:
		w := Entry{Type: TypeWhiteout}
		keepOrigin(&w, fe)
		if !fok {
			c.origin(ctx, &w, fr, fst)
		}
		ops = append(ops, c.set(fr, w))
	case !fdir:
		ops = append(ops, op{Op: "rm", Path: fr})
	}
	if err := c.commit(ops...); err != nil {
		return vfs.WriteFailed(t, err)
	}
	if !fdir {
		c.watchers.Notify(vfs.Change{Path: t, Op: vfs.ChangeWrite})
		c.watchers.Notify(vfs.Change{Path: f, Op: vfs.ChangeDelete})
	}
	return nil
}
