// Package union composes trees mounted at path prefixes into one tree: the
// contract's unionFs.
//
// # Routing
//
// Every path is served by the mount with the longest prefix that covers it,
// by path segment (a mount at /repo covers /repo and /repo/a, never
// /repo-x). Children are trees rooted at "/": the union strips the mount
// prefix on the way in and puts it back on every path it yields and every
// error it returns. A path a shallower mount also has (the "/" mount's own
// /repo/x, under a mount at /repo) is served by the deepest mount only and
// never appears from the shallower one.
//
// Mount points and their ancestors are directories: with a mount at
// /a/b/c, /a and /a/b are directories whatever the mounts above them hold,
// and they appear when their parent is listed or globbed. Paths no mount
// covers are missing to the walk verbs (List, Stat, Glob, Grep, Search);
// Read, Write and Delete of such a path fail with "no mount for path".
//
// # Precedence
//
// The contract's "an earlier mount shadows a later one" is, under
// longest-prefix routing, "a deeper mount shadows a shallower one": the
// mounts are ordered deepest first, and since two mounts never share a
// prefix (New rejects duplicates) no two mounts serve the same path. The
// order of the slice given to New does not matter. List and Glob merge the
// children's sorted streams keeping the first of equal paths, with the
// mount-point directories first, then the mounts deepest first.
//
// # Streams
//
// List and Glob are k-way merges of the children's streams ([vfs.Merge]);
// Grep and Search fan out to every mount under the queried path (at "/",
// all of them), keep every hit, and merge by path then line, resp. score
// then path. No source is re-sorted or collected: the union holds one
// element per child. Where the mounts a call reaches lie side by side
// (none inside another, as /repo and /notes), their path-sorted streams
// are concatenated in path order instead of merged, one child after the
// other. Breaking out of a loop stops every child. A glob
// pattern that names mounts ("/repo/**/*.go", or "repo/**" from "/") is
// rewritten for each child it can reach ("**/*.go" at /repo's root) and is
// never evaluated by a mount it cannot reach; a pattern that cannot be
// matched one segment at a time (a "/" inside braces, a negated class, a
// "**" inside a segment) is evaluated by walking the mounts it can reach.
// MaxResults is passed to every child and applied again after the merge;
// a child some of whose hits the union drops (one with mounts below the
// queried path) runs uncapped instead and is stopped once the union has
// enough.
//
// # Errors
//
// A child's *vfs.PathError comes back with its path re-prefixed
// ([vfs.Rebase]): a child's "not found: /x" under /repo is
// "not found: /repo/x". Any other error of a mount below "/" (a plugin's,
// an I/O error) comes back wrapped in a *vfs.PathError of kind KindOther
// naming the union path the call was about, which unwraps to it; its text
// is never edited. A cancelled context's error, an error of the "/" mount
// (already in the union's namespace) and Rename's (about two paths) come
// back as they are.
//
// # Capabilities
//
// A union follows the rule of the vfs package doc's "Capabilities of
// wrappers". It offers every capability whose helper has an answer for a
// tree without it, and routes each call to the mount serving the path
// through that helper: [vfs.RangeReader], [vfs.FileOpener], [vfs.Stager],
// [vfs.ConditionalWriter] and [vfs.Renamer] get the mount's method or the
// helper's fallback (a mount without a ConditionalWriter gets WriteIf's
// check-then-write, not atomic); [vfs.DirMaker], [vfs.DirRemover],
// [vfs.Symlinker], [vfs.ModeSetter], [vfs.TimeSetter], [vfs.LinkTimeSetter]
// and a staging's [vfs.ConditionalCommitter] get the mount's method or
// errors.ErrUnsupported. A union is a [vfs.Notifier] exactly when every
// mount is one: [New] returns a tree with Watch only then, since a union
// that heard some mounts and not others would have a FUSE mount cache the
// deaf ones' files as if it heard them.
//
// # Moves and leaves
//
// Rename moves within one mount through that child's vfs.Renamer and is
// EXDEV across mounts. [Leaves] lists the trees a composed tree is made of
// (through unions and vfs/readonly), which the FUSE mount and the index
// follower use to find the local: trees whose host directories they watch.
//
// # Concurrency
//
// A union is immutable after New and safe for concurrent use as long as
// its children are. It caches nothing.
package union

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/julyfs/julyfs/vfs"
)

