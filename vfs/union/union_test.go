package union_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

func collect[T any](t *testing.T, seq iter.Seq2[T, error]) ([]T, error) {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

func paths(es []vfs.DirEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}

func mustUnion(t testing.TB, ms ...union.Mount) vfs.FileSystem {
	t.Helper()
	u, err := union.New(ms)
	require.NoError(t, err)
	return u
}

// layout is a union test fixture: the files of each mount, keyed by prefix.
type layout map[string]map[string]string

func (l layout) build(t testing.TB) (vfs.FileSystem, map[string]*temp.FS) {
	t.Helper()
	var ms []union.Mount
	children := map[string]*temp.FS{}
	for _, prefix := range slices.Sorted(maps.Keys(l)) {
		c := temp.MustNew(l[prefix])
		children[prefix] = c
		ms = append(ms, union.Mount{Prefix: prefix, FS: c})
	}
	return mustUnion(t, ms...), children
}

// flat returns one temp tree holding what the union should show: each
// mount's files at their union paths, minus those a deeper mount (or the
// directories leading to it) shadows. Every mount must hold a file, so that
// its mount point is a directory in the flat tree too.
func (l layout) flat(t testing.TB) *temp.FS {
	t.Helper()
	prefixes := slices.Collect(maps.Keys(l))
	files := map[string]string{}
	for prefix, fs := range l {
		for p, data := range fs {
			up := vfs.Join(prefix, p)
			owned := true
			for _, o := range prefixes {
				if o != prefix && vfs.HasPrefix(o, prefix) && (vfs.HasPrefix(up, o) || vfs.HasPrefix(o, up)) {
					owned = false
				}
			}
			if owned {
				files[up] = data
			}
		}
	}
	return temp.MustNew(files)
}

var fixture = layout{
	"/": {
		"/README.md":        "root readme\nfunc main\n",
		"/main.go":          "package main\nfunc main() {}\n",
		"/repo/shadowed.go": "package stale\nfunc main() {}\n", // under the /repo mount: never seen
		"/a/x.go":           "package ax\n",
		"/a/b":              "a file where the union has a directory\nfunc main\n",
		"/repo-tools/t.go":  "package tools\nfunc main() {}\n",
		"/notes/old.md":     "stale note\n",
	},
	"/repo": {
		"/go.mod":          "module repo\n",
		"/main.go":         "package main\n\nfunc main() {\n\tprintln(\"repo\")\n}\n",
		"/sub/x.go":        "package sub\nfunc main\n",
		"/sub/deep/y.go":   "package deep\nfunc main\n",
		"/sub/deep/z.txt":  "func main\n",
		"/vendor/v.go":     "package shadowedvendor\n",
		"/vendor-x/w.go":   "package w\nfunc main\n",
		"/docs/readme.md":  "func main in docs\n",
		"/x.go":            "package x\nfunc main\nfunc main again\n",
		"/bin/data.bin":    "func main\x00binary",
		"/sub/deep/q/r.go": "package r\n",
	},
	"/repo/vendor": {
		"/lib/l.go": "package lib\nfunc main\n",
	},
	"/notes": {
		"/todo.md":     "func main todo\n",
		"/x.go":        "package notes\n",
		"/nested/n.md": "func main nested\n",
	},
	"/a/b/c": {
		"/c.go":      "package c\nfunc main\n",
		"/d/e/f.go":  "package f\n",
		"/repo/r.go": "package notreally\nfunc main\n",
	},
}

var globPatterns = []string{
	"**", "*", "**/*.go", "*.go", "*/*.go", "*/x.go", "**/x.go",
	"repo/**", "repo/**/*.go", "/repo/**/*.go", "/repo/*", "repo", "repo/vendor/**",
	"{repo,notes}/**", "re*/**", "re*/*.go", "a/**", "a/b/*", "a/**/c/*", "a/*/c/**/*.go",
	"[a-r]*/**", "[nr]*/*", "**/deep/*", "**/vendor/**", "*/vendor/*", "**/c", "**/b/c",
	"notes/*.md", "/notes/**", "sub/**", "deep/*", "**/*.{go,md}", "?otes/*",
	// Not matched segment by segment: the union walks.
	"[!a]*/*.go", "{repo/x,notes}.go", "{repo/sub,notes/nested}/*", "**.go", "re**/x.go", "a**",
	"repo\\/x.go",
}

var globDirs = []string{"/", "/repo", "/repo/sub", "/a", "/a/b", "/a/b/c", "/notes", "/nomount", "/repo/vendor", "/x.go"}

// TestGlobMatchesFlat checks every Glob of the union against the same Glob
// of one flat tree with the same contents, for patterns that route, fan
// out, span mount points and need the fallback.
func TestGlobMatchesFlat(t *testing.T) {
	ctx := context.Background()
	u, _ := fixture.build(t)
	flat := fixture.flat(t)
	for _, dir := range globDirs {
		for _, pat := range globPatterns {
			got, err := collect(t, u.Glob(ctx, pat, dir))
			if !assert.NoError(t, err, "Glob(%q, %q)", pat, dir) {
				continue
			}
			want, err := collect(t, flat.Glob(ctx, pat, dir))
			require.NoError(t, err, "flat Glob(%q, %q)", pat, dir)
			assert.Equal(t, want, got, "Glob(%q, %q)", pat, dir)
		}
	}
}

// TestWalkMatchesFlat checks List and Stat of every path of the flat tree
// (and some that are nowhere) against the flat tree.
func TestWalkMatchesFlat(t *testing.T) {
	ctx := context.Background()
	u, _ := fixture.build(t)
	flat := fixture.flat(t)
	all, err := collect(t, flat.Glob(ctx, "**", "/"))
	require.NoError(t, err)
	ps := append([]string{"/", "/nomount", "/repo/shadowed.go", "/repo/vendor/v.go", "/a/b/c/nope", "/repo-"}, paths(all)...)
	for _, p := range ps {
		got, err := collect(t, u.List(ctx, p))
		assert.NoError(t, err, "List(%q)", p)
		want, _ := collect(t, flat.List(ctx, p))
		assert.Equal(t, want, got, "List(%q)", p)
		gi, err := u.Stat(ctx, p)
		assert.NoError(t, err, "Stat(%q)", p)
		wi, _ := flat.Stat(ctx, p)
		assert.Equal(t, wi.Path, gi.Path, "Stat(%q).Path", p)
		assert.Equal(t, wi.Kind, gi.Kind, "Stat(%q).Kind", p)
		assert.Equal(t, wi.Size, gi.Size, "Stat(%q).Size", p)
		if gi.Kind == vfs.KindFile {
			assert.Equal(t, wi.ETag, gi.ETag, "Stat(%q).ETag", p)
		}
		if wi.Kind == vfs.KindFile {
			data, err := u.Read(ctx, p)
			want, _ := flat.Read(ctx, p)
			assert.NoError(t, err, "Read(%q)", p)
			assert.Equal(t, string(want), string(data), "Read(%q)", p)
		}
	}
	// The reference walk over the union's own List/Stat agrees with its
	// Glob.
	ref, err := collect(t, vfs.Glob(ctx, u, "**", "/"))
	assert.NoError(t, err, "walk of the union")
	assert.Equal(t, paths(all), paths(ref), "walk of the union")
}

var grepGlobs = []string{"", "*.go", "*.md", "repo/*.go", "**/*.go", "repo/**", "*/x.go", "**/deep/*",
	"a/**", "sub/**/*.go", "{repo,notes}/**/*.md", "[!a]*/*.go", "{repo/x,notes/todo}.*", "x.go"}

var grepScopes = []string{"/", "/repo", "/repo/sub", "/a", "/a/b", "/notes/todo.md", "/nomount", "/repo/vendor"}

// TestGrepMatchesFlat checks Grep at every scope, with every filter and
// with and without a cap, against the flat tree.
func TestGrepMatchesFlat(t *testing.T) {
	ctx := context.Background()
	u, _ := fixture.build(t)
	flat := fixture.flat(t)
	for _, scope := range grepScopes {
		for _, glob := range grepGlobs {
			for _, max := range []int{0, 1, 3} {
				q := vfs.GrepQuery{Pattern: "func main", Path: scope, Glob: glob, MaxResults: max}
				got, err := collect(t, u.Grep(ctx, q))
				if !assert.NoError(t, err, "Grep(%+v)", q) {
					continue
				}
				want, err := collect(t, flat.Grep(ctx, q))
				require.NoError(t, err, "flat Grep(%+v)", q)
				assert.Equal(t, want, got, "Grep(%+v)", q)
			}
		}
	}
}

func TestNewValidates(t *testing.T) {
	a, b := temp.MustNew(nil), temp.MustNew(nil)
	_, err := union.New([]union.Mount{{Prefix: "/repo/", FS: a}, {Prefix: "/x/../repo", FS: b}})
	assert.ErrorContains(t, err, "duplicate mount prefix: /repo", "duplicate prefixes")
	_, err = union.New([]union.Mount{{Prefix: "", FS: a}, {Prefix: "/", FS: b}})
	assert.ErrorContains(t, err, "duplicate mount prefix: /", "duplicate root")
	_, err = union.New([]union.Mount{{Prefix: "/n", FS: nil}})
	assert.ErrorContains(t, err, "/n", "nil FS")
	u, err := union.New([]union.Mount{{Prefix: "notes", FS: a}, {Prefix: "/repo/", FS: b}})
	require.NoError(t, err)
	var got []string
	for _, m := range u.(interface{ Mounts() []union.Mount }).Mounts() {
		got = append(got, m.Prefix)
	}
	assert.Equal(t, []string{"/notes", "/repo"}, got, "Mounts()")
}

// TestMountOrderIrrelevant: the order of the slice given to New changes
// nothing; the deeper mount always wins.
func TestMountOrderIrrelevant(t *testing.T) {
	ctx := context.Background()
	root := temp.MustNew(map[string]string{"/repo/x": "root"})
	repo := temp.MustNew(map[string]string{"/x": "repo"})
	for _, ms := range [][]union.Mount{
		{{Prefix: "/", FS: root}, {Prefix: "/repo", FS: repo}},
		{{Prefix: "/repo", FS: repo}, {Prefix: "/", FS: root}},
	} {
		u := mustUnion(t, ms...)
		data, err := u.Read(ctx, "/repo/x")
		assert.NoError(t, err, "Read(/repo/x)")
		assert.Equal(t, "repo", string(data), "Read(/repo/x) should give the /repo mount's")
	}
}

func TestShadowing(t *testing.T) {
	ctx := context.Background()
	u, _ := fixture.build(t)
	es, _ := collect(t, u.List(ctx, "/repo"))
	assert.NotContains(t, paths(es), "/repo/shadowed.go", "List(/repo) shows the / mount's /repo/shadowed.go")
	info, _ := u.Stat(ctx, "/repo/shadowed.go")
	assert.Equal(t, vfs.KindMissing, info.Kind, "Stat(/repo/shadowed.go)")
	_, err := u.Read(ctx, "/repo/shadowed.go")
	assert.ErrorIs(t, err, vfs.ErrNotFound, "Read(/repo/shadowed.go)")
	assert.EqualError(t, err, "not found: /repo/shadowed.go", "Read(/repo/shadowed.go)")
	hits, _ := collect(t, u.Grep(ctx, vfs.GrepQuery{Pattern: "stale|shadowedvendor"}))
	assert.Empty(t, hits, "Grep found a shadowed file")
	// /a/b is a file in the / mount, a directory in the union.
	info, _ = u.Stat(ctx, "/a/b")
	assert.Equal(t, vfs.KindDir, info.Kind, "Stat(/a/b)")
	_, err = u.Read(ctx, "/a/b")
	assert.ErrorIs(t, err, vfs.ErrIsDir, "Read(/a/b)")
	// /repo-tools is the / mount's, not /repo's.
	data, err := u.Read(ctx, "/repo-tools/t.go")
	assert.NoError(t, err, "Read(/repo-tools/t.go)")
	assert.True(t, strings.HasPrefix(string(data), "package tools"), "Read(/repo-tools/t.go) = %q", data)
}

func TestMountPointsAreDirectories(t *testing.T) {
	ctx := context.Background()
	u := mustUnion(t, union.Mount{Prefix: "/a/b/c", FS: temp.MustNew(nil)})
	for _, p := range []string{"/", "/a", "/a/b", "/a/b/c"} {
		info, err := u.Stat(ctx, p)
		assert.NoError(t, err, "Stat(%q)", p)
		assert.Equal(t, vfs.KindDir, info.Kind, "Stat(%q)", p)
		assert.Equal(t, p, info.Path, "Stat(%q)", p)
	}
	want := map[string][]string{"/": {"/a"}, "/a": {"/a/b"}, "/a/b": {"/a/b/c"}, "/a/b/c": nil, "/x": nil}
	for dir, w := range want {
		es, err := collect(t, u.List(ctx, dir))
		assert.NoError(t, err, "List(%q)", dir)
		assert.True(t, slices.Equal(paths(es), w), "List(%q) = %v, want %v", dir, paths(es), w)
		for _, e := range es {
			assert.Equal(t, vfs.KindDir, e.Kind, "List(%q): %v", dir, e.Path)
		}
	}
	es, _ := collect(t, u.Glob(ctx, "**", "/"))
	assert.Equal(t, []string{"/a", "/a/b", "/a/b/c"}, paths(es), "Glob(**)")
	err := u.Write(ctx, "/a/x", nil)
	assert.ErrorIs(t, err, vfs.ErrNoMount, "Write(/a/x)")
	assert.EqualError(t, err, "no mount for path: /a/x", "Write(/a/x)")
	assert.NoError(t, u.Write(ctx, "/a/b/c/x", []byte("hi")), "Write(/a/b/c/x)")
	assert.ErrorIs(t, u.Write(ctx, "/a", nil), vfs.ErrIsDir, "Write(/a)")
}

func TestNoMount(t *testing.T) {
	ctx := context.Background()
	u := mustUnion(t, union.Mount{Prefix: "/repo", FS: temp.MustNew(map[string]string{"/x": "x"})})
	for name, err := range map[string]error{
		"Read":   func() error { _, err := u.Read(ctx, "/other/y"); return err }(),
		"Write":  u.Write(ctx, "/other/y", []byte("y")),
		"Delete": u.Delete(ctx, "/other/y"),
		"ReadAt": func() error { _, err := vfs.ReadAt(ctx, u, "/other/y", make([]byte, 1), 0); return err }(),
		"WriteIf": func() error {
			_, err := vfs.WriteIf(ctx, u, "/other/y", nil, vfs.Precondition{IfNoneMatch: true})
			return err
		}(),
	} {
		assert.ErrorIs(t, err, vfs.ErrNoMount, "%s(/other/y)", name)
		assert.EqualError(t, err, "no mount for path: /other/y", "%s(/other/y)", name)
	}
	info, err := u.Stat(ctx, "/other/y")
	assert.NoError(t, err, "Stat(/other/y)")
	assert.Equal(t, vfs.KindMissing, info.Kind, "Stat(/other/y)")
	for name, seq := range map[string]iter.Seq2[vfs.DirEntry, error]{
		"List": u.List(ctx, "/other"),
		"Glob": u.Glob(ctx, "**", "/other"),
	} {
		es, err := collect(t, seq)
		assert.NoError(t, err, "%s(/other)", name)
		assert.Empty(t, es, "%s(/other)", name)
	}
	rs, err := collect(t, u.Grep(ctx, vfs.GrepQuery{Pattern: "x", Path: "/other"}))
	assert.NoError(t, err, "Grep(/other)")
	assert.Empty(t, rs, "Grep(/other)")
	_, err = collect(t, u.Grep(ctx, vfs.GrepQuery{Pattern: "(", Path: "/other"}))
	assert.ErrorIs(t, err, vfs.ErrInvalidGrepPattern, "Grep with a bad pattern on no mount")
	_, err = collect(t, u.Glob(ctx, "{", "/other"))
	assert.ErrorIs(t, err, vfs.ErrInvalidGlobPattern, "Glob with a bad pattern on no mount")
}

// errFS fails every verb with err.
type errFS struct{ err error }

func (f errFS) List(context.Context, string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Fail[vfs.DirEntry](f.err)
}
func (f errFS) Stat(context.Context, string) (vfs.FileInfo, error) { return vfs.FileInfo{}, f.err }
func (f errFS) Glob(context.Context, string, string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Fail[vfs.DirEntry](f.err)
}
func (f errFS) Read(context.Context, string) ([]byte, error) { return nil, f.err }
func (f errFS) Grep(context.Context, vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return vfs.Fail[vfs.GrepResult](f.err)
}
func (f errFS) Write(context.Context, string, []byte) error { return f.err }
func (f errFS) Delete(context.Context, string) error        { return f.err }
func (f errFS) Search(context.Context, vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Fail[vfs.SearchResult](f.err)
}

// pathErrFS fails every verb with a PathError about the child path it got.
type pathErrFS struct{ errFS }

func (pathErrFS) Read(_ context.Context, p string) ([]byte, error) { return nil, vfs.NotFound(p) }
func (pathErrFS) Write(_ context.Context, p string, _ []byte) error {
	return vfs.WriteFailed(p, errors.New("disk full"))
}
func (pathErrFS) Delete(_ context.Context, p string) error { return vfs.ReadOnly(p) }
func (pathErrFS) Stat(_ context.Context, p string) (vfs.FileInfo, error) {
	return vfs.FileInfo{}, vfs.NewError(vfs.KindUnavailable, p, nil)
}
func (pathErrFS) List(_ context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Fail[vfs.DirEntry](vfs.NewError(vfs.KindUnavailable, p, nil))
}
func (pathErrFS) Grep(_ context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return vfs.Fail[vfs.GrepResult](vfs.NewError(vfs.KindUnavailable, vfs.Join(q.Path, "f"), nil))
}

func TestErrorPathsRewritten(t *testing.T) {
	ctx := context.Background()
	u := mustUnion(t,
		union.Mount{Prefix: "/repo", FS: temp.MustNew(map[string]string{"/x": "x"})},
		union.Mount{Prefix: "/bad", FS: pathErrFS{}},
		union.Mount{Prefix: "/raw", FS: errFS{err: fmt.Errorf("open /y: permission denied")}},
	)
	check := func(what string, err error, kind error, msg string) {
		t.Helper()
		assert.ErrorIs(t, err, kind, what)
		assert.EqualError(t, err, msg, what)
	}
	_, err := u.Read(ctx, "/repo/nope")
	check("Read(/repo/nope)", err, vfs.ErrNotFound, "not found: /repo/nope")
	err = u.Delete(ctx, "/repo/nope")
	check("Delete(/repo/nope)", err, vfs.ErrNotFound, "not found: /repo/nope")
	_, err = u.Read(ctx, "/repo")
	check("Read(/repo)", err, vfs.ErrIsDir, "is a directory: /repo")
	_, err = vfs.ReadAt(ctx, u, "/repo/nope", make([]byte, 4), 0)
	check("ReadAt(/repo/nope)", err, vfs.ErrNotFound, "not found: /repo/nope")
	_, err = vfs.WriteIf(ctx, u, "/repo/x", []byte("y"), vfs.Precondition{IfNoneMatch: true})
	check("WriteIf(/repo/x)", err, vfs.ErrConflict, "conflict: /repo/x")
	err = u.Write(ctx, "/bad/w", nil)
	check("Write(/bad/w)", err, vfs.ErrWriteFailed, "write failed: /bad/w")
	_, err = u.Stat(ctx, "/bad/s")
	check("Stat(/bad/s)", err, vfs.ErrUnavailable, "unavailable: /bad/s")
	_, err = u.Stat(ctx, "/bad")
	check("Stat(/bad)", err, vfs.ErrUnavailable, "unavailable: /bad")
	_, err = collect(t, u.List(ctx, "/bad/d"))
	check("List(/bad/d)", err, vfs.ErrUnavailable, "unavailable: /bad/d")
	_, err = collect(t, u.Grep(ctx, vfs.GrepQuery{Pattern: "x", Path: "/bad"}))
	check("Grep(/bad)", err, vfs.ErrUnavailable, "unavailable: /bad/f")

	// An untyped error is wrapped, never edited: a PathError naming the
	// union path, which still unwraps to the child's error.
	_, err = u.Read(ctx, "/raw/y")
	var pe *vfs.PathError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, vfs.KindOther, pe.Kind)
	assert.Equal(t, "/raw/y", pe.Path)
	assert.EqualError(t, err, "/raw/y: open /y: permission denied")
	assert.EqualError(t, errors.Unwrap(err), "open /y: permission denied", "Unwrap")
}

