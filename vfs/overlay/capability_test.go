package overlay_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/overlay"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// TestNotifierWhenEveryLayerIs: an overlay of Notifiers reports every
// layer's changes at their paths until cancelled; one layer that is no
// Notifier makes the overlay none, since it could not hear that layer.
func TestNotifierWhenEveryLayerIs(t *testing.T) {
	ctx := t.Context()
	upper := temp.MustNew(map[string]string{"/a.txt": "upper"})
	lower := temp.MustNew(map[string]string{"/a.txt": "lower", "/b.txt": "b"})
	o := overlay.New(upper, lower)
	var mu sync.Mutex
	var got []vfs.Change
	cancel, ok := vfs.Watch(o, func(c vfs.Change) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	})
	require.True(t, ok, "an overlay of Notifiers is a Notifier")
	require.NoError(t, lower.Write(ctx, "/b.txt", []byte("b2")))
	require.NoError(t, upper.Delete(ctx, "/a.txt"))              // the lower /a.txt shows now
	require.NoError(t, lower.Write(ctx, "/a.txt", []byte("l2"))) // shadowed no more
	cancel()
	require.NoError(t, upper.Write(ctx, "/c.txt", []byte("c")))
	mu.Lock()
	assert.Equal(t, []vfs.Change{
		{Path: "/b.txt", Op: vfs.ChangeWrite},
		{Path: "/a.txt", Op: vfs.ChangeDelete},
		{Path: "/a.txt", Op: vfs.ChangeWrite},
	}, got)
	mu.Unlock()

	deaf := overlay.New(upper, vfstest.NewReference(nil))
	_, ok = deaf.(vfs.Notifier)
	assert.False(t, ok, "an overlay with a layer that is no Notifier claims to be one")
	_, ok = deaf.(vfs.RangeReader)
	assert.True(t, ok, "the method set of the other capabilities depends on no layer")
}

// TestWriteCapabilitiesRefused: every write capability an overlay offers
// fails with "read-only mount" at once, for every path, and changes
// nothing.
func TestWriteCapabilitiesRefused(t *testing.T) {
	ctx := t.Context()
	upper := temp.MustNew(map[string]string{"/a.txt": "a"})
	o := overlay.New(upper)
	for name, err := range map[string]error{
		"Stage": func() error { _, err := vfs.Stage(ctx, o, "/a.txt", true); return err }(),
		"Stage new": func() error {
			_, err := vfs.Stage(ctx, o, "/new.txt", false)
			return err
		}(),
		"WriteIf":        func() error { _, err := vfs.WriteIf(ctx, o, "/a.txt", nil, vfs.Precondition{}); return err }(),
		"Rename":         vfs.Rename(ctx, o, "/a.txt", "/b.txt"),
		"MakeDir":        vfs.MakeDir(ctx, o, "/d"),
		"Symlink":        vfs.Symlink(ctx, o, "a.txt", "/l"),
		"SetMode":        vfs.SetMode(ctx, o, "/a.txt", 0o600),
		"SetModTime":     vfs.SetModTime(ctx, o, "/a.txt", time.Unix(1, 0)),
		"SetLinkModTime": vfs.SetLinkModTime(ctx, o, "/a.txt", time.Unix(1, 0)),
	} {
		assert.ErrorIs(t, err, vfs.ErrReadOnly, name)
	}
	data, err := upper.Read(ctx, "/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "a", string(data))
}
