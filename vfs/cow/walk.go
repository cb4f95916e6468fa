package cow

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/grepscan"
)

// child is a snapshot of one upper node of a directory being listed.
type child struct {
	name string
	typ  EntryType // "" for a pass-through directory
}

// children returns the upper children of the directory n, sorted by name.
func (c *FS) children(n *node) []child {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]child, 0, len(n.children))
	for _, name := range sortedNames(n) {
		out = append(out, child{name: name, typ: n.children[name].e.Type})
	}
	return out
}

// List yields the children of the directory at prefix: the layer's, and
// the base's that the layer neither shadows nor whites out, merged by
// name.
func (c *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		p := vfs.Clean(prefix)
		if err := ctx.Err(); err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		r := c.resolve(p, true)
		switch {
		case r.missing:
			return
		case r.n == nil:
			for e, err := range c.base.List(ctx, r.path) {
				if err != nil {
					yield(vfs.DirEntry{}, rebase(err, r.path, p))
					return
				}
				e.Path = vfs.Join(p, vfs.Base(e.Path))
				if !yield(e, nil) {
					return
				}
			}
			return
		case !r.isDir():
			return
		}
		upper := c.children(r.n)
		i := 0
		// emit yields the upper children before name (all, for ""),
		// and reports whether the base's entry name is shadowed.
		emit := func(name string, all bool) (shadowed, ok bool) {
			for ; i < len(upper) && (all || upper[i].name <= name); i++ {
				u := upper[i]
				if !all && u.name == name {
					shadowed = true
				}
				if u.typ == TypeWhiteout {
					if c.ignoreWhiteouts && !all && u.name == name {
						shadowed = false
					}
					continue
				}
				e, err := c.entry(ctx, vfs.Join(p, u.name), u.typ)
				if err != nil {
					yield(vfs.DirEntry{}, err)
					return shadowed, false
				}
				if !yield(e, nil) {
					return shadowed, false
				}
			}
			return shadowed, true
		}
		if r.base {
			for e, err := range c.base.List(ctx, r.path) {
				if err != nil {
					yield(vfs.DirEntry{}, rebase(err, r.path, p))
					return
				}
				name := vfs.Base(e.Path)
				shadowed, ok := emit(name, false)
				if !ok {
					return
				}
				if shadowed {
					continue
				}
				e.Path = vfs.Join(p, name)
				if !yield(e, nil) {
					return
				}
			}
		}
		emit("", true)
	}
}

// entry is the DirEntry of the upper node of type typ at p.
func (c *FS) entry(ctx context.Context, p string, typ EntryType) (vfs.DirEntry, error) {
	switch typ {
	case TypeFile:
		return vfs.DirEntry{Path: p, Kind: vfs.KindFile}, nil
	case TypeLink:
		info, err := c.Stat(ctx, p)
		if err != nil {
			return vfs.DirEntry{}, err
		}
		return vfs.DirEntry{Path: p, Kind: info.Kind, Link: true}, nil
	}
	return vfs.DirEntry{Path: p, Kind: vfs.KindDir}, nil
}

// Glob yields the paths under dir matching pattern. Where the layer
// changes nothing below the pattern's scope the base answers; else the
// merged tree is walked.
func (c *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	scope := vfs.Clean(dir)
	if strings.HasPrefix(pattern, "/") {
		scope = "/"
	}
	if c.clean(scope) {
		return c.base.Glob(ctx, pattern, dir)
	}
	return vfs.GlobWalk(ctx, c.Stat, func(ctx context.Context, dir string, maxDepth int) iter.Seq2[vfs.DirEntry, error] {
		return vfs.Walk(ctx, c.List, dir, maxDepth)
	}, pattern, dir)
}

// Grep yields the matching lines of the merged tree: the base's hits in
// files the layer leaves as they are, merged in path order with the hits
// in the layer's files. Where the layer changes nothing in the scope, the
// base answers alone.
func (c *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	q, err := vfs.CompileGrepQuery(q)
	if err != nil {
		return vfs.Fail[vfs.GrepResult](err)
	}
	scope := vfs.Clean(q.Path)
	q.Path = scope
	if c.clean(scope) {
		return c.baseGrep(ctx, q, false)
	}
	r := c.resolve(scope, true)
	switch {
	case r.missing:
		return vfs.Empty[vfs.GrepResult]()
	case r.path != scope:
		return vfs.Grep(ctx, c, q) // through a link of the layer: walk the merged tree
	}
	upper := vfs.GrepTree(ctx, q, vfs.GrepSource{
		Stat: c.upperStat,
		File: c.grepFile,
		Dir:  c.upperFiles,
	})
	if r.n != nil && !r.base {
		return upper
	}
	// The base's hits are filtered, so its stream runs uncapped and stops
	// when the merge has enough.
	bq := q
	bq.MaxResults = 0
	return vfs.Limit(vfs.Merge([]iter.Seq2[vfs.GrepResult, error]{c.baseGrep(ctx, bq, true), upper},
		vfs.CompareGrepResults, false), q.MaxResults)
}