// spyFS wraps a tree and records the queries it gets and whether each
// stream it returned ran to its end (or was stopped).
type spyFS struct {
	vfs.FileSystem
	mu      sync.Mutex
	greps   []vfs.GrepQuery
	globs   [][2]string
	open    int // streams started and not yet returned
	started int // streams started
	stopped int // streams whose consumer stopped early
}

func spyStream[T any](s *spyFS, src iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		s.mu.Lock()
		s.open++
		s.started++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.open--
			s.mu.Unlock()
		}()
		for v, err := range src {
			if !yield(v, err) {
				s.mu.Lock()
				s.stopped++
				s.mu.Unlock()
				return
			}
		}
	}
}

func (s *spyFS) List(ctx context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
	return spyStream(s, s.FileSystem.List(ctx, p))
}

func (s *spyFS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	s.mu.Lock()
	s.globs = append(s.globs, [2]string{pattern, dir})
	s.mu.Unlock()
	return spyStream(s, s.FileSystem.Glob(ctx, pattern, dir))
}

func (s *spyFS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	s.mu.Lock()
	s.greps = append(s.greps, q)
	s.mu.Unlock()
	return spyStream(s, s.FileSystem.Grep(ctx, q))
}

func (s *spyFS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return spyStream(s, s.FileSystem.Search(ctx, q))
}

