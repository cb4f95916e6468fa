package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func walkPaths(t *testing.T, seq iter.Seq2[vfs.DirEntry, error]) []string {
	t.Helper()
	var out []string
	for e, err := range seq {
		require.NoError(t, err, "walk failed")
		out = append(out, e.Path)
	}
	return out
}

// orderTree has names that sort around '/': '-' and '.' are below it, so
// "/a-b" and "/a.c" come before "/a/x" in path order, though a plain
// depth-first walk would visit "/a/x" first.
var orderTree = map[string]string{"/a-b": "", "/a/x": "", "/a/y/z": "", "/a.c/q": "", "/a0": "", "/b": ""}

func TestWalkOrderAndDepth(t *testing.T) {
	fsys := temp.MustNew(orderTree)
	ctx := t.Context()
	for _, c := range []struct {
		dir   string
		depth int
		want  []string
	}{
		{"/", 0, []string{"/a", "/a-b", "/a.c", "/a.c/q", "/a/x", "/a/y", "/a/y/z", "/a0", "/b"}},
		{"/", 1, []string{"/a", "/a-b", "/a.c", "/a0", "/b"}},
		{"/", 2, []string{"/a", "/a-b", "/a.c", "/a.c/q", "/a/x", "/a/y", "/a0", "/b"}},
		{"/", -1, []string{"/a", "/a-b", "/a.c", "/a.c/q", "/a/x", "/a/y", "/a/y/z", "/a0", "/b"}},
		{"/a", 0, []string{"/a/x", "/a/y", "/a/y/z"}},
		{"a/", 1, []string{"/a/x", "/a/y"}},
		{"/a/x", 0, nil},
		{"/nope", 0, nil},
	} {
		assert.Equal(t, c.want, walkPaths(t, vfs.Walk(ctx, fsys.List, c.dir, c.depth)), "Walk(%q, %d)", c.dir, c.depth)
	}
}

// randomTree returns a tree of n files with names drawn from a small
// alphabet that includes the bytes around '/'.
func randomTree(r *rand.Rand, n int) map[string][]byte {
	names := []string{"a", "b", "a-b", "a.b", "a0", "-", ".x", "ab", "a b", "Z", "\u00fc"}
	files := map[string][]byte{}
	for len(files) < n {
		p := ""
		for range 1 + r.IntN(4) {
			p += "/" + names[r.IntN(len(names))]
		}
		clash := false
		for q := range files { // a file cannot be above or below another file
			if vfs.HasPrefix(q, p) || vfs.HasPrefix(p, q) {
				clash = true
				break
			}
		}
		if !clash {
			files[p] = []byte(p + "\n")
		}
	}
	return files
}

// TestWalkRandom compares Walk with the brute-force sorted list of every
// path, at every depth limit.
func TestWalkRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 40 {
		files := randomTree(r, 1+r.IntN(25))
		fsys, err := temp.New(files)
		require.NoError(t, err)
		ref := vfstest.NewReference(files)
		for depth := range 5 {
			var want []string
			for e, err := range ref.Glob(t.Context(), "**", "/") {
				require.NoError(t, err)
				if depth == 0 || len(vfs.Split(e.Path)) <= depth {
					want = append(want, e.Path)
				}
			}
			require.Equal(t, want, walkPaths(t, vfs.Walk(t.Context(), fsys.List, "/", depth)), "tree %d: Walk(\"/\", %d)", i, depth)
		}
	}
}

// listSpy is a ListFunc over a tree that counts the directories listed and
// can fail one.
type listSpy struct {
	fsys   vfs.FileSystem
	listed []string
	fail   string
}

func (s *listSpy) list(ctx context.Context, dir string) iter.Seq2[vfs.DirEntry, error] {
	s.listed = append(s.listed, dir)
	if dir == s.fail {
		return vfs.Fail[vfs.DirEntry](errors.New("list failed: " + dir))
	}
	return s.fsys.List(ctx, dir)
}

func TestWalkStops(t *testing.T) {
	fsys := temp.MustNew(orderTree)
	// Breaking out stops listing.
	spy := &listSpy{fsys: fsys}
	for e := range vfs.Walk(t.Context(), spy.list, "/", 0) {
		if e.Path == "/a" {
			break
		}
	}
	assert.Equal(t, []string{"/"}, spy.listed, "Walk listed more than / after a break at /a")
	// A failing directory ends the stream with its error, last.
	spy = &listSpy{fsys: fsys, fail: "/a/y"}
	var got []string
	var gotErr error
	for e, err := range vfs.Walk(t.Context(), spy.list, "/", 0) {
		require.NoError(t, gotErr, "Walk yielded %v after an error", e)
		if err != nil {
			gotErr = err
			continue
		}
		got = append(got, e.Path)
	}
	assert.Equal(t, []string{"/a", "/a-b", "/a.c", "/a.c/q", "/a/x", "/a/y"}, got, "Walk with /a/y failing")
	assert.EqualError(t, gotErr, "list failed: /a/y", "Walk with /a/y failing")
	// A cancelled context ends with its error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var errs []error
	for _, err := range vfs.Walk(ctx, fsys.List, "/", 0) {
		errs = append(errs, err)
	}
	if assert.Len(t, errs, 1, "Walk with a cancelled context, want one context.Canceled") {
		assert.ErrorIs(t, errs[0], context.Canceled, "Walk with a cancelled context")
	}
}

func TestWalkFiles(t *testing.T) {
	fsys := temp.MustNew(orderTree)
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{"/", []string{"/a-b", "/a.c/q", "/a/x", "/a/y/z", "/a0", "/b"}},
		{"/a", []string{"/a/x", "/a/y/z"}},
		{"/a/x", []string{"/a/x"}},
		{"a/y/../x/", []string{"/a/x"}},
		{"/nope", nil},
		{"/a/x/y", nil},
	} {
		var got []string
		for p, err := range vfs.WalkFiles(t.Context(), fsys, c.dir) {
			require.NoError(t, err, "WalkFiles(%q)", c.dir)
			got = append(got, p)
		}
		assert.Equal(t, c.want, got, "WalkFiles(%q)", c.dir)

	}
}

func ExampleWalk() {
	fsys := temp.MustNew(map[string]string{"/a/x": "", "/a-b": "", "/b": ""})
	for e, err := range vfs.Walk(context.Background(), fsys.List, "/", 0) {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.Path, e.Kind)
	}
	// Output:
	// /a directory
	// /a-b file
	// /a/x file
	// /b file
}
