package union_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// Grep on a missing path of a local: mount is "not found" in the union's
// namespace; a missing virtual path (no mount, or a temp: mount) still
// yields nothing, and a grep over the whole union is unaffected.
func TestGrepMissingHostRoot(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("needle\n"), 0o644))
	repo, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { repo.Close() })
	u, err := union.New([]union.Mount{{Prefix: "/repo", FS: repo}, {Prefix: "/notes", FS: temp.MustNew(map[string]string{"/n.txt": "needle\n"})}})
	require.NoError(t, err)
	grep := func(p string) ([]vfs.GrepResult, error) {
		var out []vfs.GrepResult
		for h, err := range u.Grep(ctx, vfs.GrepQuery{Pattern: "needle", Path: p}) {
			if err != nil {
				return out, err
			}
			out = append(out, h)
		}
		return out, nil
	}
	_, err = grep("/repo/missing")
	assert.EqualError(t, err, "not found: /repo/missing")
	assert.ErrorIs(t, err, vfs.ErrNotFound)
	for _, p := range []string{"/notes/missing", "/elsewhere", "/elsewhere/deeper"} {
		hits, err := grep(p)
		assert.NoError(t, err, p)
		assert.Empty(t, hits, p)
	}
	hits, err := grep("/")
	require.NoError(t, err)
	assert.Len(t, hits, 2)
}
