package union_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// A union's readers and stagings have the host descriptor of the mount's
// own where it has one (a local: mount), none where it has none (temp:),
// so a FUSE mount of the union passes through for its local: files.
func TestFdForwarded(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f"), []byte("on the host"), 0o644))
	repo, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { repo.Close() })
	u, err := union.New([]union.Mount{
		{Prefix: "/", FS: repo},
		{Prefix: "/notes", FS: temp.MustNew(map[string]string{"/n": "in memory"})},
	})
	require.NoError(t, err)

	r, err := vfs.OpenFile(ctx, u, "/f")
	require.NoError(t, err)
	defer r.Close()
	fd, ok := vfs.Fd(r)
	require.True(t, ok, "a union reader of a local: file has no descriptor")
	buf := make([]byte, 32)
	k, _ := unix.Pread(int(fd), buf, 0)
	assert.Equal(t, "on the host", string(buf[:max(k, 0)]), "read through the forwarded descriptor")

	st, err := vfs.Stage(ctx, u, "/f", false)
	require.NoError(t, err)
	sfd, ok := vfs.Fd(st)
	require.True(t, ok, "a union staging of a local: file has no descriptor")
	_, err = unix.Pwrite(int(sfd), []byte("written on the descriptor"), 0)
	require.NoError(t, err)
	assert.EqualValues(t, 25, st.Size())
	require.NoError(t, vfs.CommitIf(ctx, st, vfs.Precondition{IfMatch: vfs.BaseETag(st)}), "the forwarded staging commits conditionally")
	data, err := os.ReadFile(filepath.Join(dir, "f"))
	require.NoError(t, err)
	assert.Equal(t, "written on the descriptor", string(data))

	tr, err := vfs.OpenFile(ctx, u, "/notes/n")
	require.NoError(t, err)
	defer tr.Close()
	_, ok = vfs.Fd(tr)
	assert.False(t, ok, "a union reader of a temp: file has a descriptor")
	ts, err := vfs.Stage(ctx, u, "/notes/n", true)
	require.NoError(t, err)
	defer ts.Abort()
	_, ok = vfs.Fd(ts)
	assert.False(t, ok, "a union staging of a temp: file has a descriptor")
}
