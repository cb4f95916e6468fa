package cow_test

import (
	"context"
	"iter"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/temp"
)

func searchPaths(t *testing.T, fsys vfs.FileSystem, q string) []string {
	t.Helper()
	var out []string
	var all []vfs.SearchResult
	for r, err := range fsys.Search(t.Context(), vfs.SearchQuery{Query: q}) {
		require.NoError(t, err)
		out = append(out, r.Path)
		all = append(all, r)
	}
	assert.True(t, slices.IsSortedFunc(all, vfs.CompareSearchResults), "Search(%s) not by score then path: %+v", q, all)
	return out
}

// Upper shows the layer's own files only; Search with an index of it
// merges those with the base index's results for untouched files.
func TestUpperSearch(t *testing.T) {
	ctx := t.Context()
	base, err := index.Open(ctx, temp.MustNew(map[string]string{
		"/a.txt":     "echidna\n",
		"/d/old.txt": "wombat\n",
		"/kept.txt":  "kept quokka\n",
	}), t.TempDir(), index.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { base.Close() })
	c, err := cow.Open(base, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.Write(ctx, "/n/new.txt", []byte("quokka quokka\n")))
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("platypus\n")))
	require.NoError(t, c.Delete(ctx, "/d/old.txt"))
	require.NoError(t, c.Symlink(ctx, "/a.txt", "/link"))

	var files []string
	for p, err := range vfs.WalkFiles(ctx, c.Upper(), "/") {
		require.NoError(t, err)
		files = append(files, p)
	}
	assert.Equal(t, []string{"/a.txt", "/n/new.txt"}, files, "the layer's own files")
	require.Error(t, c.Upper().Write(ctx, "/x", nil), "read-only")

	assert.Equal(t, []string{"/kept.txt"}, searchPaths(t, c, "quokka"), "without an upper search: the base's untouched files")
	up, err := index.Open(ctx, c.Upper(), t.TempDir(), index.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { up.Close() })
	c.SetUpperSearch(func(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
		if _, err := up.Sync(ctx); err != nil {
			return func(yield func(vfs.SearchResult, error) bool) { yield(vfs.SearchResult{}, err) }
		}
		return up.Search(ctx, q)
	})
	assert.ElementsMatch(t, []string{"/kept.txt", "/n/new.txt"}, searchPaths(t, c, "quokka"))
	assert.Equal(t, []string{"/a.txt"}, searchPaths(t, c, "platypus"))
	assert.Empty(t, searchPaths(t, c, "echidna"), "a rewritten file's old words")
	assert.Empty(t, searchPaths(t, c, "wombat"), "a deleted file")
	require.NoError(t, c.Delete(ctx, "/n/new.txt"))
	assert.Equal(t, []string{"/kept.txt"}, searchPaths(t, c, "quokka"), "the layer's deleted file")
}
