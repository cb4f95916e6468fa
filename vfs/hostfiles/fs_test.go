package hostfiles_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