// Mount is one tree of a union and where it appears.
type Mount struct {
	// Prefix is where the tree's root appears in the union; it is cleaned
	// with vfs.Clean, so "" and "/" mount at the root.
	Prefix string
	// FS is the tree. It sees paths relative to Prefix, rooted at "/".
	FS vfs.FileSystem
}

// FS is a union of mounts. Create it with [New], which returns an *FS, or
// a tree embedding one that is also a [vfs.Notifier].
type FS struct {
	mounts []*mount          // deepest first, then by prefix
	byPath map[string]*mount // by prefix
	synth  []string          // mount points and their ancestors but "/", sorted
	inner  map[string]bool   // strict ancestors of mount points, "/" included
}

type mount struct {
	prefix string
	fs     vfs.FileSystem
	// subs are the prefixes of the mounts strictly under this one: their
	// paths, and the directories leading to them, are not this mount's.
	subs []string
}

var (
	_ vfs.FileSystem        = (*FS)(nil)
	_ vfs.RangeReader       = (*FS)(nil)
	_ vfs.ConditionalWriter = (*FS)(nil)
)

// New returns the union of mounts: an *FS, or, when every mount is a
// vfs.Notifier, a tree embedding the *FS that is a vfs.Notifier too (see
// the package doc, "Capabilities"). Either way the result has the *FS's
// methods, Mounts included. Prefixes are cleaned with vfs.Clean; two
// mounts at the same prefix, or a mount without a tree, are an error
// naming the prefix. The slice is not retained.
func New(mounts []Mount) (vfs.FileSystem, error) {
	u, err := newFS(mounts)
	if err != nil {
		return nil, err
	}
	for _, m := range u.mounts {
		if _, ok := m.fs.(vfs.Notifier); !ok {
			return u, nil
		}
	}
	return notifyingFS{u}, nil
}

// newFS builds the union of mounts.
func newFS(mounts []Mount) (*FS, error) {
	u := &FS{byPath: map[string]*mount{}, inner: map[string]bool{}}
	synth := map[string]bool{}
	for _, m := range mounts {
		p := vfs.Clean(m.Prefix)
		if m.FS == nil {
			return nil, fmt.Errorf("union: mount %s has no FileSystem", p)
		}
		if u.byPath[p] != nil {
			return nil, fmt.Errorf("union: duplicate mount prefix: %s", p)
		}
		mt := &mount{prefix: p, fs: m.FS}
		u.byPath[p] = mt
		u.mounts = append(u.mounts, mt)
		if p != "/" {
			synth[p] = true
			for a := vfs.Parent(p); ; a = vfs.Parent(a) {
				u.inner[a] = true
				if a == "/" {
					break
				}
				synth[a] = true
			}
		}
	}
	u.inner["/"] = true
	slices.SortFunc(u.mounts, func(a, b *mount) int {
		if c := cmp.Compare(depth(b.prefix), depth(a.prefix)); c != 0 {
			return c
		}
		return strings.Compare(a.prefix, b.prefix)
	})
	for _, m := range u.mounts {
		for _, o := range u.mounts {
			if o != m && vfs.HasPrefix(o.prefix, m.prefix) {
				m.subs = append(m.subs, o.prefix)
			}
		}
	}
	for s := range synth {
		u.synth = append(u.synth, s)
	}
	slices.Sort(u.synth)
	return u, nil
}

func depth(p string) int { return len(vfs.Split(p)) }

// Mounts returns the mount table, sorted by prefix.
func (u *FS) Mounts() []Mount {
	out := make([]Mount, len(u.mounts))
	for i, m := range u.mounts {
		out[i] = Mount{Prefix: m.prefix, FS: m.fs}
	}
	slices.SortFunc(out, func(a, b Mount) int { return strings.Compare(a.Prefix, b.Prefix) })
	return out
}