// spies returns a union of n spied temp trees of filesPer files each,
// mounted side by side at /m0, /m1, ... or, with root, the first at "/"
// (so that the union merges instead of concatenating).
func spies(t *testing.T, n int, filesPer int, root bool) (vfs.FileSystem, []*spyFS) {
	t.Helper()
	var ms []union.Mount
	var ss []*spyFS
	for i := range n {
		files := map[string]string{}
		for j := range filesPer {
			files[fmt.Sprintf("/f%02d.txt", j)] = "hit one\nmiss\nhit two\n"
		}
		s := &spyFS{FileSystem: temp.MustNew(files)}
		ss = append(ss, s)
		prefix := fmt.Sprintf("/m%d", i)
		if root && i == 0 {
			prefix = "/"
		}
		ms = append(ms, union.Mount{Prefix: prefix, FS: s})
	}
	return mustUnion(t, ms...), ss
}

func TestMaxResultsAfterMerge(t *testing.T) {
	ctx := context.Background()
	u, ss := spies(t, 3, 5, false)
	got, err := collect(t, u.Grep(ctx, vfs.GrepQuery{Pattern: "hit", MaxResults: 4}))
	require.NoError(t, err)
	want := []vfs.GrepResult{
		{Path: "/m0/f00.txt", LineNumber: 1, Line: "hit one"},
		{Path: "/m0/f00.txt", LineNumber: 3, Line: "hit two"},
		{Path: "/m0/f01.txt", LineNumber: 1, Line: "hit one"},
		{Path: "/m0/f01.txt", LineNumber: 3, Line: "hit two"},
	}
	assert.Equal(t, want, got, "Grep(max 4)")
	for i, s := range ss {
		if assert.Len(t, s.greps, 1, "child %d queries", i) {
			assert.Equal(t, 4, s.greps[0].MaxResults, "child %d query MaxResults", i)
			assert.Equal(t, "/", s.greps[0].Path, "child %d query Path", i)
		}
	}
}

