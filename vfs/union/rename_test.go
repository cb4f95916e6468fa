package union_test

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// TestRename: within one mount the mount's Renamer moves files and
// directories; across mounts the cause is EXDEV and vfs.Rename copies and
// deletes; a read-only mount refuses; mount points and the union's own
// directories cannot move.
func TestRename(t *testing.T) {
	ctx := t.Context()
	a := temp.MustNew(map[string]string{"/x.txt": "x", "/d/y.txt": "y"})
	b := temp.MustNew(map[string]string{"/b.txt": "b"})
	u, err := union.New([]union.Mount{
		{Prefix: "/a", FS: a},
		{Prefix: "/b", FS: b},
		{Prefix: "/ro", FS: readonly.New(temp.MustNew(map[string]string{"/r.txt": "r"}))},
		{Prefix: "/a/sub", FS: temp.MustNew(map[string]string{"/s.txt": "s"})},
	})
	require.NoError(t, err)
	r := u.(vfs.Renamer)
	read := func(fsys vfs.FileSystem, p string) string {
		t.Helper()
		data, err := fsys.Read(ctx, p)
		require.NoError(t, err, p)
		return string(data)
	}

	require.NoError(t, r.Rename(ctx, "/a/d", "/a/e/d2"))
	assert.Equal(t, "y", read(a, "/e/d2/y.txt"))

	err = r.Rename(ctx, "/a/x.txt", "/b/x.txt")
	assert.ErrorIs(t, err, syscall.EXDEV)
	assert.EqualError(t, err, "write failed: /b/x.txt: invalid cross-device link")
	assert.Equal(t, "x", read(a, "/x.txt"), "a refused rename moved nothing")
	require.NoError(t, vfs.Rename(ctx, u, "/a/x.txt", "/b/x.txt"))
	assert.Equal(t, "x", read(b, "/x.txt"))
	st, err := a.Stat(ctx, "/x.txt")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, st.Kind)

	assert.EqualError(t, r.Rename(ctx, "/a/nope", "/b/nope"), "not found: /a/nope")
	assert.EqualError(t, r.Rename(ctx, "/ro/r.txt", "/ro/q.txt"), "read-only mount: /ro/r.txt")
	assert.EqualError(t, vfs.Rename(ctx, u, "/ro/r.txt", "/b/r.txt"), "read-only mount: /ro/r.txt")
	assert.Equal(t, "r", read(u, "/ro/r.txt"))
	for _, c := range [][2]string{{"/a/sub", "/a/zz"}, {"/", "/q"}, {"/b/b.txt", "/a/sub"}, {"/b/b.txt", "/b"}} {
		assert.ErrorIs(t, r.Rename(ctx, c[0], c[1]), syscall.EBUSY, "Rename(%q, %q)", c[0], c[1])
	}
	assert.Equal(t, "s", read(u, "/a/sub/s.txt"))
	assert.Equal(t, "b", read(u, "/b/b.txt"))
	assert.EqualError(t, r.Rename(ctx, "/elsewhere/f", "/b/f"), "no mount for path: /elsewhere/f")
}
