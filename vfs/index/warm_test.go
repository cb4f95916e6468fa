package index

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestWarm: warmStore asks for every segment file of the index (and for
// nothing when there is no index), and an index opened with Warm answers
// as one opened without it.
func TestWarm(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "idx")
	assert.Zero(t, warmStore(dir), "warmStore of a missing index")
	tree := temp.MustNew(storeFixture)
	f, err := Open(ctx, tree, dir, Options{})
	require.NoError(t, err)
	require.NoError(t, f.Close())

	ents, err := os.ReadDir(filepath.Join(dir, bleveDir, storeDir))
	require.NoError(t, err)
	zaps := 0
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".zap") {
			zaps++
		}
	}
	require.NotZero(t, zaps, "segment files in %v", ents)
	assert.Equal(t, zaps, warmStore(dir), "segment files asked for")

	results := func(opts Options) []vfs.SearchResult {
		opts.Sync = SyncNever
		f, err := Open(ctx, tree, dir, opts)
		require.NoError(t, err)
		defer func() { assert.NoError(t, f.Close()) }()
		var out []vfs.SearchResult
		for r, err := range f.Search(ctx, vfs.SearchQuery{Query: "header reader", MaxResults: 10}) {
			require.NoError(t, err)
			out = append(out, r)
		}
		return out
	}
	cold := results(Options{})
	require.NotEmpty(t, cold)
	assert.Equal(t, cold, results(Options{Warm: true}))
}