// TestBreakStopsChildren: breaking out of a merged stream stops every
// child stream; none is left running.
func TestBreakStopsChildren(t *testing.T) {
	for _, root := range []bool{false, true} {
		t.Run(fmt.Sprintf("root=%t", root), func(t *testing.T) { testBreakStopsChildren(t, root) })
	}
}

func testBreakStopsChildren(t *testing.T, root bool) {
	ctx := context.Background()
	u, ss := spies(t, 4, 20, root)
	streams := map[string]func() iter.Seq2[string, error]{
		"Glob": func() iter.Seq2[string, error] { return pathsOf(u.Glob(ctx, "**/*.txt", "/")) },
		"Grep": func() iter.Seq2[string, error] {
			return pathsOf2(u.Grep(ctx, vfs.GrepQuery{Pattern: "hit"}), func(r vfs.GrepResult) string { return r.Path })
		},
		"Search": func() iter.Seq2[string, error] {
			return pathsOf2(u.Search(ctx, vfs.SearchQuery{Query: "hit"}), func(r vfs.SearchResult) string { return r.Path })
		},
	}
	for name, open := range streams {
		for _, s := range ss {
			s.started, s.stopped = 0, 0
		}
		n := 0
		for _, err := range open() {
			require.NoError(t, err, name)
			if n++; n == 3 {
				break
			}
		}
		for i, s := range ss {
			s.mu.Lock()
			open, started, stopped := s.open, s.started, s.stopped
			s.mu.Unlock()
			assert.Zero(t, open, "%s: child %d has streams still open after break", name, i)
			if name == "Search" {
				continue // temp trees yield no results: nothing to stop
			}
			// Merged children all start and are all stopped; side by side
			// they run one after the other, and the first has the 3 hits.
			wantStarted := 1
			if !root && i > 0 {
				wantStarted = 0
			}
			assert.Equal(t, wantStarted, started, "%s: child %d started", name, i)
			assert.Equal(t, wantStarted, stopped, "%s: child %d stopped", name, i)
		}
	}
}

