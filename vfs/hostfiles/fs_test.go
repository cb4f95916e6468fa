package hostfiles_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestListOrder lists names whose key order differs from path order (a
// directory "a" sorts before "a.txt", but its keys "a/..." after) and
// compares with the in-memory tree.
func TestListOrder(t *testing.T) {
	files := map[string][]byte{}
	for _, p := range []string{
		"/a.txt", "/a/x", "/a-b", "/a/b/c", "/ab", "/a b/z", "/a!", "/a.d/e", "/b",
		"/foo.md", "/foo/bar", "/foo.bar/baz", "/foo-1", "/foo/.hidden",
		"/d/f000001.txt", "/d/f000001/x", "/d/f000002.txt", "/d/f0000011", "/d/f000001-old",
	} {
		files[p] = []byte(p)
	}
	s, err := diskstore.Open(t.TempDir(), diskstore.Options{})
	require.NoError(t, err)
	defer s.Close()
	fsys, err := hostfiles.New(s, hostfiles.Deployment)
	require.NoError(t, err)
	for p, data := range files {
		require.NoError(t, fsys.Write(t.Context(), p, data))
	}
	ref, err := temp.New(files)
	require.NoError(t, err)
	for _, dir := range []string{"/", "/a", "/d", "/foo", "/d/f000001", "/missing", "/a.txt"} {
		want := collect(t, ref.List(t.Context(), dir))
		got := collect(t, fsys.List(t.Context(), dir))
		assert.Equal(t, want, got, "List(%q)", dir)
		assert.True(t, slices.IsSortedFunc(got, vfs.CompareDirEntries), "List(%q) sorted", dir)
	}
}

func collect(t *testing.T, seq func(func(vfs.DirEntry, error) bool)) []vfs.DirEntry {
	var out []vfs.DirEntry
	for e, err := range seq {
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

// racingStore changes /notes.md through another tree right after the
// first Get of it returns: a concurrent writer between a read and the
// write-back.
type racingStore struct {
	hostfiles.Store
	other *hostfiles.FS
	done  bool
}

func (r *racingStore) Get(ctx context.Context, sc hostfiles.Scope, key string) ([]byte, hostfiles.Meta, error) {
	data, m, err := r.Store.Get(ctx, sc, key)
	if !r.done && key == "/notes.md" {
		r.done = true
		if werr := r.other.Write(ctx, key, []byte("milk and eggs\n")); werr != nil {
			return nil, hostfiles.Meta{}, werr
		}
	}
	return data, m, err
}

// TestStrReplaceIsCAS: the synthesized StrReplace on a hostfiles tree
// fails with a conflict when the file changes between its read and its
// write, and the other writer's change stays.
func TestStrReplaceIsCAS(t *testing.T) {
	ctx := t.Context()
	s, err := diskstore.Open(t.TempDir(), diskstore.Options{})
	require.NoError(t, err)
	defer s.Close()
	other, err := hostfiles.New(s, hostfiles.Deployment)
	require.NoError(t, err)
	require.NoError(t, other.Write(ctx, "/notes.md", []byte("milk\n")))
	fsys, err := hostfiles.New(&racingStore{Store: s, other: other}, hostfiles.Deployment)
	require.NoError(t, err)
	_, err = tools.StrReplace(ctx, fsys, "/notes.md", "milk", "bread", false)
	require.Error(t, err)
	assert.EqualError(t, err, "conflict: /notes.md")
	got, err := other.Read(ctx, "/notes.md")
	require.NoError(t, err)
	assert.Equal(t, "milk and eggs\n", string(got), "the concurrent change is kept, not overwritten")
	// Without the race the edit goes through.
	n, err := tools.StrReplace(ctx, fsys, "/notes.md", "eggs", "bread", false)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}
