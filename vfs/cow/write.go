package cow

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

const (
	fileMode = 0o644
	dirMode  = 0o755
)

// linkTarget is the path a link at dir/… with target leads to.
func linkTarget(dir, target string) string {
	if !strings.HasPrefix(target, "/") {
		target = dir + "/" + target
	}
	return vfs.Clean(target)
}

// MaxBaseCopy bounds the base files whose contents the layer keeps when
// it first shadows them (Entry.BaseHash): a larger one is compared by
// its etag only, and a three-way diff of it has no base side.
const MaxBaseCopy = 1 << 20

// origin fills e's BaseKind, BaseETag and BaseHash from the base's info
// st of clean path t: what the base had when the layer first shadowed
// it. A base file up to MaxBaseCopy bytes is kept as a blob; one that
// cannot be read is compared by its etag only.
func (c *FS) origin(ctx context.Context, e *Entry, t string, st vfs.FileInfo) {
	origin(e, st)
	if e.BaseKind != "file" || st.Size > MaxBaseCopy {
		return
	}
	if data, err := c.base.Read(ctx, t); err == nil && len(data) <= MaxBaseCopy {
		if h, err := c.blobs.put(data); err == nil {
			e.BaseHash = h
		}
	}
}

// keepOrigin gives e the origin fields of prev, the entry it replaces.
func keepOrigin(e *Entry, prev Entry) {
	e.BaseKind, e.BaseETag, e.BaseHash = prev.BaseKind, prev.BaseETag, prev.BaseHash
}

// origin fills e's BaseKind and BaseETag from the base's info st.
func origin(e *Entry, st vfs.FileInfo) {
	e.BaseHash = ""
	switch {
	case st.Link:
		e.BaseKind, e.BaseETag = "link", ""
	case st.Kind == vfs.KindFile:
		e.BaseKind, e.BaseETag = "file", st.ETag
	case st.Kind == vfs.KindDir:
		e.BaseKind, e.BaseETag = "dir", ""
	default:
		e.BaseKind, e.BaseETag = "", ""
	}
}

// baseHas reports whether the base has anything at t (a dangling link
// too), with what it says of it.
func (c *FS) baseHas(ctx context.Context, t string) (bool, vfs.FileInfo, error) {
	st, err := c.base.Stat(ctx, t)
	if err != nil {
		return false, st, err
	}
	return st.Kind != vfs.KindMissing || st.Link, st, nil
}

// look returns a copy of the node at clean t (ok false when none) and
// whether the base shows below t's parent. Callers hold wmu.
func (c *FS) look(t string) (e Entry, ok, isDir, vis bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	vis = c.visibleLocked(vfs.Parent(t))
	if n := lookup(c.root, t); n != nil && t != "/" {
		return n.e, true, n.isDir(), vis
	}
	return Entry{}, t == "/", t == "/", vis
}

func (c *FS) set(t string, e Entry) op { return op{Op: "set", Path: t, E: &e} }

// ensureDir makes the directory at clean d a directory of the merged tree
// (the base's, or the layer's own, made with missing parents) and returns
// its path with links followed. Callers hold wmu.
func (c *FS) ensureDir(ctx context.Context, d string, hops int) (string, error) {
	if d == "/" {
		return "/", nil
	}
	if hops > maxLinks {
		return "", vfs.WriteFailed(d, syscall.ELOOP)
	}
	parent, err := c.ensureDir(ctx, vfs.Parent(d), hops)
	if err != nil {
		return "", err
	}
	t := vfs.Join(parent, vfs.Base(d))
	e, ok, isDir, vis := c.look(t)
	own := Entry{Type: TypeDir, Mode: dirMode, ModTime: now()}
	switch {
	case ok && isDir:
		return t, nil
	case ok && e.Type == TypeLink:
		return c.ensureDir(ctx, linkTarget(parent, e.Target), hops+1)
	case ok && e.Type == TypeFile:
		return "", vfs.WriteFailed(t, syscall.ENOTDIR)
	case ok: // a whiteout: the base's directory stays hidden
		own.Opaque = true
		keepOrigin(&own, e)
		return t, c.commit(c.set(t, own))
	case !vis:
		return t, c.commit(c.set(t, own))
	}
	st, err := c.base.Stat(ctx, t)
	if err != nil {
		return "", err
	}
	switch {
	case st.Link:
		target, err := vfs.Readlink(ctx, c.base, t)
		if err != nil {
			return "", err
		}
		if st.Kind != vfs.KindDir {
			return "", vfs.WriteFailed(t, syscall.ENOTDIR)
		}
		return c.ensureDir(ctx, linkTarget(parent, target), hops+1)
	case st.Kind == vfs.KindDir:
		return t, nil
	case st.Kind == vfs.KindFile:
		return "", vfs.WriteFailed(t, syscall.ENOTDIR)
	}
	return t, c.commit(c.set(t, own))
}