// Leaves returns the trees fsys is made of, each with where its root
// appears in fsys: the mounts of a union (those of a union within it
// too), the tree a wrapper with an Unwrap method wraps (vfs/readonly),
// else fsys itself at "/". A caller looking for trees of one kind (host
// directories to watch, say) checks each leaf.
func Leaves(fsys vfs.FileSystem) []Mount {
	return leaves(fsys, "/", nil)
}

func leaves(fsys vfs.FileSystem, prefix string, out []Mount) []Mount {
	switch t := fsys.(type) {
	case interface{ Mounts() []Mount }:
		for _, m := range t.Mounts() {
			out = leaves(m.FS, vfs.Join(prefix, m.Prefix), out)
		}
		return out
	case interface{ Unwrap() vfs.FileSystem }:
		return leaves(t.Unwrap(), prefix, out)
	}
	return append(out, Mount{Prefix: prefix, FS: fsys})
}

// route returns the mount serving clean p: the one with the longest prefix
// covering it, or nil.
func (u *FS) route(p string) *mount {
	for _, m := range u.mounts {
		if vfs.HasPrefix(p, m.prefix) {
			return m
		}
	}
	return nil
}

// isInner reports whether clean p is a strict ancestor of a mount point:
// a directory of the union itself, not of any child.
func (u *FS) isInner(p string) bool { return u.inner[p] }

// down maps a union path under m's prefix to the child's path.
func (m *mount) down(p string) string {
	switch {
	case m.prefix == "/":
		return p
	case len(p) == len(m.prefix):
		return "/"
	}
	return p[len(m.prefix):]
}

// up maps a child path to the union's.
func (m *mount) up(p string) string {
	if m.prefix == "/" {
		return p
	}
	if p == "/" {
		return m.prefix
	}
	return m.prefix + p
}

// owns reports whether the union path p, which is at or under m's prefix,
// is m's: not at or under a deeper mount, and not a directory leading to
// one (those are the union's own).
func (m *mount) owns(p string) bool {
	for _, s := range m.subs {
		if vfs.HasPrefix(p, s) || vfs.HasPrefix(s, p) {
			return false
		}
	}
	return true
}

