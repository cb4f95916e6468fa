package readonly_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		fsys, err := temp.New(files)
		require.NoError(t, err)
		return readonly.New(fsys)
	}, vfstest.Options{ReadOnly: true})
}

func TestWritesNeverReachTheTree(t *testing.T) {
	ctx := context.Background()
	base := temp.MustNew(map[string]string{"/a": "a"})
	r := readonly.New(base)
	err := r.Write(ctx, "/x/../a", []byte("b"))
	assert.ErrorIs(t, err, vfs.ErrReadOnly, "Write")
	assert.EqualError(t, err, "read-only mount: /a", "Write")
	err = r.Delete(ctx, "a")
	assert.ErrorIs(t, err, vfs.ErrReadOnly, "Delete")
	assert.EqualError(t, err, "read-only mount: /a", "Delete")
	_, err = vfs.WriteIf(ctx, r, "/a", []byte("c"), vfs.Precondition{})
	assert.ErrorIs(t, err, vfs.ErrReadOnly, "WriteIf through the fallback")
	data, _ := base.Read(ctx, "/a")
	assert.Equal(t, "a", string(data), "tree after refused writes")
	_, ok := r.(vfs.ConditionalWriter)
	assert.False(t, ok, "a read-only view offers ConditionalWriter")
}

func TestCapabilities(t *testing.T) {
	ctx := context.Background()
	base := temp.MustNew(map[string]string{"/a": "0123456789"})
	r := readonly.New(base)
	buf := make([]byte, 3)
	n, err := vfs.ReadAt(ctx, r, "/a", buf, 7)
	assert.NoError(t, err, "ReadAt")
	assert.Equal(t, 3, n, "ReadAt count")
	assert.Equal(t, "789", string(buf), "ReadAt data")
	var got []vfs.Change
	cancel, ok := vfs.Watch(r, func(c vfs.Change) { got = append(got, c) })
	require.True(t, ok, "the view of a Notifier is not one")
	_ = base.Write(ctx, "/b", []byte("b"))
	cancel()
	_ = base.Write(ctx, "/c", []byte("c"))
	assert.Equal(t, []vfs.Change{{Path: "/b", Op: vfs.ChangeWrite}}, got, "changes")
	_, ok = readonly.New(temp.Empty()).(vfs.Notifier)
	assert.False(t, ok, "the view of a tree that is no Notifier claims to be one")
	_, ok = readonly.New(temp.Empty()).(vfs.RangeReader)
	assert.True(t, ok, "the view is no RangeReader")
}

// TestMetaRefused: the view refuses every link, mode and time change with
// "read-only mount", not errors.ErrUnsupported, whether or not the tree
// could make it.
func TestMetaRefused(t *testing.T) {
	ctx := t.Context()
	r := readonly.New(temp.MustNew(map[string]string{"/a": "a"}))
	for _, c := range []struct {
		name string
		err  error
		msg  string
	}{
		{"Symlink", vfs.Symlink(ctx, r, "a", "/l"), "read-only mount: /l"},
		{"SetMode", vfs.SetMode(ctx, r, "/a", 0o600), "read-only mount: /a"},
		{"SetModTime", vfs.SetModTime(ctx, r, "/a", time.Unix(1, 0)), "read-only mount: /a"},
		{"SetLinkModTime", vfs.SetLinkModTime(ctx, r, "/a", time.Unix(1, 0)), "read-only mount: /a"},
	} {
		assert.ErrorIs(t, c.err, vfs.ErrReadOnly, c.name)
		assert.EqualError(t, c.err, c.msg, c.name)
	}
}
