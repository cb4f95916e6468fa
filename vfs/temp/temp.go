// Package temp provides in-memory trees: [New], a mutable tree seeded from a
// map of files (the contract's tempFs), and [Empty], a tree with no files
// that refuses writes (emptyFs).
//
// A temp tree is safe for concurrent use. Streams copy one directory's
// entries under a read lock and yield without holding it, so a consumer may
// write to the tree while iterating. Directories exist while a file is under
// them; deleting the last file under a directory removes it. A tree also
// keeps symbolic links, modes and modification times in memory
// (vfs.Symlinker, vfs.ModeSetter, vfs.TimeSetter; links are followed
// inside the tree only, see links.go) and moves files and directories in
// one step (vfs.Renamer).
package temp

import (
	"context"
	"io"
	iofs "io/fs"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/grepscan"
)

// FS is an in-memory tree.
type FS struct {
	mu   sync.RWMutex
	root *node
	now  func() time.Time
	vfs.Watchers
}

type node struct {
	dir      bool
	children map[string]*node // dir only
	data     []byte           // file only; never mutated in place
	etag     string
	mtime    time.Time
	mode     iofs.FileMode // set by SetMode; 0 until then
	isLink   bool          // a symbolic link to link (see links.go)
	link     string
}

var (
	_ vfs.FileSystem        = (*FS)(nil)
	_ vfs.RangeReader       = (*FS)(nil)
	_ vfs.ConditionalWriter = (*FS)(nil)
	_ vfs.Notifier          = (*FS)(nil)
)

// New returns a tree holding files, keyed by path (normalized with
// vfs.Clean). The map's byte slices are copied. A key that cannot be placed
// (a file below another file) is an error naming it.
func New(files map[string][]byte) (*FS, error) {
	fs := &FS{root: &node{dir: true, children: map[string]*node{}}, now: time.Now}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if err := fs.put(vfs.Clean(p), slices.Clone(files[p])); err != nil {
			return nil, err
		}
	}
	return fs, nil
}

// MustNew is New for fixtures with string contents; it panics on a bad key.
func MustNew(files map[string]string) *FS {
	m := make(map[string][]byte, len(files))
	for k, v := range files {
		m[k] = []byte(v)
	}
	fs, err := New(m)
	if err != nil {
		panic(err)
	}
	return fs
}

// lookup returns the node at clean p, links followed, or nil. Callers
// hold mu.
func (fs *FS) lookup(p string) *node {
	n, _ := fs.walk(p, true)
	return n
}

// parentFor returns the directory that holds clean p (links in p's
// parents followed, missing ones made) and p's last segment. A parent that
// is a file, or a link to one or to nothing, fails as write failed.
// Callers hold mu for writing (or own fs exclusively).
func (fs *FS) parentFor(p string) (*node, string, error) {
	if p == "/" {
		return nil, "", vfs.IsDir(p)
	}
	segs := vfs.Split(p)
	now := fs.now()
	n, at := fs.root, "/"
	for _, seg := range segs[:len(segs)-1] {
		c := n.children[seg]
		if c != nil && c.isLink {
			c, at = fs.walk(vfs.Join(at, seg), true)
			if c == nil {
				return nil, "", vfs.WriteFailed(p, vfs.NewError(vfs.KindOther, p, errNotDir))
			}
		} else {
			at = vfs.Join(at, seg)
		}
		if c == nil {
			c = &node{dir: true, children: map[string]*node{}, mtime: now}
			n.children[seg] = c
			n.mtime = now
		} else if !c.dir {
			return nil, "", vfs.WriteFailed(p, vfs.NewError(vfs.KindOther, p, errNotDir))
		}
		n = c
	}
	return n, segs[len(segs)-1], nil
}

// put stores a file at clean p, creating parents; a link at p is replaced,
// not written through; a file's mode is kept. Callers hold mu for writing
// (or own fs exclusively).
func (fs *FS) put(p string, data []byte) error {
	n, name, err := fs.parentFor(p)
	if err != nil {
		return err
	}
	var mode iofs.FileMode
	if c := n.children[name]; c != nil {
		if c.dir {
			return vfs.IsDir(p)
		}
		if !c.isLink {
			mode = c.mode // a rewrite keeps the file's mode, as on disk
		}
	}
	now := fs.now()
	n.children[name] = &node{data: data, etag: vfs.ContentETag(data), mtime: now, mode: mode}
	n.mtime = now
	return nil
}