// fixErr rewrites a child's error about child path cp into the union's
// namespace: a PathError is rebased onto the mount's prefix; any other
// error (a plugin's, an I/O error) is wrapped in a PathError of KindOther
// naming the union path, never edited as text.
func (m *mount) fixErr(err error, cp string) error {
	if err == nil || m.prefix == "/" {
		return err
	}
	var pe *vfs.PathError
	if errors.As(err, &pe) {
		return vfs.Rebase(err, m.prefix)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if cp == "" {
		return err
	}
	return &vfs.PathError{Kind: vfs.KindOther, Path: m.up(cp), Err: err}
}

// lift maps a child stream into the union's namespace: paths re-prefixed,
// paths m does not own dropped, errors rewritten.
func lift[T any](m *mount, src iter.Seq2[T, error], cp string, path func(*T) *string) iter.Seq2[T, error] {
	if m.prefix == "/" && len(m.subs) == 0 {
		return src
	}
	return func(yield func(T, error) bool) {
		// Consecutive elements often share a path (a file's grep hits):
		// map it once.
		var lastChild, lastUp string
		lastOwned := false
		for v, err := range src {
			if err != nil {
				var zero T
				yield(zero, m.fixErr(err, cp))
				return
			}
			pp := path(&v)
			if *pp != lastChild || lastUp == "" {
				lastChild, lastUp = *pp, m.up(*pp)
				lastOwned = m.owns(lastUp)
			}
			if !lastOwned {
				continue
			}
			*pp = lastUp
			if !yield(v, nil) {
				return
			}
		}
	}
}

func entryPath(e *vfs.DirEntry) *string      { return &e.Path }
func grepPath(r *vfs.GrepResult) *string     { return &r.Path }
func searchPath(r *vfs.SearchResult) *string { return &r.Path }

// merge merges sorted sources; one source is returned as it is.
func merge[T any](sources []iter.Seq2[T, error], cmp func(a, b T) int, unique bool) iter.Seq2[T, error] {
	switch len(sources) {
	case 0:
		return vfs.Empty[T]()
	case 1:
		return sources[0]
	}
	return vfs.Merge(sources, cmp, unique)
}

// source is one path-sorted stream of a union call and the subtree all
// its paths are strictly under, "" when that is not known.
type source[T any] struct {
	seq  iter.Seq2[T, error]
	root string
}

// mergeByPath merges path-sorted sources. When each source lies in its own
// subtree, none inside another's (mounts side by side), their streams are
// concatenated in path order instead: no heap and no coroutine per source.
func mergeByPath[T any](srcs []source[T], cmp func(a, b T) int, unique bool) iter.Seq2[T, error] {
	if !disjoint(srcs) {
		seqs := make([]iter.Seq2[T, error], len(srcs))
		for i, s := range srcs {
			seqs[i] = s.seq
		}
		return merge(seqs, cmp, unique)
	}
	// Paths strictly under root sort between root+"/" and the next
	// subtree's.
	slices.SortFunc(srcs, func(a, b source[T]) int { return strings.Compare(a.root+"/", b.root+"/") })
	return func(yield func(T, error) bool) {
		for _, s := range srcs {
			for v, err := range s.seq {
				if !yield(v, err) || err != nil {
					return
				}
			}
		}
	}
}

func disjoint[T any](srcs []source[T]) bool {
	if len(srcs) < 2 {
		return false
	}
	for i, a := range srcs {
		if a.root == "" {
			return false
		}
		for _, b := range srcs[i+1:] {
			if vfs.HasPrefix(a.root, b.root) || vfs.HasPrefix(b.root, a.root) {
				return false
			}
		}
	}
	return true
}

// List yields the children of the directory at prefix: the entries of the
// mount serving it and the mount points (or directories leading to them)
// directly inside it.
func (u *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		dir := vfs.Clean(prefix)
		var sources []iter.Seq2[vfs.DirEntry, error]
		if syn := u.synthChildren(dir); len(syn) > 0 {
			sources = append(sources, entries(syn))
		}
		if m := u.route(dir); m != nil {
			cp := m.down(dir)
			sources = append(sources, lift(m, m.fs.List(ctx, cp), cp, entryPath))
		}
		for e, err := range merge(sources, vfs.CompareDirEntries, true) {
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

// synthChildren returns the mount-point directories directly inside dir.
func (u *FS) synthChildren(dir string) []vfs.DirEntry {
	if !u.isInner(dir) {
		return nil
	}
	var out []vfs.DirEntry
	for _, s := range u.synth {
		if vfs.Parent(s) == dir {
			out = append(out, vfs.DirEntry{Path: s, Kind: vfs.KindDir})
		}
	}
	return out
}

func entries(es []vfs.DirEntry) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		for _, e := range es {
			if !yield(e, nil) {
				return
			}
		}
	}
}

// Stat describes path. Mount points and the directories leading to them
// are directories; a mount point's other fields come from its child's root.
func (u *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if m := u.byPath[p]; m != nil {
		info, err := m.fs.Stat(ctx, "/")
		if err != nil {
			return vfs.FileInfo{}, m.fixErr(err, "/")
		}
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir, ModTime: info.ModTime}, nil
	}
	if u.isInner(p) {
		if err := ctx.Err(); err != nil {
			return vfs.FileInfo{}, err
		}
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
	}
	m := u.route(p)
	if m == nil {
		if err := ctx.Err(); err != nil {
			return vfs.FileInfo{}, err
		}
		return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
	}
	cp := m.down(p)
	info, err := m.fs.Stat(ctx, cp)
	if err != nil {
		return vfs.FileInfo{}, m.fixErr(err, cp)
	}
	info.Path = p
	return info, nil
}

