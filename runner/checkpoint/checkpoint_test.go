package checkpoint_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

func read(t *testing.T, fsys vfs.FileSystem, p string) string {
	t.Helper()
	data, err := fsys.Read(context.Background(), p)
	if vfs.KindOf(err) == vfs.KindNotFound {
		return "<missing>"
	}
	require.NoError(t, err)
	return string(data)
}

func TestTakeRewindForkDiffApply(t *testing.T) {
	ctx := t.Context()
	baseDir := t.TempDir()
	for p, s := range map[string]string{"a.txt": "a1\n", "b.txt": "b1\n", "d/x.txt": "x\n"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(baseDir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(baseDir, p), []byte(s), 0o644))
	}
	base, err := local.New(baseDir)
	require.NoError(t, err)
	defer base.Close()
	ses := t.TempDir()
	layer := filepath.Join(ses, checkpoint.LayerDir)
	c, err := cow.Open(base, layer)
	require.NoError(t, err)
	defer c.Close()

	// Turn 1: edit a; turn 2: delete b, add c; turn 3: remove d.
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("a2\n")))
	ref1, prev, err := checkpoint.Take(c, ses, 1, "turn_1", nil)
	require.NoError(t, err)
	assert.Equal(t, 1, ref1.Changed)
	assert.Equal(t, "layer/checkpoints/000001.json", ref1.Manifest)
	require.NoError(t, c.Delete(ctx, "/b.txt"))
	require.NoError(t, c.Write(ctx, "/c.txt", []byte("c\n")))
	ref2, prev, err := checkpoint.Take(c, ses, 2, "turn_2", prev)
	require.NoError(t, err)
	assert.Equal(t, 2, ref2.Changed)
	assert.Equal(t, 3, ref2.Entries)
	require.NoError(t, c.Delete(ctx, "/d/x.txt"))
	require.NoError(t, c.RemoveDir(ctx, "/d"))
	_, _, err = checkpoint.Take(c, ses, 3, "turn_3", prev)
	require.NoError(t, err)
	turns, err := checkpoint.Turns(layer)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2, 3}, turns)

	// Diff of turn 3 and of the whole session.
	m2, err := checkpoint.Load(layer, 2)
	require.NoError(t, err)
	m3, err := checkpoint.Load(layer, 3)
	require.NoError(t, err)
	d, err := checkpoint.Diff(ctx, base, layer, m2.Entries, m3.Entries)
	require.NoError(t, err)
	require.Len(t, d, 1)
	assert.Equal(t, "/d/x.txt", d[0].Path)
	assert.Equal(t, "deleted", d[0].Status)
	d, err = checkpoint.Diff(ctx, base, layer, nil, m3.Entries)
	require.NoError(t, err)
	var names []string
	for _, f := range d {
		names = append(names, f.Status+" "+f.Path)
	}
	assert.Equal(t, []string{"modified /a.txt", "deleted /b.txt", "added /c.txt", "deleted /d/x.txt"}, names)
	assert.Equal(t, "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a1\n+a2\n", d[0].Unified)

	// Fork at turn 1: its own layer, blobs linked.
	forkLayer := filepath.Join(t.TempDir(), checkpoint.LayerDir)
	require.NoError(t, checkpoint.Fork(layer, 1, forkLayer))
	f, err := cow.Open(base, forkLayer)
	require.NoError(t, err)
	defer f.Close()
	assert.Equal(t, "a2\n", read(t, f, "/a.txt"))
	assert.Equal(t, "b1\n", read(t, f, "/b.txt"))
	e := m2.Entries[0]
	fi1, err := os.Stat(cow.BlobPath(layer, e.Hash))
	require.NoError(t, err)
	fi2, err := os.Stat(cow.BlobPath(forkLayer, e.Hash))
	require.NoError(t, err)
	assert.True(t, os.SameFile(fi1, fi2), "the fork shares the blob")

	// Rewind to 1 and to the base; a turn without a checkpoint is refused.
	require.NoError(t, checkpoint.Rewind(c, 1))
	assert.Equal(t, "b1\n", read(t, c, "/b.txt"))
	assert.Equal(t, "<missing>", read(t, c, "/c.txt"))
	assert.Equal(t, "x\n", read(t, c, "/d/x.txt"))
	require.ErrorIs(t, checkpoint.Rewind(c, 9), checkpoint.ErrNoCheckpoint)
	require.NoError(t, checkpoint.Rewind(c, 3))

	// Apply with the base's b.txt changed behind the session's back.
	require.NoError(t, os.WriteFile(filepath.Join(baseDir, "b.txt"), []byte("b edited\n"), 0o644))
	acts, err := checkpoint.Apply(ctx, c, true)
	require.NoError(t, err)
	assert.Equal(t, "a1\n", read(t, base, "/a.txt"), "a dry run writes nothing")
	acts, err = checkpoint.Apply(ctx, c, false)
	require.NoError(t, err)
	var conflicts []string
	for _, a := range acts {
		if a.Conflict != "" {
			conflicts = append(conflicts, a.Path)
		}
	}
	assert.Equal(t, []string{"/b.txt"}, conflicts)
	assert.Equal(t, "a2\n", read(t, base, "/a.txt"))
	assert.Equal(t, "b edited\n", read(t, base, "/b.txt"))
	assert.Equal(t, "c\n", read(t, base, "/c.txt"))
	assert.Equal(t, "<missing>", read(t, base, "/d/x.txt"))
	_, err = os.Stat(filepath.Join(baseDir, "d"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	// The layer keeps only the conflict, and a rerun finds nothing to do.
	es := c.Entries()
	require.Len(t, es, 1)
	assert.Equal(t, "/b.txt", es[0].Path)
}

// TestDiskUseShared: 100 turns each changing one 1 KiB file of a 1 MiB
// file set store about 100 KiB of blobs, not 100 MiB: the files a turn
// leaves alone are not stored again.
func TestDiskUseShared(t *testing.T) {
	ctx := t.Context()
	files := map[string][]byte{}
	for i := range 1024 {
		files[fmt.Sprintf("/f/%04d.txt", i)] = bytes.Repeat([]byte{byte('a' + i%26)}, 1024)
	}
	base, err := temp.New(files)
	require.NoError(t, err)
	ses := t.TempDir()
	c, err := cow.Open(base, filepath.Join(ses, checkpoint.LayerDir))
	require.NoError(t, err)
	defer c.Close()
	var prev []cow.Entry
	for turn := 1; turn <= 100; turn++ {
		p := fmt.Sprintf("/f/%04d.txt", turn%10)
		require.NoError(t, c.Write(ctx, p, fmt.Appendf(bytes.Repeat([]byte{'z'}, 1000), "turn %03d\n", turn)))
		_, prev, err = checkpoint.Take(c, ses, turn, "t", prev)
		require.NoError(t, err)
	}
	var blobs int64
	require.NoError(t, filepath.Walk(filepath.Join(ses, checkpoint.LayerDir, "blobs"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			blobs += fi.Size()
		}
		return err
	}))
	assert.Equal(t, int64(100*1009+10*1024), blobs, "one blob per turn's change, and the base's version of each of the 10 files changed (kept for a three-way diff)")
	var manifests int64
	require.NoError(t, filepath.Walk(filepath.Join(ses, checkpoint.LayerDir, "checkpoints"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			manifests += fi.Size()
		}
		return err
	}))
	t.Logf("blobs %d bytes, manifests %d bytes", blobs, manifests)
	assert.Len(t, prev, 10)
}
