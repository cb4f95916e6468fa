package temp

import (
	"context"
	"syscall"

	"github.com/julyfs/julyfs/vfs"
)

var _ vfs.Renamer = (*FS)(nil)

// Rename moves the file or directory at from to to under the tree's lock
// (vfs.Renamer): atomic, replacing a file at to and making to's parents.
// A directory exists here only while it holds files, so a directory at to
// is never empty: moving a directory onto one fails with ENOTEMPTY, a file
// onto one with "is a directory". A file's etag and modification time
// move with it. Watchers hear a delete of each moved file's old path and
// a write of its new one.
func (fs *FS) Rename(ctx context.Context, from, to string) error {
	f, t := vfs.Clean(from), vfs.Clean(to)
	if err := ctx.Err(); err != nil {
		return err
	}
	fs.mu.Lock()
	// Both paths with the links in their parents resolved; a link at from
	// is moved itself, as rename(2) moves it, whatever it leads to (a
	// dangling one too).
	rf, okf := fs.realPath(f)
	rt, okt := fs.realPath(t)
	var src *node
	if okf {
		src, _ = fs.walk(rf, false)
	}
	var err error
	switch {
	case src == nil:
		err = vfs.NotFound(f)
	case f == "/":
		err = vfs.WriteFailed(f, syscall.EBUSY)
	case t == "/":
		err = vfs.WriteFailed(t, syscall.EBUSY)
	case !okt:
		err = vfs.WriteFailed(t, syscall.ENOTDIR)
	case rf == rt:
	case vfs.HasPrefix(rt, rf):
		err = vfs.WriteFailed(t, syscall.EINVAL)
	default:
		err = fs.move(rf, rt, src)
	}
	var moved []string
	if err == nil && rf != rt {
		moved = files(t, src)
	}
	fs.mu.Unlock()
	for _, p := range moved {
		r, _ := vfs.Rel(p, t)
		fs.Notify(vfs.Change{Path: vfs.Join(f, r), Op: vfs.ChangeDelete})
		fs.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	}
	return err
}

// move puts the node src (at clean f) at clean t and takes it from f,
// removing the directories it leaves empty; a link at t is replaced. f and
// t have no links in their parents (see realPath). Callers hold mu for
// writing.
func (fs *FS) move(f, t string, src *node) error {
	if dst, _ := fs.walk(t, false); dst != nil && !dst.isLink {
		switch {
		case dst.dir && !src.dir:
			return vfs.NewError(vfs.KindIsDir, t, syscall.EISDIR)
		case dst.dir:
			return vfs.WriteFailed(t, syscall.ENOTEMPTY)
		case src.dir:
			return vfs.WriteFailed(t, syscall.ENOTDIR)
		}
	}
	now := fs.now()
	segs := vfs.Split(t)
	n := fs.root
	for _, seg := range segs[:len(segs)-1] {
		c := n.children[seg]
		if c == nil {
			c = &node{dir: true, children: map[string]*node{}, mtime: now}
			n.children[seg] = c
			n.mtime = now
		} else if !c.dir {
			return vfs.WriteFailed(t, syscall.ENOTDIR)
		}
		n = c
	}
	n.children[segs[len(segs)-1]] = src
	n.mtime = now
	for q := f; q != "/"; q = vfs.Parent(q) {
		parent := fs.lookup(vfs.Parent(q))
		delete(parent.children, vfs.Base(q))
		parent.mtime = now
		if len(parent.children) > 0 || vfs.Parent(q) == "/" {
			break
		}
	}
	return nil
}

// files lists the paths of the files at or under the node n at clean p.
// Callers hold mu.
func files(p string, n *node) []string {
	if !n.dir {
		return []string{p}
	}
	var out []string
	for name, c := range n.children {
		out = append(out, files(vfs.Join(p, name), c)...)
	}
	return out
}