// Glob yields the entries under dir matching pattern. Each mount that can
// hold a match gets the pattern rewritten for its own root; see the
// package documentation.
func (u *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		pat, err := vfs.CompilePattern(pattern)
		if err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		g := globQuery{pattern: pattern, pat: pat, dir: vfs.Clean(dir)}
		g.base = g.dir
		if strings.HasPrefix(pattern, "/") {
			g.base = "/"
		}
		if pat.IsLiteral() {
			// A literal pattern names one path, as in vfs.Glob.
			target := vfs.Join(g.base, pat.LiteralPrefix())
			if !g.under(target) {
				return
			}
			info, err := u.Stat(ctx, target)
			if err != nil {
				yield(vfs.DirEntry{}, err)
			} else if info.Kind != vfs.KindMissing {
				yield(vfs.DirEntry{Path: target, Kind: info.Kind}, nil)
			}
			return
		}
		var sources []source[vfs.DirEntry]
		if syn := u.synthGlob(&g); len(syn) > 0 {
			sources = append(sources, source[vfs.DirEntry]{seq: entries(syn)})
		}
		cover := u.route(g.base)
		for _, m := range u.mounts {
			if src := u.globMount(ctx, m, m == cover, &g); src != nil {
				s := source[vfs.DirEntry]{seq: src}
				if m != cover {
					s.root = m.prefix
				}
				sources = append(sources, s)
			}
		}
		for e, err := range mergeByPath(sources, vfs.CompareDirEntries, true) {
			if !yield(e, err) || err != nil {
				return
			}
		}
	}
}

// globQuery is a Glob call, compiled.
type globQuery struct {
	pattern string
	pat     *vfs.Pattern
	dir     string // results are strictly under dir
	base    string // the pattern is relative to base: dir, or "/" for an absolute pattern
}

// under reports whether the union path p is a possible result.
func (g *globQuery) under(p string) bool { return p != g.dir && vfs.HasPrefix(p, g.dir) }

// match reports whether the union path p is a result.
func (g *globQuery) match(p string) bool {
	if !g.under(p) {
		return false
	}
	rel, ok := vfs.Rel(p, g.base)
	return ok && g.pat.Match(rel)
}

// synthGlob returns the mount-point directories matching g.
func (u *FS) synthGlob(g *globQuery) []vfs.DirEntry {
	var out []vfs.DirEntry
	for _, s := range u.synth {
		if g.match(s) {
			out = append(out, vfs.DirEntry{Path: s, Kind: vfs.KindDir})
		}
	}
	return out
}

// globMount returns m's share of g, or nil when m cannot hold a match.
// cover says that m is the mount serving g.base.
func (u *FS) globMount(ctx context.Context, m *mount, cover bool, g *globQuery) iter.Seq2[vfs.DirEntry, error] {
	switch {
	case cover:
		// The pattern's base is inside m: m evaluates the pattern
		// unchanged (an absolute pattern only reaches here for the "/"
		// mount, which needs no rewrite).
		// Skip m when every match would be at or under a deeper mount.
		lit := vfs.Join(g.base, g.pat.LiteralPrefix())
		for _, s := range m.subs {
			if vfs.HasPrefix(lit, s) || vfs.HasPrefix(g.dir, s) {
				return nil
			}
		}
		cdir := m.down(g.dir)
		return lift(m, m.fs.Glob(ctx, g.pattern, cdir), cdir, entryPath)
	case m.prefix != g.base && vfs.HasPrefix(m.prefix, g.base):
		// m is mounted below the pattern's base: the pattern must first
		// match the segments leading to the mount point.
		var cdir string
		abs := false
		switch {
		case vfs.HasPrefix(g.dir, m.prefix):
			cdir, abs = m.down(g.dir), true // only for an absolute pattern
		case vfs.HasPrefix(m.prefix, g.dir):
			cdir = "/"
		default:
			return nil
		}
		rel, _ := vfs.Rel(m.prefix, g.base)
		qs, ok := g.pat.Below(rel)
		if !ok {
			return u.globWalk(ctx, m, g, cdir, len(vfs.Split("/"+rel)))
		}
		var sources []iter.Seq2[vfs.DirEntry, error]
		for _, q := range qs {
			if abs {
				q = "/" + q
			}
			sources = append(sources, m.fs.Glob(ctx, q, cdir))
		}
		if len(sources) == 0 {
			return nil
		}
		return lift(m, merge(sources, vfs.CompareDirEntries, true), cdir, entryPath)
	}
	return nil
}

