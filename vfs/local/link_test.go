package local_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// TestLink: Link makes a second host name of one inode (Nlink 2, the
// same content through both), links a link itself, refuses a
// directory (EPERM), a taken name (EEXIST) and a missing file, and never
// links a file outside the root through a link.
func TestLink(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("one"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(base, "secret"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink("../secret", filepath.Join(root, "out")))
	require.NoError(t, os.Symlink("/", filepath.Join(root, "up")))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	ctx := context.Background()

	require.NoError(t, fsys.Link(ctx, "/f", "/d/g"))
	var a, b syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(root, "f"), &a))
	require.NoError(t, syscall.Stat(filepath.Join(root, "d", "g"), &b))
	assert.Equal(t, a.Ino, b.Ino, "one inode")
	fi, err := fsys.Stat(ctx, "/d/g")
	require.NoError(t, err)
	assert.Equal(t, uint32(2), fi.Nlink)
	assert.False(t, fi.ChangeTime.IsZero())
	got, err := fsys.Read(ctx, "/d/g")
	require.NoError(t, err)
	assert.Equal(t, "one", string(got))

	// A link is linked itself (link(2) does not follow it), so a link out
	// of the root gets a second name that still leads nowhere here.
	require.NoError(t, fsys.Link(ctx, "/out", "/out2"))
	target, err := os.Readlink(filepath.Join(root, "out2"))
	require.NoError(t, err)
	assert.Equal(t, "../secret", target)
	var s syscall.Stat_t
	require.NoError(t, syscall.Stat(filepath.Join(base, "secret"), &s))
	assert.Equal(t, uint64(1), uint64(s.Nlink), "outside the root linked")
	assert.ErrorIs(t, fsys.Link(ctx, "/up/secret", "/x"), vfs.ErrNotFound)
	assert.ErrorIs(t, fsys.Link(ctx, "/f", "/up/x"), vfs.ErrNotFound, "a parent through a link out of the root")

	assert.ErrorIs(t, fsys.Link(ctx, "/d", "/d2"), syscall.EPERM)
	assert.ErrorIs(t, fsys.Link(ctx, "/f", "/d/g"), syscall.EEXIST)
	assert.ErrorIs(t, fsys.Link(ctx, "/missing", "/m"), vfs.ErrNotFound)
	assert.ErrorIs(t, fsys.Link(ctx, "/f", "/nodir/m"), vfs.ErrNotFound)
}
