package cowsession

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestCheckpointFailureRecorded: a checkpoint that cannot be written (a
// full disk; here, a file where its directory goes) is recorded in the
// turn's event as an error; the next turn's checkpoint is written, and
// the layer lost nothing.
func TestCheckpointFailureRecorded(t *testing.T) {
	ctx := t.Context()
	log, err := sessions.New(t.TempDir()).Create(sessions.Meta{Agent: "a"})
	require.NoError(t, err)
	defer log.Close()
	layer, err := cow.Open(temp.Empty(), LayerDir(log.Dir()))
	require.NoError(t, err)
	defer layer.Close()
	hook := CheckpointHook(layer, log, nil)
	blocker := filepath.Join(LayerDir(log.Dir()), "checkpoints")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	require.NoError(t, layer.Write(ctx, "/a.txt", []byte("a")))
	ref := hook(ctx, 1, "t1")
	require.NotNil(t, ref)
	assert.NotEmpty(t, ref.Error)
	require.NoError(t, os.Remove(blocker))
	require.NoError(t, layer.Write(ctx, "/b.txt", []byte("b")))
	ref = hook(ctx, 2, "t2")
	assert.Empty(t, ref.Error)
	assert.Equal(t, 2, ref.Changed, "turn 2's changes count from the last checkpoint that was written")
	m, err := checkpoint.Load(LayerDir(log.Dir()), 2)
	require.NoError(t, err)
	assert.Len(t, m.Entries, 2)
}