// globWalk evaluates g in m by walking m from cdir and matching each union
// path against the whole pattern: the fallback for patterns that cannot be
// matched segment by segment. relDepth is the number of segments from
// g.base to m's prefix.
func (u *FS) globWalk(ctx context.Context, m *mount, g *globQuery, cdir string, relDepth int) iter.Seq2[vfs.DirEntry, error] {
	maxDepth := 0
	if md := g.pat.MaxDepth(); md > 0 {
		maxDepth = md - relDepth - len(vfs.Split(cdir))
		if maxDepth <= 0 {
			return nil
		}
	}
	walk := lift(m, vfs.Walk(ctx, m.fs.List, cdir, maxDepth), cdir, entryPath)
	return func(yield func(vfs.DirEntry, error) bool) {
		for e, err := range walk {
			if err != nil {
				yield(e, err)
				return
			}
			if g.match(e.Path) && !yield(e, nil) {
				return
			}
		}
	}
}

// Read returns the contents of the file at path, from the mount serving
// it.
func (u *FS) Read(ctx context.Context, path string) ([]byte, error) {
	m, cp, err := u.target(path)
	if err != nil {
		return nil, err
	}
	data, err := m.fs.Read(ctx, cp)
	return data, m.fixErr(err, cp)
}

// ReadAt reads part of the file at path through the serving mount's
// RangeReader, or its fallback.
func (u *FS) ReadAt(ctx context.Context, path string, p []byte, off int64) (int, error) {
	m, cp, err := u.target(path)
	if err != nil {
		return 0, err
	}
	n, err := vfs.ReadAt(ctx, m.fs, cp, p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		err = m.fixErr(err, cp)
	}
	return n, err
}

// Write creates or replaces the file at path in the mount serving it.
func (u *FS) Write(ctx context.Context, path string, data []byte) error {
	m, cp, err := u.target(path)
	if err != nil {
		return err
	}
	return m.fixErr(m.fs.Write(ctx, cp, data), cp)
}

// WriteIf writes through the serving mount's ConditionalWriter, or its
// fallback.
func (u *FS) WriteIf(ctx context.Context, path string, data []byte, cond vfs.Precondition) (string, error) {
	m, cp, err := u.target(path)
	if err != nil {
		return "", err
	}
	etag, err := vfs.WriteIf(ctx, m.fs, cp, data, cond)
	return etag, m.fixErr(err, cp)
}

// Delete removes the file at path from the mount serving it.
func (u *FS) Delete(ctx context.Context, path string) error {
	m, cp, err := u.target(path)
	if err != nil {
		return err
	}
	return m.fixErr(m.fs.Delete(ctx, cp), cp)
}

// target routes a file verb: the mount and the child path, or "is a
// directory" for a directory leading to a mount point and "no mount for
// path" where no mount covers path.
func (u *FS) target(path string) (*mount, string, error) {
	p := vfs.Clean(path)
	if u.isInner(p) && u.byPath[p] == nil {
		return nil, "", vfs.IsDir(p)
	}
	m := u.route(p)
	if m == nil {
		return nil, "", vfs.NoMount(p)
	}
	return m, m.down(p), nil
}

// scopeQuery is one child's share of a Grep or Search scoped at a union
// path: the child's scope, and for Grep the rewritten file filter.
type scopeQuery struct {
	m     *mount
	below bool     // m is mounted below the scope, not serving it
	path  string   // child scope
	globs []string // child Grep filters; one "" when unfiltered
	// post, when set, filters union paths (a Glob filter that could not
	// be rewritten for the child).
	post *vfs.GrepFilter
}

// capped reports whether the child can be given the query's MaxResults:
// when the union keeps every hit it yields. Otherwise the child runs
// uncapped and is stopped once the union has enough.
func (sq *scopeQuery) capped(scope string) bool {
	if sq.post != nil {
		return false
	}
	for _, s := range sq.m.subs {
		if vfs.HasPrefix(s, scope) {
			return false
		}
	}
	return true
}

