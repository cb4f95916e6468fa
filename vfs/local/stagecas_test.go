package local_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// TestCommitIf: a staging knows the version it started from; CommitIf on
// it publishes only while the file is still that version, and on a
// conflict publishes nothing and leaves the staging open.
func TestCommitIf(t *testing.T) {
	ctx := t.Context()
	fsys, dir := newTree(t, map[string][]byte{"/f.txt": []byte("one\n")})
	st, err := fsys.Stat(ctx, "/f.txt")
	require.NoError(t, err)

	s, err := fsys.Stage(ctx, "/f.txt", true)
	require.NoError(t, err)
	assert.Equal(t, st.ETag, vfs.BaseETag(s))
	_, err = s.WriteAt([]byte("one\nappended\n"), 0)
	require.NoError(t, err)
	require.NoError(t, fsys.Write(ctx, "/f.txt", []byte("edited meanwhile\n")))
	err = vfs.CommitIf(ctx, s, vfs.Precondition{IfMatch: vfs.BaseETag(s)})
	assert.EqualError(t, err, "conflict: /f.txt")
	data, err := fsys.Read(ctx, "/f.txt")
	require.NoError(t, err)
	assert.Equal(t, "edited meanwhile\n", string(data), "the edit made meanwhile survives")
	assert.Equal(t, int64(len("one\nappended\n")), s.Size(), "the staging stays open")
	require.NoError(t, s.Commit(ctx), "an unconditional commit may still follow")
	data, err = fsys.Read(ctx, "/f.txt")
	require.NoError(t, err)
	assert.Equal(t, "one\nappended\n", string(data))

	// Unchanged since staged: the commit lands.
	s, err = fsys.Stage(ctx, "/f.txt", true)
	require.NoError(t, err)
	_, err = s.WriteAt([]byte("two\n"), 0)
	require.NoError(t, err)
	require.NoError(t, s.Truncate(4))
	require.NoError(t, vfs.CommitIf(ctx, s, vfs.Precondition{IfMatch: vfs.BaseETag(s)}))
	data, err = fsys.Read(ctx, "/f.txt")
	require.NoError(t, err)
	assert.Equal(t, "two\n", string(data))

	// A new file: no base; IfNoneMatch conflicts once another made it.
	s, err = fsys.Stage(ctx, "/new.txt", false)
	require.NoError(t, err)
	assert.Empty(t, vfs.BaseETag(s))
	require.NoError(t, fsys.Write(ctx, "/new.txt", []byte("first\n")))
	assert.ErrorIs(t, vfs.CommitIf(ctx, s, vfs.Precondition{IfNoneMatch: true}), vfs.ErrConflict)
	require.NoError(t, s.Abort())
	assert.Equal(t, []string{"f.txt", "new.txt"}, hostNames(t, dir), "no temporary left behind")
}
