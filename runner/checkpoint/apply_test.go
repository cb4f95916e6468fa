package checkpoint_test

import (
	"context"
	"errors"
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