// fanOut returns the children a query scoped at the union path scope
// reaches: the mount serving scope, and every mount below it. glob is a
// Grep filter relative to scope ("" for none, and for Search).
func (u *FS) fanOut(scope, glob string) ([]scopeQuery, error) {
	var out []scopeQuery
	rooted := strings.Contains(glob, "/")
	var pat *vfs.Pattern
	if rooted {
		var err error
		if pat, err = vfs.CompilePattern(glob); err != nil {
			return nil, err
		}
	}
	cover := u.route(scope)
	for _, m := range u.mounts {
		switch {
		case m == cover:
			out = append(out, scopeQuery{m: m, path: m.down(scope), globs: []string{glob}})
		case m.prefix != scope && vfs.HasPrefix(m.prefix, scope):
			if !rooted {
				out = append(out, scopeQuery{m: m, below: true, path: "/", globs: []string{glob}})
				continue
			}
			rel, _ := vfs.Rel(m.prefix, scope)
			qs, ok := pat.Below(rel)
			if !ok {
				f, err := vfs.CompileGrepFilter(glob, scope)
				if err != nil {
					return nil, err
				}
				out = append(out, scopeQuery{m: m, below: true, path: "/", globs: []string{""}, post: f})
				continue
			}
			if len(qs) == 0 {
				continue
			}
			for i, q := range qs {
				// A leading "/" keeps a rewritten filter relative to the
				// child's scope instead of matching basenames anywhere.
				qs[i] = "/" + q
			}
			out = append(out, scopeQuery{m: m, below: true, path: "/", globs: qs})
		}
	}
	return out, nil
}

// Grep yields the matching lines of every mount under q.Path, by path then
// line. The pattern and filter are checked before any child runs, and the
// pattern, compiled once, is handed down to every child with the query.
func (u *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return func(yield func(vfs.GrepResult, error) bool) {
		q, err := vfs.CompileGrepQuery(q)
		if err != nil {
			yield(vfs.GrepResult{}, err)
			return
		}
		scope := vfs.Clean(q.Path)
		parts, err := u.fanOut(scope, q.Glob)
		if err != nil {
			yield(vfs.GrepResult{}, err)
			return
		}
		var sources []source[vfs.GrepResult]
		for _, pt := range parts {
			var subs []iter.Seq2[vfs.GrepResult, error]
			for _, glob := range pt.globs {
				cq := q
				cq.Path, cq.Glob = pt.path, glob
				if !pt.capped(scope) {
					cq.MaxResults = 0 // the union drops some of its hits
				}
				subs = append(subs, pt.m.fs.Grep(ctx, cq))
			}
			src := lift(pt.m, merge(subs, vfs.CompareGrepResults, true), pt.path, grepPath)
			if pt.post != nil {
				src = filterGrep(src, pt.post)
			}
			s := source[vfs.GrepResult]{seq: src}
			if pt.below {
				s.root = pt.m.prefix
			}
			sources = append(sources, s)
		}
		for r, err := range vfs.Limit(mergeByPath(sources, vfs.CompareGrepResults, false), q.MaxResults) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

func filterGrep(src iter.Seq2[vfs.GrepResult, error], f *vfs.GrepFilter) iter.Seq2[vfs.GrepResult, error] {
	return func(yield func(vfs.GrepResult, error) bool) {
		for r, err := range src {
			if err != nil {
				yield(r, err)
				return
			}
			if f.Match(r.Path) && !yield(r, nil) {
				return
			}
		}
	}
}

// Search yields the ranked results of every mount under q.Path, by score
// descending then path.
func (u *FS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		scope := vfs.Clean(q.Path)
		parts, err := u.fanOut(scope, "")
		if err != nil {
			yield(vfs.SearchResult{}, err)
			return
		}
		var sources []iter.Seq2[vfs.SearchResult, error]
		for _, pt := range parts {
			cq := q
			cq.Path = pt.path
			if !pt.capped(scope) {
				cq.MaxResults = 0
			}
			sources = append(sources, lift(pt.m, pt.m.fs.Search(ctx, cq), pt.path, searchPath))
		}
		for r, err := range vfs.Limit(merge(sources, vfs.CompareSearchResults, false), q.MaxResults) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}