// Write creates or replaces the file at path in the layer. A link at the
// end of path is replaced, as on a host disk.
func (c *FS) Write(ctx context.Context, path string, data []byte) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(ctx, p, func() (string, int64, error) {
		h, err := c.blobs.put(data)
		return h, int64(len(data)), err
	})
}

// writeLocked makes the file at p the blob content returns, called once
// the target is known to be writable. Callers hold wmu.
func (c *FS) writeLocked(ctx context.Context, p string, content func() (string, int64, error)) error {
	if c.view {
		return vfs.ReadOnly(p)
	}
	if p == "/" {
		return vfs.IsDir(p)
	}
	parent, err := c.ensureDir(ctx, vfs.Parent(p), 0)
	if err != nil {
		return rebaseWrite(err, p)
	}
	t := vfs.Join(parent, vfs.Base(p))
	prev, ok, isDir, vis := c.look(t)
	ne := Entry{Type: TypeFile, Mode: fileMode}
	switch {
	case ok && isDir:
		return vfs.IsDir(p)
	case ok:
		keepOrigin(&ne, prev)
		if prev.Type == TypeFile {
			ne.Mode = prev.Mode
		}
	case vis:
		st, err := c.base.Stat(ctx, t)
		if err != nil {
			return err
		}
		if st.Kind == vfs.KindDir && !st.Link {
			return vfs.IsDir(p)
		}
		c.origin(ctx, &ne, t, st)
		if st.Kind == vfs.KindFile && !st.Link && st.HasMode {
			ne.Mode = vfs.ModeBits(st.Mode)
		}
	}
	h, size, err := content()
	if err != nil {
		return vfs.WriteFailed(p, err)
	}
	ne.Hash, ne.Size, ne.ModTime = h, size, now()
	if err := c.commit(c.set(t, ne)); err != nil {
		return vfs.WriteFailed(p, err)
	}
	c.watchers.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return nil
}

// rebaseWrite makes an error about a parent of p one about p, its cause
// kept.
func rebaseWrite(err error, p string) error {
	var pe *vfs.PathError
	if errors.As(err, &pe) && pe.Path != p {
		return pe.WithPath(p)
	}
	return err
}

// WriteIf writes when cond holds (vfs.ConditionalWriter), atomically with
// every other change made through the layer.
func (c *FS) WriteIf(ctx context.Context, path string, data []byte, cond vfs.Precondition) (string, error) {
	p := vfs.Clean(path)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.check(ctx, p, cond); err != nil {
		return "", err
	}
	var h string
	err := c.writeLocked(ctx, p, func() (string, int64, error) {
		var err error
		h, err = c.blobs.put(data)
		return h, int64(len(data)), err
	})
	if err != nil {
		return "", err
	}
	return Entry{Hash: h}.ETag(), nil
}

// check fails with conflict unless cond holds for p. Callers hold wmu.
func (c *FS) check(ctx context.Context, p string, cond vfs.Precondition) error {
	info, err := c.Stat(ctx, p)
	if err != nil {
		return err
	}
	if cond.IfNoneMatch && info.Kind != vfs.KindMissing {
		return vfs.NewError(vfs.KindConflict, p, nil)
	}
	if cond.IfMatch != "" && (info.Kind != vfs.KindFile || info.ETag != cond.IfMatch) {
		return vfs.NewError(vfs.KindConflict, p, nil)
	}
	return nil
}

// parentOf returns the path of p's parent with links followed, or ok
// false when it is no directory of the merged tree.
func (c *FS) parentOf(p string) (string, bool) {
	r := c.resolve(vfs.Parent(p), true)
	if r.missing || r.n != nil && !r.isDir() {
		return "", false
	}
	return r.path, true
}

