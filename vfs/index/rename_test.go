package index_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/temp"
)

// A rename through the index moves the file in the wrapped tree and its
// entries in the index: Search finds the new paths, never the old ones.
func TestRenameMovesIndexEntries(t *testing.T) {
	f := open(t, temp.MustNew(map[string]string{
		"/a/x.txt":   "a quokka\n",
		"/a/d/y.txt": "a numbat\n",
		"/b.txt":     "a wombat\n",
	}), "", index.Options{})
	ctx := t.Context()
	require.NoError(t, vfs.Rename(ctx, f, "/b.txt", "/c/b2.txt"))
	assert.Equal(t, []string{"/c/b2.txt"}, paths(search(t, f, vfs.SearchQuery{Query: "wombat"})))
	require.NoError(t, vfs.Rename(ctx, f, "/a", "/z"))
	assert.Equal(t, []string{"/z/x.txt"}, paths(search(t, f, vfs.SearchQuery{Query: "quokka"})))
	assert.Equal(t, []string{"/z/d/y.txt"}, paths(search(t, f, vfs.SearchQuery{Query: "numbat"})))
	data, err := f.Read(ctx, "/z/d/y.txt")
	require.NoError(t, err)
	assert.Equal(t, "a numbat\n", string(data))
	assert.ErrorIs(t, vfs.Rename(ctx, f, "/a/x.txt", "/q"), vfs.ErrNotFound)
}
