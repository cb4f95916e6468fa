package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// owner is the host's owner and group of p, not following a link.
func owner(t *testing.T, p string) [2]uint32 {
	t.Helper()
	var st syscall.Stat_t
	require.NoError(t, syscall.Lstat(p, &st))
	return [2]uint32{st.Uid, st.Gid}
}

// TestSetOwner: as root, SetOwner gives a file and a directory away on the
// host (Stat shows it), -1 keeps one id, SetLinkOwner changes the link and
// not its target, and neither reaches a file outside the root through a
// link. Not root, giving a file away fails with EPERM.
func TestSetOwner(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(base, "secret"), []byte("s"), 0o644))
	require.NoError(t, os.Symlink("f", filepath.Join(root, "lf")))
	require.NoError(t, os.Symlink("../secret", filepath.Join(root, "out")))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	ctx := context.Background()
	secret := owner(t, filepath.Join(base, "secret"))

	if os.Geteuid() != 0 {
		err := fsys.SetOwner(ctx, "/f", 65534, 65534)
		require.Error(t, err)
		assert.ErrorIs(t, err, syscall.EPERM)
		return
	}
	require.NoError(t, fsys.SetOwner(ctx, "/f", 65534, 65533))
	assert.Equal(t, [2]uint32{65534, 65533}, owner(t, filepath.Join(root, "f")))
	fi, err := fsys.Stat(ctx, "/f")
	require.NoError(t, err)
	assert.Equal(t, [2]uint32{65534, 65533}, [2]uint32{fi.UID, fi.GID}, "Stat(/f)")

	require.NoError(t, fsys.SetOwner(ctx, "/f", -1, 0))
	assert.Equal(t, [2]uint32{65534, 0}, owner(t, filepath.Join(root, "f")), "-1 keeps the owner")
	require.NoError(t, fsys.SetOwner(ctx, "/d", 65534, -1))
	assert.Equal(t, uint32(65534), owner(t, filepath.Join(root, "d"))[0])

	lf := owner(t, filepath.Join(root, "f"))
	require.NoError(t, fsys.SetLinkOwner(ctx, "/lf", 65533, 65533))
	assert.Equal(t, [2]uint32{65533, 65533}, owner(t, filepath.Join(root, "lf")), "the link's own")
	assert.Equal(t, lf, owner(t, filepath.Join(root, "f")), "the target is left as it was")

	// A link out of the root: SetOwner reads it as missing, SetLinkOwner
	// changes the link only.
	assert.ErrorIs(t, fsys.SetOwner(ctx, "/out", 65534, 65534), vfs.ErrNotFound)
	require.NoError(t, fsys.SetLinkOwner(ctx, "/out", 65534, 65534))
	assert.Equal(t, secret, owner(t, filepath.Join(base, "secret")), "outside the root changed")

	assert.ErrorIs(t, fsys.SetOwner(ctx, "/missing", 1, 1), vfs.ErrNotFound)
	assert.ErrorIs(t, fsys.SetLinkOwner(ctx, "/missing", 1, 1), vfs.ErrNotFound)
	err = fsys.SetLinkOwner(ctx, "/f", 1, 1)
	assert.True(t, errors.Is(err, syscall.EINVAL), "SetLinkOwner of a file: %v", err)
}