func pathsOf(seq iter.Seq2[vfs.DirEntry, error]) iter.Seq2[string, error] {
	return pathsOf2(seq, func(e vfs.DirEntry) string { return e.Path })
}

func pathsOf2[T any](seq iter.Seq2[T, error], f func(T) string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for v, err := range seq {
			if !yield(f(v), err) {
				return
			}
		}
	}
}

// TestRoutedGlobReachesOnlyItsMount: a pattern naming a route is given,
// rewritten, to that route's child only.
func TestRoutedGlobReachesOnlyItsMount(t *testing.T) {
	ctx := context.Background()
	root := &spyFS{FileSystem: temp.MustNew(map[string]string{"/README.md": "r", "/repo/leak.go": "leak"})}
	repo := &spyFS{FileSystem: temp.MustNew(map[string]string{"/a.go": "a", "/sub/b.go": "b"})}
	notes := &spyFS{FileSystem: temp.MustNew(map[string]string{"/n.go": "n"})}
	u := mustUnion(t,
		union.Mount{Prefix: "/", FS: root},
		union.Mount{Prefix: "/repo", FS: repo},
		union.Mount{Prefix: "/notes", FS: notes},
	)
	for _, tc := range []struct{ pattern, dir string }{
		{"/repo/**/*.go", "/"},
		{"repo/**/*.go", "/"},
		{"**/*.go", "/repo"},
		{"/repo/**/*.go", "/repo"},
	} {
		root.globs, repo.globs, notes.globs = nil, nil, nil
		es, err := collect(t, u.Glob(ctx, tc.pattern, tc.dir))
		require.NoError(t, err)
		assert.Equal(t, []string{"/repo/a.go", "/repo/sub/b.go"}, paths(es), "Glob(%q, %q)", tc.pattern, tc.dir)
		assert.Empty(t, root.globs, "Glob(%q, %q) reached the / mount", tc.pattern, tc.dir)
		assert.Empty(t, notes.globs, "Glob(%q, %q) reached the /notes mount", tc.pattern, tc.dir)
		if assert.Len(t, repo.globs, 1, "Glob(%q, %q): /repo queries", tc.pattern, tc.dir) {
			assert.True(t, strings.HasSuffix(repo.globs[0][0], "**/*.go"), "Glob(%q, %q): /repo got %v", tc.pattern, tc.dir, repo.globs)
		}
	}
	// A wildcard before the route fans out, rewritten per mount.
	root.globs, repo.globs, notes.globs = nil, nil, nil
	es, _ := collect(t, u.Glob(ctx, "*/*.go", "/"))
	assert.Equal(t, []string{"/notes/n.go", "/repo/a.go"}, paths(es), "Glob(*/*.go)")
	assert.Equal(t, [][2]string{{"*.go", "/"}}, repo.globs, "Glob(*/*.go) /repo child got")
	assert.Equal(t, [][2]string{{"*.go", "/"}}, notes.globs, "Glob(*/*.go) /notes child got")
}