// baseGrep is the base's Grep of q, a missing scope yielding nothing
// (the layer is a virtual tree, whatever its base), with filter the hits
// in files the layer changed dropped.
func (c *FS) baseGrep(ctx context.Context, q vfs.GrepQuery, filter bool) iter.Seq2[vfs.GrepResult, error] {
	return func(yield func(vfs.GrepResult, error) bool) {
		for h, err := range c.base.Grep(ctx, q) {
			if err != nil {
				var pe *vfs.PathError
				if errors.As(err, &pe) && pe.Kind == vfs.KindNotFound && pe.Path == q.Path {
					return
				}
				yield(h, err)
				return
			}
			if filter && !c.fallsToBase(h.Path) {
				continue
			}
			if !yield(h, nil) {
				return
			}
		}
	}
}

// upperStat is Stat for the layer's share of a grep: its own files and
// links to files, and directories; the base's paths are missing.
func (c *FS) upperStat(ctx context.Context, p string) (vfs.FileInfo, error) {
	r := c.resolve(p, false)
	if r.n == nil {
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
	}
	return c.Stat(ctx, p)
}

func (c *FS) grepFile(p string) grepscan.File {
	return grepscan.File{Path: p, Load: func(ctx context.Context, _ *[]byte) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := c.Read(ctx, p)
		switch vfs.KindOf(err) {
		case vfs.KindNotFound, vfs.KindIsDir:
			return nil, grepscan.SkipFile
		}
		return data, err
	}}
}

// upperFiles yields the layer's files (and links, which the scan reads
// through) under dir that filter admits, in path order.
func (c *FS) upperFiles(ctx context.Context, dir string, filter *vfs.GrepFilter) iter.Seq2[grepscan.File, error] {
	return func(yield func(grepscan.File, error) bool) {
		c.mu.RLock()
		var paths []string
		if n := lookup(c.root, dir); n != nil && n.isDir() {
			paths = upperPaths(n, dir, paths)
		}
		c.mu.RUnlock()
		for _, p := range paths {
			if !filter.Match(p) {
				continue
			}
			if err := ctx.Err(); err != nil {
				yield(grepscan.File{}, err)
				return
			}
			if !yield(c.grepFile(p), nil) {
				return
			}
		}
	}
}

// upperPaths appends the paths of the files and links below the directory
// n at p, in path order (a subtree sorts as name + "/" among its
// siblings, as in vfs.Walk). Links to anything but files are dropped by
// the scan's loader.
func upperPaths(n *node, p string, out []string) []string {
	type ev struct {
		key string
		n   *node
	}
	evs := make([]ev, 0, len(n.children))
	for name, ch := range n.children {
		switch {
		case ch.e.Type == TypeWhiteout:
		case ch.isDir():
			evs = append(evs, ev{name + "/", ch})
		default:
			evs = append(evs, ev{name, ch})
		}
	}
	slices.SortFunc(evs, func(a, b ev) int { return strings.Compare(a.key, b.key) })
	for _, e := range evs {
		name := strings.TrimSuffix(e.key, "/")
		if e.n.isDir() {
			out = upperPaths(e.n, vfs.Join(p, name), out)
		} else {
			out = append(out, vfs.Join(p, name))
		}
	}
	return out
}

// SearchFunc is a tree's Search verb as a function.
type SearchFunc func(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error]

// SetUpperSearch makes search answer Search over the layer's own files
// ([FS.Upper]); nil stops it. Results it yields for paths the merged tree
// no longer shows as the layer's files are dropped.
func (c *FS) SetUpperSearch(search SearchFunc) {
	if search == nil {
		c.upperSearch.Store(nil)
		return
	}
	c.upperSearch.Store(&search)
}

// Search merges the base's results for files the layer leaves as they
// are with the results of the layer's own files from the search set by
// [FS.SetUpperSearch] (none without one), by score then path.
func (c *FS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		var upper []vfs.SearchResult
		if s := c.upperSearch.Load(); s != nil {
			for r, err := range (*s)(ctx, q) {
				if err != nil {
					yield(r, err)
					return
				}
				if (upperFS{c}).kind(r.Path) == vfs.KindFile {
					upper = append(upper, r)
				}
			}
			slices.SortFunc(upper, vfs.CompareSearchResults)
		}
		n := 0
		emit := func(r vfs.SearchResult) bool {
			if !yield(r, nil) {
				return false
			}
			n++
			return q.MaxResults <= 0 || n < q.MaxResults
		}
		for r, err := range c.base.Search(ctx, q) {
			if err != nil {
				yield(r, err)
				return
			}
			if !c.fallsToBase(r.Path) {
				continue
			}
			for len(upper) > 0 && vfs.CompareSearchResults(upper[0], r) < 0 {
				if !emit(upper[0]) {
					return
				}
				upper = upper[1:]
			}
			if !emit(r) {
				return
			}
		}
		for _, r := range upper {
			if !emit(r) {
				return
			}
		}
	}
}
