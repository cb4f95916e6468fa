package local

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
)

// A dir is an open directory of the tree. Walks hold one per level of depth
// and open each child relative to it by a single name with O_NOFOLLOW, so a
// walk costs one open per directory and one per file, and cannot leave the
// root: the first handle comes from the os.Root, and every later open is
// one path component that is neither "..", nor a link.
type dir struct {
	fsys *FS
	path string   // clean posix path
	f    *os.File // os.Root's file fd belongs to (see openFD), or nil: fd is bare
	fd   int
	refs atomic.Int32 // the walker's reference plus one per pending file read
}

// errNotDir reports that an exact path names a file, not a directory.
var errNotDir = errors.New("not a directory")

// openDir opens the directory at name (relative to the root), following
// links inside the root. A file yields errNotDir.
func (fsys *FS) openDir(name string) (*dir, error) {
	fd, f, err := fsys.openFD(name, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK)
	if err != nil {
		if errors.Is(err, unix.ENOTDIR) {
			if fi, serr := fsys.stat(name); serr == nil && !fi.IsDir() {
				return nil, errNotDir
			}
		}
		return nil, err
	}
	d := &dir{f: f, fd: fd}
	d.refs.Store(1)
	return d, nil
}

// sub opens the child directory name of d without following a link.
func (d *dir) sub(name string) (*dir, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	c := &dir{fsys: d.fsys, path: d.child(name), fd: fd}
	c.refs.Store(1)
	return c, nil
}

func (d *dir) acquire() { d.refs.Add(1) }

// release drops a reference and closes the directory after the last one.
func (d *dir) release() {
	if d.refs.Add(-1) == 0 {
		if d.f != nil {
			d.f.Close()
		} else {
			unix.Close(d.fd)
		}
	}
}

// close drops the opener's reference.
func (d *dir) close() { d.release() }

// entry is one child of a directory as List sees it.
type entry struct {
	name string
	kind vfs.EntryKind
	link bool // a link; kind is what it leads to inside the root
}

