package cowsession

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/temp"
)

// smallDisk mounts a tmpfs of size bytes, unmounted at cleanup; it skips
// where mounting is not allowed.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("mounting a tmpfs: %v (needs root)", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file at p until the disk is full.
func fill(t *testing.T, p string) {
	t.Helper()
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			require.ErrorIs(t, err, syscall.ENOSPC)
			return
		}
	}
}

// TestCheckpointDiskFull: a session directory on a full disk (a small
// tmpfs filled up) fails the turn's checkpoint, recorded in its event
// with the cause; the previous checkpoint is intact and no part of the
// failed one is left; once there is room the next checkpoint holds the
// changes of both turns.
func TestCheckpointDiskFull(t *testing.T) {
	ctx := t.Context()
	disk := smallDisk(t, "1m")
	log, err := sessions.New(filepath.Join(disk, "state")).Create(sessions.Meta{Agent: "a"})
	require.NoError(t, err)
	defer log.Close()
	layerDir := LayerDir(log.Dir())
	layer, err := cow.Open(temp.Empty(), layerDir)
	require.NoError(t, err)
	defer layer.Close()
	hook := CheckpointHook(layer, log, nil)
	require.NoError(t, layer.Write(ctx, "/a.txt", []byte("a")))
	ref := hook(ctx, 1, "t1")
	require.Empty(t, ref.Error)
	cp1, err := os.ReadFile(checkpoint.ManifestPath(layerDir, 1))
	require.NoError(t, err)

	require.NoError(t, layer.Write(ctx, "/b.txt", []byte("b")))
	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	ref = hook(ctx, 2, "t2")
	assert.Contains(t, ref.Error, "checkpoint of turn 2")
	assert.Contains(t, ref.Error, "no space left on device")
	after, err := os.ReadFile(checkpoint.ManifestPath(layerDir, 1))
	require.NoError(t, err)
	assert.Equal(t, cp1, after, "checkpoint 1 is intact")
	_, err = checkpoint.Load(layerDir, 2)
	require.ErrorIs(t, err, checkpoint.ErrNoCheckpoint)
	des, err := os.ReadDir(filepath.Dir(checkpoint.ManifestPath(layerDir, 1)))
	require.NoError(t, err)
	assert.Len(t, des, 1, "nothing of the failed checkpoint is left: %v", des)

	require.NoError(t, os.Remove(filler))
	ref = hook(ctx, 3, "t3")
	require.Empty(t, ref.Error)
	assert.Equal(t, 1, ref.Changed, "turn 3's changes count from checkpoint 1, the last written")
	m, err := checkpoint.Load(layerDir, 3)
	require.NoError(t, err)
	assert.Len(t, m.Entries, 2)
	require.NoError(t, checkpoint.Rewind(layer, 1))
	_, err = layer.Read(ctx, "/b.txt")
	assert.True(t, errors.Is(err, vfs.ErrNotFound), "rewound to checkpoint 1: %v", err)
}