// Delete removes the file (or link) at path: the layer's own is dropped,
// and a base's is hidden by a whiteout.
func (c *FS) Delete(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == "/" {
		return vfs.IsDir(p)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	parent, ok := c.parentOf(p)
	if !ok {
		return vfs.NotFound(p)
	}
	t := vfs.Join(parent, vfs.Base(p))
	e, ok, isDir, vis := c.look(t)
	var o op
	switch {
	case ok && e.Type == TypeWhiteout:
		return vfs.NotFound(p)
	case ok && isDir:
		return vfs.IsDir(p)
	case ok:
		has := false
		if vis {
			var err error
			if has, _, err = c.baseHas(ctx, t); err != nil {
				return err
			}
		}
		o = op{Op: "rm", Path: t}
		if has {
			w := Entry{Type: TypeWhiteout}
			keepOrigin(&w, e)
			o = c.set(t, w)
		}
	case !vis:
		return vfs.NotFound(p)
	default:
		has, st, err := c.baseHas(ctx, t)
		switch {
		case err != nil:
			return err
		case !has:
			return vfs.NotFound(p)
		case st.Kind == vfs.KindDir && !st.Link:
			return vfs.IsDir(p)
		}
		w := Entry{Type: TypeWhiteout}
		c.origin(ctx, &w, t, st)
		o = c.set(t, w)
	}
	if err := c.commit(o); err != nil {
		return vfs.WriteFailed(p, err)
	}
	c.watchers.Notify(vfs.Change{Path: p, Op: vfs.ChangeDelete})
	return nil
}

// MakeDir makes the directory at path and missing parents in the layer
// (vfs.DirMaker). Over a deleted base directory it is opaque: the base's
// old contents stay hidden.
func (c *FS) MakeDir(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.ensureDir(ctx, p, 0)
	return err
}

// RemoveDir removes the empty directory at path (vfs.DirRemover): the
// layer's own is dropped, and a base's is hidden with all its subtree.
func (c *FS) RemoveDir(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if p == "/" {
		return vfs.NewError(vfs.KindOther, p, syscall.EBUSY)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	parent, ok := c.parentOf(p)
	if !ok {
		return vfs.NotFound(p)
	}
	t := vfs.Join(parent, vfs.Base(p))
	e, ok, isDir, vis := c.look(t)
	switch {
	case ok && e.Type == TypeWhiteout:
		return vfs.NotFound(p)
	case ok && !isDir:
		return vfs.NewError(vfs.KindOther, p, syscall.ENOTDIR)
	case !ok && !vis:
		return vfs.NotFound(p)
	case !ok:
		has, st, err := c.baseHas(ctx, t)
		switch {
		case err != nil:
			return err
		case !has:
			return vfs.NotFound(p)
		case st.Kind != vfs.KindDir || st.Link:
			return vfs.NewError(vfs.KindOther, p, syscall.ENOTDIR)
		}
	}
	for _, err := range c.List(ctx, t) {
		if err != nil {
			return err
		}
		return vfs.NewError(vfs.KindOther, p, syscall.ENOTEMPTY)
	}
	baseDir := false
	if vis { // the base's directory there, if any, must stay hidden
		_, st, err := c.baseHas(ctx, t)
		if err != nil {
			return err
		}
		baseDir = st.Kind == vfs.KindDir && !st.Link
	}
	o := op{Op: "rm", Path: t}
	if baseDir {
		o = c.set(t, Entry{Type: TypeWhiteout, BaseKind: "dir"})
	}
	return c.commit(o)
}

// Symlink makes a link at path to target in the layer (vfs.Symlinker).
func (c *FS) Symlink(ctx context.Context, target, path string) error {
	p := vfs.Clean(path)
	if target == "" {
		return vfs.WriteFailed(p, syscall.EINVAL)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	parent, err := c.ensureDir(ctx, vfs.Parent(p), 0)
	if err != nil {
		return rebaseWrite(err, p)
	}
	t := vfs.Join(parent, vfs.Base(p))
	e, ok, _, vis := c.look(t)
	l := Entry{Type: TypeLink, Target: target, ModTime: now()}
	switch {
	case ok && e.Type != TypeWhiteout:
		return vfs.WriteFailed(p, syscall.EEXIST)
	case ok:
		keepOrigin(&l, e)
	case vis:
		has, _, err := c.baseHas(ctx, t)
		if err != nil {
			return err
		}
		if has {
			return vfs.WriteFailed(p, syscall.EEXIST)
		}
	}
	if err := c.commit(c.set(t, l)); err != nil {
		return vfs.WriteFailed(p, err)
	}
	c.watchers.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return nil
}

// Readlink returns the target of the link at path (vfs.Symlinker): the
// layer's, or the base's through vfs.Readlink.
func (c *FS) Readlink(ctx context.Context, path string) (string, error) {
	p := vfs.Clean(path)
	r := c.resolve(p, false)
	switch {
	case r.missing:
		return "", vfs.NotFound(p)
	case r.n != nil:
		if e := r.e; e.Type == TypeLink {
			return e.Target, nil
		}
		return "", vfs.NewError(vfs.KindOther, p, syscall.EINVAL)
	}
	target, err := vfs.Readlink(ctx, c.base, r.path)
	if errors.Is(err, errors.ErrUnsupported) {
		st, err := c.base.Stat(ctx, r.path)
		if err != nil {
			return "", rebase(err, r.path, p)
		}
		if st.Kind == vfs.KindMissing {
			return "", vfs.NotFound(p)
		}
		return "", vfs.NewError(vfs.KindOther, p, syscall.EINVAL)
	}
	return target, rebase(err, r.path, p)
}

// copyUp is the layer's entry for the base's file at t, its contents
// stored.
func (c *FS) copyUp(ctx context.Context, t string, st vfs.FileInfo) (Entry, error) {
	data, err := c.base.Read(ctx, t)
	if err != nil {
		return Entry{}, err
	}
	h, err := c.blobs.put(data)
	if err != nil {
		return Entry{}, vfs.WriteFailed(t, err)
	}
	e := Entry{Type: TypeFile, Hash: h, Size: int64(len(data)), Mode: fileMode, ModTime: st.ModTime}
	if st.HasMode {
		e.Mode = vfs.ModeBits(st.Mode)
	}
	origin(&e, st)
	if e.BaseKind == "file" && len(data) <= MaxBaseCopy {
		e.BaseHash = h
	}
	return e, nil
}

// setMeta changes the entry of the file or directory at p (links
// followed, the base's too), copying a base file up first. Callers hold
// wmu.
func (c *FS) setMeta(ctx context.Context, p string, change func(*Entry)) error {
	path := p
	for hops := 0; ; hops++ {
		if hops > maxLinks {
			return vfs.NotFound(path)
		}
		r := c.resolve(p, true)
		if r.missing {
			return vfs.NotFound(path)
		}
		if r.n != nil && r.e.Type != "" {
			e := r.e
			change(&e)
			return c.commit(c.set(r.path, e))
		}
		st, err := c.base.Stat(ctx, r.path)
		if err != nil {
			return rebase(err, r.path, path)
		}
		switch {
		case st.Link && r.n == nil:
			target, err := vfs.Readlink(ctx, c.base, r.path)
			if err != nil {
				return rebase(err, r.path, path)
			}
			p = linkTarget(vfs.Parent(r.path), target)
			continue
		case st.Kind == vfs.KindMissing:
			return vfs.NotFound(path)
		case st.Kind == vfs.KindDir || r.n != nil:
			e := Entry{Type: TypeDir, Mode: dirMode, ModTime: st.ModTime, BaseKind: "dir"}
			if st.HasMode {
				e.Mode = vfs.ModeBits(st.Mode)
			}
			change(&e)
			return c.commit(c.set(r.path, e))
		}
		e, err := c.copyUp(ctx, r.path, st)
		if err != nil {
			return rebase(err, r.path, path)
		}
		change(&e)
		return c.commit(c.set(r.path, e))
	}
}

// SetMode sets the permission bits of the file or directory at path in
// the layer (vfs.ModeSetter); a base file is copied up.
func (c *FS) SetMode(ctx context.Context, path string, mode fs.FileMode) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.setMeta(ctx, vfs.Clean(path), func(e *Entry) { e.Mode = vfs.ModeBits(mode) })
}

// SetModTime sets the modification time of the file or directory at path
// in the layer (vfs.TimeSetter); a base file is copied up.
func (c *FS) SetModTime(ctx context.Context, path string, mtime time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.setMeta(ctx, vfs.Clean(path), func(e *Entry) { e.ModTime = mtime.Round(0) })
}

// SetLinkModTime sets the link at path's own time (vfs.LinkTimeSetter); a
// base link is copied up.
func (c *FS) SetLinkModTime(ctx context.Context, path string, mtime time.Time) error {
	p := vfs.Clean(path)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	r := c.resolve(p, false)
	switch {
	case r.missing:
		return vfs.NotFound(p)
	case r.n != nil:
		e := r.e
		if e.Type != TypeLink {
			return vfs.NewError(vfs.KindOther, p, syscall.EINVAL)
		}
		e.ModTime = mtime.Round(0)
		return c.commit(c.set(r.path, e))
	}
	st, err := c.base.Stat(ctx, r.path)
	if err != nil {
		return rebase(err, r.path, p)
	}
	if !st.Link {
		if st.Kind == vfs.KindMissing {
			return vfs.NotFound(p)
		}
		return vfs.NewError(vfs.KindOther, p, syscall.EINVAL)
	}
	target, err := vfs.Readlink(ctx, c.base, r.path)
	if err != nil {
		return rebase(err, r.path, p)
	}
	return c.commit(c.set(r.path, Entry{Type: TypeLink, Target: target, ModTime: mtime.Round(0), BaseKind: "link"}))
}