// entries reads d's children sorted by name, with their kinds from the
// directory itself (no stat per entry). Special files are left out. Every
// link is kept, with the kind of what it reaches inside the root (one stat,
// followed): a file, a directory, or KindMissing for nothing or outside the
// root. Walks skip all but links to files (vfs.DirEntry.SkipInWalk).
func (d *dir) entries() ([]entry, error) {
	var out []entry
	var links, temps []string
	err := readDirents(d.fd, func(name string, typ byte, _ uint64) {
		if strings.HasPrefix(name, tempPrefix) {
			temps = append(temps, name) // a write in flight, or left by one that died
			return
		}
		switch typ {
		case unix.DT_UNKNOWN: // the filesystem does not say: ask
			var st unix.Stat_t
			if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				return
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFREG:
				out = append(out, entry{name: name, kind: vfs.KindFile})
			case unix.S_IFDIR:
				out = append(out, entry{name: name, kind: vfs.KindDir})
			case unix.S_IFLNK:
				links = append(links, name)
			}
		case unix.DT_REG:
			out = append(out, entry{name: name, kind: vfs.KindFile})
		case unix.DT_DIR:
			out = append(out, entry{name: name, kind: vfs.KindDir})
		case unix.DT_LNK:
			links = append(links, name)
		}
	})
	if err != nil {
		return nil, err
	}
	if temps != nil {
		sweepTemps(d.fd, temps)
	}
	for _, name := range links {
		e := entry{name: name, kind: vfs.KindMissing, link: true}
		if fi, err := d.fsys.stat(rel(d.child(name))); err == nil {
			e.kind = kindOf(fi.Mode())
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// child returns the path of d's child name (a single clean component).
func (d *dir) child(name string) string {
	if d.path == "/" {
		return "/" + name
	}
	return d.path + "/" + name
}

// openFile opens the regular file name in d for reading and returns its
// size. A link (known from the listing) is resolved inside the root.
func (d *dir) openFile(name string, link bool) (io.ReadCloser, int64, error) {
	if link {
		f, fi, err := d.fsys.open(d.child(name))
		if err != nil {
			return nil, 0, err
		}
		return f, fi.Size(), nil
	}
	p := d.child(name)
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) {
			return nil, 0, vfs.NotFound(p) // vanished or replaced by a link since the listing
		}
		return nil, 0, vfs.NewError(vfs.KindOther, p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, 0, vfs.NewError(vfs.KindOther, p, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return fdFile(fd), st.Size, nil
	case unix.S_IFDIR:
		unix.Close(fd)
		return nil, 0, vfs.IsDir(p)
	}
	unix.Close(fd)
	return nil, 0, vfs.NotFound(p)
}

// fdFile is an open raw descriptor, read and closed.
type fdFile int

func (f fdFile) Read(p []byte) (int, error) { return fdReader(f).Read(p) }
func (f fdFile) Close() error               { return unix.Close(int(f)) }

// fdReader reads a raw descriptor.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(int(r), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// walkFn visits one entry of a walk: its directory (valid during the call;
// acquire it to use it later), the entry and its path.
type walkFn func(d *dir, e entry, path string) bool

// walkEvent is an entry to visit or a subtree to descend into.
type walkEvent struct {
	key string
	e   entry
	sub bool
}

// walk visits every entry strictly under d in vfs.Walk's order (full-path
// lexicographic), descending at most depth levels (0: unlimited), never
// into a link, and leaving out links to anything but a file. It
// returns false when visit stopped it, or with the first error.
func (d *dir) walk(ctx context.Context, depth int, visit walkFn) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	ents, err := d.entries()
	if err != nil {
		return false, vfs.NewError(vfs.KindOther, d.path, err)
	}
	// Entries come sorted by name; a subtree sorts at the key "name/".
	// Only names containing a byte below '/' can reorder, so sort events
	// only when one does.
	events := make([]walkEvent, 0, len(ents)+len(ents)/4)
	reorder := false
	for _, e := range ents {
		if e.link && e.kind != vfs.KindFile {
			continue // a link to a directory or to nothing: never followed
		}
		events = append(events, walkEvent{key: e.name, e: e})
		if e.kind == vfs.KindDir && !e.link && depth != 1 {
			events = append(events, walkEvent{key: e.name + "/", e: e, sub: true})
		}
		if !reorder {
			for i := 0; i < len(e.name); i++ {
				if e.name[i] < '/' {
					reorder = true
					break
				}
			}
		}
	}
	if reorder {
		slices.SortStableFunc(events, func(a, b walkEvent) int { return strings.Compare(a.key, b.key) })
	}
	for _, ev := range events {
		if !ev.sub {
			if !visit(d, ev.e, d.child(ev.e.name)) {
				return false, nil
			}
			continue
		}
		c, err := d.sub(ev.e.name)
		if err != nil {
			if isMissing(err) || errors.Is(err, fs.ErrPermission) {
				continue // unreadable, or removed or replaced by a link since the listing
			}
			return false, vfs.NewError(vfs.KindOther, d.child(ev.e.name), errno(err))
		}
		more, err := c.walk(ctx, depth-1, visit)
		c.close()
		if err != nil || !more {
			return false, err
		}
	}
	return true, nil
}

// openTree opens the directory at clean p for a walk. ok is false when p
// is missing or a file.
func (fsys *FS) openTree(p string) (d *dir, ok bool, err error) {
	d, err = fsys.openDir(rel(p))
	if err != nil {
		if isMissing(err) || errors.Is(err, errNotDir) {
			return nil, false, nil
		}
		return nil, false, otherError(p, err)
	}
	d.fsys, d.path = fsys, p
	return d, true, nil
}

// walkEntries is vfs.Walk over this tree's handles: every entry under dir
// in path order, at most maxDepth deep (0: unlimited), without following
// directory links.
func (fsys *FS) walkEntries(ctx context.Context, dirPath string, maxDepth int) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		d, ok, err := fsys.openTree(vfs.Clean(dirPath))
		if err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		if !ok {
			return
		}
		defer d.close()
		_, err = d.walk(ctx, maxDepth, func(_ *dir, e entry, path string) bool {
			return yield(vfs.DirEntry{Path: path, Kind: e.kind, Link: e.link}, nil)
		})
		if err != nil {
			yield(vfs.DirEntry{}, err)
		}
	}
}
