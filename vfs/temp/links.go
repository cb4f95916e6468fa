package temp

import (
	"context"
	iofs "io/fs"
	"strings"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

var (
	_ vfs.Symlinker  = (*FS)(nil)
	_ vfs.ModeSetter = (*FS)(nil)
	_ vfs.TimeSetter = (*FS)(nil)
)

// Links, modes and times live in memory like everything else. A link's
// target is a path of the tree: an absolute one from the tree's root, a
// relative one from the link's directory; ".." above the root stays at
// the root, so following a link never leaves the tree. Exact-path verbs
// follow links (at most maxLinks per path); Write, Delete and Rename act
// on a link itself at the end of a path, whatever it leads to; List yields
// every link (DirEntry.Link, Kind what it leads to, KindMissing when it
// dangles); walks (Glob, Grep) never descend into a link and keep only
// links to files, as vfs/local does.

// maxLinks bounds the links followed for one path, as the kernel's limit.
const maxLinks = 40

// walk finds the node at clean p, following links in its parents and,
// with followLast, at its end. It returns nil when p names nothing (a
// dangling link, a loop, a file as a parent), else the node and its path
// with no links in it. Callers hold mu.
func (fs *FS) walk(p string, followLast bool) (*node, string) {
	todo := vfs.Split(p)
	n, at := fs.root, "/"
	for hops := 0; len(todo) > 0; {
		seg := todo[0]
		todo = todo[1:]
		if !n.dir {
			return nil, ""
		}
		c := n.children[seg]
		if c == nil {
			return nil, ""
		}
		if c.isLink && (len(todo) > 0 || followLast) {
			if hops++; hops > maxLinks {
				return nil, ""
			}
			target := c.link
			if !strings.HasPrefix(target, "/") {
				target = at + "/" + target
			}
			todo = append(vfs.Split(vfs.Clean(target)), todo...)
			n, at = fs.root, "/"
			continue
		}
		n, at = c, vfs.Join(at, seg)
	}
	return n, at
}

// realPath maps clean p to a path with no link in its parents (its last
// segment kept as it is): what Delete and Rename act on. Missing parents
// stay as they are (Rename makes them). ok is false when a parent is a
// file, or a link to one or to nothing. Callers hold mu.
func (fs *FS) realPath(p string) (string, bool) {
	if p == "/" {
		return p, true
	}
	parent := vfs.Parent(p)
	d, at := fs.walk(parent, true)
	switch {
	case d == nil:
		rp, ok := fs.realPath(parent)
		if !ok {
			return "", false
		}
		if n, _ := fs.walk(rp, false); n != nil {
			return "", false // a dangling link or a file where a directory should be
		}
		return vfs.Join(rp, vfs.Base(p)), true
	case !d.dir:
		return "", false
	}
	return vfs.Join(at, vfs.Base(p)), true
}

// Symlink makes a link at path to target (vfs.Symlinker), making missing
// parents; anything at path fails with EEXIST.
func (fs *FS) Symlink(ctx context.Context, target, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if target == "" || strings.IndexByte(target, 0) >= 0 {
		return vfs.WriteFailed(p, syscall.EINVAL)
	}
	fs.mu.Lock()
	d, name, err := fs.parentFor(p)
	if err == nil && d.children[name] != nil {
		err = vfs.WriteFailed(p, syscall.EEXIST)
	}
	if err == nil {
		now := fs.now()
		d.children[name] = &node{isLink: true, link: target, mtime: now}
		d.mtime = now
	}
	fs.mu.Unlock()
	if err != nil {
		return err
	}
	fs.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return nil
}

// Readlink returns the target of the link at path (vfs.Symlinker).
func (fs *FS) Readlink(ctx context.Context, path string) (string, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	n, _ := fs.walk(p, false)
	switch {
	case n == nil:
		return "", vfs.NotFound(p)
	case !n.isLink:
		return "", vfs.NewError(vfs.KindOther, p, syscall.EINVAL)
	}
	return n.link, nil
}

// SetMode keeps mode's permission, setuid, setgid and sticky bits for the
// file or directory at path (vfs.ModeSetter), links followed.
func (fs *FS) SetMode(ctx context.Context, path string, mode iofs.FileMode) error {
	return fs.setMeta(ctx, path, func(n *node) {
		n.mode = mode & (iofs.ModePerm | iofs.ModeSetuid | iofs.ModeSetgid | iofs.ModeSticky)
	})
}

// SetModTime sets the modification time Stat reports for the file or
// directory at path (vfs.TimeSetter), links followed.
func (fs *FS) SetModTime(ctx context.Context, path string, mtime time.Time) error {
	return fs.setMeta(ctx, path, func(n *node) { n.mtime = mtime })
}

func (fs *FS) setMeta(ctx context.Context, path string, set func(*node)) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	fs.mu.Lock()
	n := fs.lookup(p)
	if n != nil {
		set(n) // walks read only dir and data without the lock
	}
	fs.mu.Unlock()
	if n == nil {
		return vfs.NotFound(p)
	}
	if !n.dir {
		fs.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	}
	return nil
}

var _ vfs.LinkTimeSetter = (*FS)(nil)

// SetLinkModTime sets the modification time of the link at path itself
// (vfs.LinkTimeSetter).
func (fs *FS) SetLinkModTime(ctx context.Context, path string, mtime time.Time) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	n, _ := fs.walk(p, false)
	switch {
	case n == nil:
		return vfs.NotFound(p)
	case !n.isLink:
		return vfs.NewError(vfs.KindOther, p, syscall.EINVAL)
	}
	n.mtime = mtime
	return nil
}
