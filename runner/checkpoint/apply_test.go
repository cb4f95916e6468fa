package checkpoint_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
)

// dying is a base whose writes fail after the first n: a process killed
// in the middle of an apply.
type dying struct {
	vfs.FileSystem
	left atomic.Int32
}

var errKilled = errors.New("killed")

func (d *dying) Write(ctx context.Context, p string, data []byte) error {
	if d.left.Add(-1) < 0 {
		return errKilled
	}
	return d.FileSystem.Write(ctx, p, data)
}

// TestApplyRerunCompletes: an apply cut short leaves every file old or
// new and the layer whole; a rerun finishes it, counting what was
// written as done.
func TestApplyRerunCompletes(t *testing.T) {
	ctx := t.Context()
	inner, err := temp.New(map[string][]byte{"/a.txt": []byte("a1"), "/b.txt": []byte("b1")})
	require.NoError(t, err)
	base := &dying{FileSystem: inner}
	base.left.Store(1)
	dir := t.TempDir()
	c, err := cow.Open(base, dir)
	require.NoError(t, err)
	for p, s := range map[string]string{"/a.txt": "a2", "/b.txt": "b2", "/c.txt": "c2"} {
		require.NoError(t, c.Write(ctx, p, []byte(s)))
	}
	_, err = checkpoint.Apply(ctx, c, false)
	require.ErrorIs(t, err, errKilled)
	assert.Equal(t, "a2", read(t, inner, "/a.txt"))
	assert.Equal(t, "b1", read(t, inner, "/b.txt"))
	assert.Len(t, c.Entries(), 3, "the layer is untouched until the apply ends")
	require.NoError(t, c.Close())

	base.left.Store(100)
	c, err = cow.Open(base, dir)
	require.NoError(t, err)
	defer c.Close()
	acts, err := checkpoint.Apply(ctx, c, false)
	require.NoError(t, err)
	require.Len(t, acts, 3)
	assert.Equal(t, checkpoint.Action{Path: "/a.txt", Op: "write", Done: true}, acts[0])
	assert.Equal(t, checkpoint.Action{Path: "/b.txt", Op: "write"}, acts[1])
	for p, s := range map[string]string{"/a.txt": "a2", "/b.txt": "b2", "/c.txt": "c2"} {
		assert.Equal(t, s, read(t, inner, p))
	}
	assert.Empty(t, c.Entries())
}

// TestApplyReadOnlyBase fails with read-only mount and keeps the layer.
func TestApplyReadOnlyBase(t *testing.T) {
	ctx := t.Context()
	inner, err := temp.New(map[string][]byte{"/a.txt": []byte("a1")})
	require.NoError(t, err)
	c, err := cow.Open(readonly.New(inner), t.TempDir())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("a2")))
	_, err = checkpoint.Apply(ctx, c, false)
	require.ErrorIs(t, err, vfs.ErrReadOnly)
	assert.Equal(t, "a1", read(t, inner, "/a.txt"))
	assert.Len(t, c.Entries(), 1)
}

// TestApplyConflictThreeWay: a file the base changed behind the layer's
// back is a conflict with its three versions: the base's when the layer
// first shadowed it, the base's now, the layer's; a base too large to
// keep, a deleted file and a lost base blob say what is missing.
func TestApplyConflictThreeWay(t *testing.T) {
	ctx := t.Context()
	big := make([]byte, cow.MaxBaseCopy+1)
	for i := range big {
		big[i] = 'x'
	}
	inner, err := temp.New(map[string][]byte{"/a.txt": []byte("one\ntwo\nthree\n"), "/big.txt": big, "/gone.txt": []byte("g\n"), "/lost.txt": []byte("l\n")})
	require.NoError(t, err)
	dir := t.TempDir()
	c, err := cow.Open(inner, dir)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("one\ntwo (session)\nthree\n")))
	require.NoError(t, c.Write(ctx, "/big.txt", []byte("small now\n")))
	require.NoError(t, c.Delete(ctx, "/gone.txt"))
	require.NoError(t, c.Write(ctx, "/lost.txt", []byte("l2\n")))
	for p, s := range map[string]string{"/a.txt": "one\ntwo\nthree (tree)\n", "/big.txt": "y\n", "/gone.txt": "g2\n", "/lost.txt": "l3\n"} {
		require.NoError(t, inner.Write(ctx, p, []byte(s)))
	}
	var lost cow.Entry
	for _, e := range c.Entries() {
		if e.Path == "/lost.txt" {
			lost = e
		}
	}
	require.NotEmpty(t, lost.BaseHash)
	require.NoError(t, os.Remove(cow.BlobPath(dir, lost.BaseHash)))

	acts, err := checkpoint.Apply(ctx, c, true)
	require.NoError(t, err)
	require.Len(t, acts, 4)
	got := map[string]*checkpoint.ThreeWay{}
	for _, a := range acts {
		require.NotEmpty(t, a.Conflict, "%s", a.Path)
		got[a.Path] = a.ThreeWay
	}
	assert.Equal(t, &checkpoint.ThreeWay{BaseKept: true,
		Tree:    "--- base\n+++ tree\n@@ -1,3 +1,3 @@\n one\n two\n-three\n+three (tree)\n",
		Session: "--- base\n+++ session\n@@ -1,3 +1,3 @@\n one\n-two\n+two (session)\n three\n"}, got["/a.txt"])
	assert.Equal(t, &checkpoint.ThreeWay{BaseKept: true,
		Tree:    "--- base\n+++ tree\n@@ -1 +1 @@\n-g\n+g2\n",
		Session: "--- base\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n"}, got["/gone.txt"])
	assert.Contains(t, got["/big.txt"].Note, "not kept")
	assert.Equal(t, "--- tree\n+++ session\n@@ -1 +1 @@\n-y\n+small now\n", got["/big.txt"].Session)
	assert.Contains(t, got["/lost.txt"].Note, "is missing from the layer")
	assert.False(t, got["/lost.txt"].BaseKept)
}
