package diskstore_test

import (
	"bytes"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// TestFullDisk writes past the end of a 1 MiB tmpfs: the write fails with
// an error naming the store and ENOSPC, and the old contents stay.
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	s := openStore(t, dir)
	fsys, err := hostfiles.New(s, hostfiles.Deployment)
	require.NoError(t, err)
	ctx := t.Context()
	old := bytes.Repeat([]byte("o"), 300<<10)
	require.NoError(t, fsys.Write(ctx, "/f", old))
	err = fsys.Write(ctx, "/f", bytes.Repeat([]byte("n"), 900<<10))
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.Contains(t, err.Error(), "/f: hostfiles store "+dir+": put /f:")
	assert.Equal(t, vfs.KindOther, vfs.KindOf(err))
	got, err := fsys.Read(ctx, "/f")
	require.NoError(t, err)
	assert.Equal(t, old, got, "the failed write kept the old contents")
	// Nothing left behind: the space is free again for a write that fits.
	require.NoError(t, fsys.Write(ctx, "/g", bytes.Repeat([]byte("g"), 500<<10)))
}
