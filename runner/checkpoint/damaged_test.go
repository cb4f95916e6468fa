package checkpoint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestDamagedLayer: a blob removed from a layer by hand is named by
// every operation that needs it (a read, a diff, a rewind or fork to a
// checkpoint holding it), which change nothing; everything else still
// works: the other files, new checkpoints, a rewind to a checkpoint
// without it.
func TestDamagedLayer(t *testing.T) {
	ctx := t.Context()
	base := temp.MustNew(map[string]string{"/keep.txt": "keep\n"})
	sd := t.TempDir()
	layer := filepath.Join(sd, checkpoint.LayerDir)
	c, err := cow.Open(base, layer)
	require.NoError(t, err)
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("a\n")))
	_, _, err = checkpoint.Take(c, sd, 1, "t1", nil)
	require.NoError(t, err)
	require.NoError(t, c.Write(ctx, "/lost.txt", []byte("lost\n")))
	_, _, err = checkpoint.Take(c, sd, 2, "t2", nil)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	m2, err := checkpoint.Load(layer, 2)
	require.NoError(t, err)
	var lost string
	for _, e := range m2.Entries {
		if e.Path == "/lost.txt" {
			lost = e.Hash
		}
	}
	require.NotEmpty(t, lost)
	require.NoError(t, os.Remove(cow.BlobPath(layer, lost)))
	named := "blob " + lost + " of /lost.txt is missing"

	c, err = cow.Open(base, layer)
	require.NoError(t, err, "the layer opens")
	defer c.Close()
	_, err = c.Read(ctx, "/lost.txt")
	require.Error(t, err)
	assert.Contains(t, err.Error(), named)
	for p, want := range map[string]string{"/a.txt": "a\n", "/keep.txt": "keep\n"} {
		got, err := c.Read(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	_, err = checkpoint.Diff(ctx, base, layer, nil, m2.Entries)
	require.Error(t, err)
	assert.Contains(t, err.Error(), named)

	require.NoError(t, c.Write(ctx, "/b.txt", []byte("b\n")))
	_, _, err = checkpoint.Take(c, sd, 3, "t3", nil)
	require.NoError(t, err, "a new checkpoint is written")
	before := c.Entries()
	err = checkpoint.Rewind(c, 2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "blob "+lost)
	assert.Equal(t, before, c.Entries(), "a refused rewind changes nothing")
	err = checkpoint.Fork(layer, 2, filepath.Join(t.TempDir(), "fork"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), named)

	require.NoError(t, checkpoint.Rewind(c, 1), "a checkpoint without the blob rewinds")
	got, err := c.Read(ctx, "/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "a\n", string(got))
	for _, turn := range []int{1, 2, 3} {
		_, err := checkpoint.Load(layer, turn)
		assert.NoError(t, err, "checkpoint %d is kept", turn)
	}
}