type notDirError struct{}

func (notDirError) Error() string { return "a parent is a file" }

var errNotDir error = notDirError{}

// List yields the children of the directory at prefix: every link with
// DirEntry.Link set and the kind of what it leads to in the tree
// (KindMissing when it dangles).
func (fs *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		p := vfs.Clean(prefix)
		fs.mu.RLock()
		n := fs.lookup(p)
		if n == nil || !n.dir {
			fs.mu.RUnlock()
			return
		}
		entries := make([]vfs.DirEntry, 0, len(n.children))
		for name, c := range n.children {
			if c.isLink {
				// Every link, with the kind of what it leads to.
				c = fs.lookup(vfs.Join(p, name))
			}
			k := vfs.KindFile
			switch {
			case c == nil:
				k = vfs.KindMissing
			case c.dir:
				k = vfs.KindDir
			}
			entries = append(entries, vfs.DirEntry{Path: vfs.Join(p, name), Kind: k, Link: n.children[name].isLink})
		}
		fs.mu.RUnlock()
		slices.SortFunc(entries, vfs.CompareDirEntries)
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				yield(vfs.DirEntry{}, err)
				return
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// Stat describes path, following links (FileInfo.Link says path is one,
// FileInfo.LinkModTime is then the link's own time);
// Mode is what SetMode set, 0 until then (HasMode stays false: the tree
// has no owners).
func (fs *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	n, _ := fs.walk(p, false)
	var out vfs.FileInfo
	if n != nil && n.isLink {
		out.Link, out.LinkModTime = true, n.mtime
		n = fs.lookup(p)
	}
	out.Path = p
	switch {
	case n == nil:
		out.Kind = vfs.KindMissing
	case n.dir:
		out.Kind, out.ModTime, out.Mode = vfs.KindDir, n.mtime, n.mode
	default:
		out.Kind, out.Size, out.ModTime, out.ETag, out.Mode = vfs.KindFile, int64(len(n.data)), n.mtime, n.etag, n.mode
	}
	return out, nil
}

// Glob yields the entries under dir matching pattern.
func (fs *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Glob(ctx, fs, pattern, dir)
}

// file returns the data of the file at clean p. The slice is shared and
// must not be modified.
func (fs *FS) file(ctx context.Context, p string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fs.mu.RLock()
	defer fs.mu.RUnlock()
	n := fs.lookup(p)
	switch {
	case n == nil:
		return nil, vfs.NotFound(p)
	case n.dir:
		return nil, vfs.IsDir(p)
	}
	return n.data, nil
}

// Read returns a copy of the file at path.
func (fs *FS) Read(ctx context.Context, path string) ([]byte, error) {
	data, err := fs.file(ctx, vfs.Clean(path))
	if err != nil {
		return nil, err
	}
	return slices.Clone(data), nil
}

// ReadAt reads part of the file at path.
func (fs *FS) ReadAt(ctx context.Context, path string, p []byte, off int64) (int, error) {
	data, err := fs.file(ctx, vfs.Clean(path))
	if err != nil {
		return 0, err
	}
	if off >= int64(len(data)) {
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Grep scans the files under q.Path. Files are scanned in place, without
// copying: the walk takes each file's contents as they are when it reaches
// the file (contents are never modified in place), under the read lock
// only while it lists a directory. A hit copies its line, cut to
// q.MaxLineBytes when set, so grepping a long line costs no more than
// that beyond the file the tree already holds.
func (fs *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return func(yield func(vfs.GrepResult, error) bool) {
		var n *node // the scope's node, looked up once
		vfs.GrepTree(ctx, q, vfs.GrepSource{
			Stat: func(ctx context.Context, scope string) (vfs.FileInfo, error) {
				if err := ctx.Err(); err != nil {
					return vfs.FileInfo{}, err
				}
				fs.mu.RLock()
				n = fs.lookup(scope)
				fs.mu.RUnlock()
				switch {
				case n == nil:
					return vfs.FileInfo{Path: scope, Kind: vfs.KindMissing}, nil
				case n.dir:
					return vfs.FileInfo{Path: scope, Kind: vfs.KindDir}, nil
				}
				return vfs.FileInfo{Path: scope, Kind: vfs.KindFile}, nil
			},
			File: func(scope string) grepscan.File { return grepFile(scope, n.data) },
			Dir: func(ctx context.Context, scope string, filter *vfs.GrepFilter) iter.Seq2[grepscan.File, error] {
				return func(yield func(grepscan.File, error) bool) { fs.walkFiles(ctx, scope, n, filter, yield) }
			},
		})(yield)
	}
}

func grepFile(p string, data []byte) grepscan.File {
	return grepscan.File{Path: p, Load: func(ctx context.Context, _ *[]byte) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return data, nil
	}}
}

// walkFiles yields the files under the directory n at p that pass filter,
// in path order. It returns false when the walk stopped.
func (fs *FS) walkFiles(ctx context.Context, p string, n *node, filter *vfs.GrepFilter, yield func(grepscan.File, error) bool) bool {
	if err := ctx.Err(); err != nil {
		yield(grepscan.File{}, err)
		return false
	}
	// A subdirectory sorts at "name/": its files' paths continue with '/'.
	type kid struct {
		key, name string
		n         *node
	}
	fs.mu.RLock()
	kids := make([]kid, 0, len(n.children))
	for name, c := range n.children {
		key := name
		if c.isLink {
			// A link to a file is grepped as a file; any other is left out.
			if c = fs.lookup(vfs.Join(p, name)); c == nil || c.dir {
				continue
			}
		}
		if c.dir {
			key += "/"
		}
		kids = append(kids, kid{key, name, c})
	}
	fs.mu.RUnlock()
	slices.SortFunc(kids, func(a, b kid) int { return strings.Compare(a.key, b.key) })
	prefix := p + "/"
	if p == "/" {
		prefix = "/"
	}
	for _, k := range kids {
		path := prefix + k.name
		if k.n.dir {
			if !fs.walkFiles(ctx, path, k.n, filter, yield) {
				return false
			}
			continue
		}
		if filter.Match(path) && !yield(grepFile(path, k.n.data), nil) {
			return false
		}
	}
	return true
}

// Write creates or replaces the file at path.
func (fs *FS) Write(ctx context.Context, path string, data []byte) error {
	_, err := fs.WriteIf(ctx, path, data, vfs.Precondition{})
	return err
}

// WriteIf writes data when cond holds, atomically with the check.
func (fs *FS) WriteIf(ctx context.Context, path string, data []byte, cond vfs.Precondition) (string, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return "", err
	}
	data = slices.Clone(data)
	fs.mu.Lock()
	cur := fs.lookup(p)
	if (cond.IfNoneMatch && cur != nil) ||
		(cond.IfMatch != "" && (cur == nil || cur.dir || cur.etag != cond.IfMatch)) {
		fs.mu.Unlock()
		return "", vfs.NewError(vfs.KindConflict, p, nil)
	}
	err := fs.put(p, data)
	var etag string
	if err == nil {
		etag = fs.lookup(p).etag
	}
	fs.mu.Unlock()
	if err != nil {
		return "", err
	}
	fs.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	return etag, nil
}

// Delete removes the file at path, and any directories it leaves empty.
func (fs *FS) Delete(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	fs.mu.Lock()
	rp, ok := fs.realPath(p)
	var n *node
	if ok {
		n, _ = fs.walk(rp, false) // a link is removed, not its target
	}
	// A link is removed itself, whatever it leads to (a directory,
	// nothing), as in vfs/local and as unlink(2) does.
	switch {
	case n == nil:
		fs.mu.Unlock()
		return vfs.NotFound(p)
	case n.dir:
		fs.mu.Unlock()
		return vfs.IsDir(p)
	}
	now := fs.now()
	for q := rp; q != "/"; q = vfs.Parent(q) {
		parent := fs.lookup(vfs.Parent(q))
		delete(parent.children, vfs.Base(q))
		parent.mtime = now
		if len(parent.children) > 0 || vfs.Parent(q) == "/" {
			break
		}
	}
	fs.mu.Unlock()
	fs.Notify(vfs.Change{Path: p, Op: vfs.ChangeDelete})
	return nil
}

// Search yields nothing: a temp tree has no index.
func (fs *FS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Empty[vfs.SearchResult]()
}
