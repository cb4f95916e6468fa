package union_test

import (
	"errors"
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

// A union's staging forwards the mount's conditional commit (errors in the
// union's namespace), and answers errors.ErrUnsupported for a mount whose
// staging has none.
func TestStageCommitIf(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("one"), 0o644))
	repo, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { repo.Close() })
	u, err := union.New([]union.Mount{{Prefix: "/repo", FS: repo}, {Prefix: "/mem", FS: temp.MustNew(map[string]string{"/m.txt": "m"})}})
	require.NoError(t, err)

	s, err := vfs.Stage(ctx, u, "/repo/f.txt", true)
	require.NoError(t, err)
	st, err := u.Stat(ctx, "/repo/f.txt")
	require.NoError(t, err)
	assert.Equal(t, st.ETag, vfs.BaseETag(s))
	require.NoError(t, u.Write(ctx, "/repo/f.txt", []byte("two")))
	assert.EqualError(t, vfs.CommitIf(ctx, s, vfs.Precondition{IfMatch: vfs.BaseETag(s)}), "conflict: /repo/f.txt")
	require.NoError(t, s.Abort())

	m, err := vfs.Stage(ctx, u, "/mem/m.txt", true)
	require.NoError(t, err)
	assert.True(t, errors.Is(vfs.CommitIf(ctx, m, vfs.Precondition{}), errors.ErrUnsupported))
	require.NoError(t, m.Abort())
}