func TestGrepAtRootWithGlob(t *testing.T) {
	ctx := context.Background()
	u, _ := fixture.build(t)
	got, err := collect(t, u.Grep(ctx, vfs.GrepQuery{Pattern: "func main", Path: "/", Glob: "*.go"}))
	require.NoError(t, err)
	var ps []string
	for _, r := range got {
		ps = append(ps, fmt.Sprintf("%s:%d", r.Path, r.LineNumber))
	}
	want := []string{
		"/a/b/c/c.go:2", "/a/b/c/repo/r.go:2", "/main.go:2", "/repo-tools/t.go:2",
		"/repo/main.go:3", "/repo/sub/deep/y.go:2", "/repo/sub/x.go:2",
		"/repo/vendor-x/w.go:2", "/repo/vendor/lib/l.go:2", "/repo/x.go:2", "/repo/x.go:3",
	}
	assert.Equal(t, want, ps, "Grep(func main, /, *.go)")
}

func TestCapabilities(t *testing.T) {
	ctx := context.Background()
	root := temp.MustNew(map[string]string{"/r": "root"})
	repo := temp.MustNew(map[string]string{"/x": "0123456789"})
	u := mustUnion(t, union.Mount{Prefix: "/", FS: root}, union.Mount{Prefix: "/repo", FS: repo})
	buf := make([]byte, 4)
	n, err := vfs.ReadAt(ctx, u, "/repo/x", buf, 3)
	assert.NoError(t, err, "ReadAt")
	assert.Equal(t, 4, n, "ReadAt count")
	assert.Equal(t, "3456", string(buf), "ReadAt data")
	info, _ := u.Stat(ctx, "/repo/x")
	etag, err := vfs.WriteIf(ctx, u, "/repo/x", []byte("new"), vfs.Precondition{IfMatch: info.ETag})
	assert.NoError(t, err, "WriteIf")
	assert.NotEqual(t, info.ETag, etag, "WriteIf etag")
	data, _ := repo.Read(ctx, "/x")
	assert.Equal(t, "new", string(data), "child after WriteIf")

	var mu sync.Mutex
	var changes []vfs.Change
	cancel, ok := vfs.Watch(u, func(c vfs.Change) {
		mu.Lock()
		changes = append(changes, c)
		mu.Unlock()
	})
	require.True(t, ok, "a union of Notifiers is a Notifier")
	_ = u.Write(ctx, "/repo/y", []byte("y"))
	_ = u.Write(ctx, "/top", []byte("t"))
	_ = root.Write(ctx, "/repo/hidden", []byte("shadowed")) // not the union's
	_ = u.Delete(ctx, "/repo/y")
	cancel()
	_ = u.Write(ctx, "/after", []byte("a"))
	want := []vfs.Change{{Path: "/repo/y", Op: vfs.ChangeWrite}, {Path: "/top", Op: vfs.ChangeWrite}, {Path: "/repo/y", Op: vfs.ChangeDelete}}
	assert.Equal(t, want, changes, "changes")
}

// TestMaxResultsWithShadowedHits: a child whose first hits the union drops
// (a deeper mount shadows them) must not be capped before the union has
// its results.
func TestMaxResultsWithShadowedHits(t *testing.T) {
	ctx := context.Background()
	u := mustUnion(t,
		union.Mount{Prefix: "/", FS: temp.MustNew(map[string]string{"/repo/a": "hit", "/repo/b": "hit", "/z": "hit"})},
		union.Mount{Prefix: "/repo", FS: temp.MustNew(map[string]string{"/c": "miss"})},
	)
	got, err := collect(t, u.Grep(ctx, vfs.GrepQuery{Pattern: "hit", MaxResults: 1}))
	assert.NoError(t, err, "Grep(max 1)")
	assert.Equal(t, []vfs.GrepResult{{Path: "/z", LineNumber: 1, Line: "hit"}}, got, "Grep(max 1)")
}
