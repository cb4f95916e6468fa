package index_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/local"
)

// The index's staging forwards a conditional commit and indexes what it
// published; a conflict publishes and indexes nothing.
func TestStageCommitIf(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("a quokka\n"), 0o644))
	tree, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { tree.Close() })
	f := open(t, tree, "", index.Options{})

	s, err := f.Stage(ctx, "/f.txt", true)
	require.NoError(t, err)
	require.NoError(t, s.Truncate(0))
	_, err = s.WriteAt([]byte("a numbat\n"), 0)
	require.NoError(t, err)
	base := vfs.BaseETag(s)
	require.NotEmpty(t, base)
	assert.ErrorIs(t, vfs.CommitIf(ctx, s, vfs.Precondition{IfMatch: "stale"}), vfs.ErrConflict)
	assert.Empty(t, paths(search(t, f, vfs.SearchQuery{Query: "numbat"})))
	require.NoError(t, vfs.CommitIf(ctx, s, vfs.Precondition{IfMatch: base}))
	assert.Equal(t, []string{"/f.txt"}, paths(search(t, f, vfs.SearchQuery{Query: "numbat"})))
}
