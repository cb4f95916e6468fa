package vfs_test

import (
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// plain hides every optional capability of the tree it wraps, so the
// helpers take their fallbacks.
type plain struct{ vfs.FileSystem }

func TestPlainHidesCapabilities(t *testing.T) {
	var fsys vfs.FileSystem = plain{temp.MustNew(nil)}
	_, ok := fsys.(vfs.RangeReader)
	assert.False(t, ok, "plain is a RangeReader")
	_, ok = fsys.(vfs.ConditionalWriter)
	assert.False(t, ok, "plain is a ConditionalWriter")
	_, ok = fsys.(vfs.Notifier)
	assert.False(t, ok, "plain is a Notifier")
	_, ok = fsys.(vfs.FileOpener)
	assert.False(t, ok, "plain is a FileOpener")
	_, ok = fsys.(vfs.Stager)
	assert.False(t, ok, "plain is a Stager")
}

func TestReadAt(t *testing.T) {
	for _, c := range []struct {
		name string
		fsys vfs.FileSystem
	}{{"method", temp.MustNew(map[string]string{"/f": "0123456789"})}, {"fallback", plain{temp.MustNew(map[string]string{"/f": "0123456789"})}}} {
		for _, r := range []struct {
			off, size int
			want      string
			err       error
		}{
			{0, 4, "0123", nil}, {6, 4, "6789", nil}, {8, 4, "89", io.EOF}, {10, 1, "", io.EOF}, {20, 1, "", io.EOF}, {0, 10, "0123456789", nil},
		} {
			buf := make([]byte, r.size)
			n, err := vfs.ReadAt(t.Context(), c.fsys, "/f", buf, int64(r.off))
			assert.Equal(t, r.want, string(buf[:n]), "%s: ReadAt(/f, %d bytes, %d)", c.name, r.size, r.off)
			if r.err == nil {
				assert.NoError(t, err, "%s: ReadAt(/f, %d bytes, %d)", c.name, r.size, r.off)
			} else {
				assert.Same(t, r.err, err, "%s: ReadAt(/f, %d bytes, %d)", c.name, r.size, r.off)
			}
		}
		_, err := vfs.ReadAt(t.Context(), c.fsys, "nope/../missing", make([]byte, 1), 0)
		assert.EqualError(t, err, "not found: /missing", "%s: ReadAt(missing)", c.name)
	}
}

func TestWriteIf(t *testing.T) {
	for _, c := range []struct {
		name string
		fsys func() vfs.FileSystem
	}{
		{"method", func() vfs.FileSystem { return temp.MustNew(map[string]string{"/f": "v1"}) }},
		{"fallback", func() vfs.FileSystem { return plain{temp.MustNew(map[string]string{"/f": "v1"})} }},
	} {
		ctx := t.Context()
		fsys := c.fsys()
		info, _ := fsys.Stat(ctx, "/f")
		etag1 := info.ETag
		steps := []struct {
			path string
			data string
			cond vfs.Precondition
			ok   bool
		}{
			{"/f", "x", vfs.Precondition{IfNoneMatch: true}, false},
			{"/f", "x", vfs.Precondition{IfMatch: "wrong"}, false},
			{"/g", "x", vfs.Precondition{IfMatch: etag1}, false},
			{"/f", "v2", vfs.Precondition{IfMatch: etag1}, true},
			{"/f", "v3", vfs.Precondition{IfMatch: etag1}, false}, // etag1 is stale now
			{"/g", "g1", vfs.Precondition{IfNoneMatch: true}, true},
			{"/g", "g2", vfs.Precondition{}, true},
		}
		for _, s := range steps {
			before, _ := fsys.Read(ctx, s.path)
			etag, err := vfs.WriteIf(ctx, fsys, s.path, []byte(s.data), s.cond)
			after, _ := fsys.Read(ctx, s.path)
			if !s.ok {
				assert.ErrorIs(t, err, vfs.ErrConflict, "%s: WriteIf(%s, %+v)", c.name, s.path, s.cond)
				assert.EqualError(t, err, "conflict: "+s.path, "%s: WriteIf(%s, %+v)", c.name, s.path, s.cond)
				assert.Equal(t, string(before), string(after), "%s: a refused WriteIf(%s) changed the file", c.name, s.path)
				continue
			}
			info, _ := fsys.Stat(ctx, s.path)
			assert.NoError(t, err, "%s: WriteIf(%s, %q, %+v)", c.name, s.path, s.data, s.cond)
			assert.Equal(t, s.data, string(after), "%s: WriteIf(%s, %q, %+v) then read", c.name, s.path, s.data, s.cond)
			assert.NotEmpty(t, etag, "%s: WriteIf(%s, %q, %+v) etag", c.name, s.path, s.data, s.cond)
			assert.Equal(t, info.ETag, etag, "%s: WriteIf(%s, %q, %+v) etag vs Stat", c.name, s.path, s.data, s.cond)
		}
	}
}

func TestWatch(t *testing.T) {
	ctx := t.Context()
	if cancel, ok := vfs.Watch(plain{temp.MustNew(nil)}, func(vfs.Change) { assert.Fail(t, "plain tree notified") }); ok {
		assert.Fail(t, "Watch(plain) ok = true")
	} else {
		cancel() // a no-op, but callable
	}
	fsys := temp.MustNew(nil)
	var mu sync.Mutex
	var got []vfs.Change
	cancel, ok := vfs.Watch(fsys, func(c vfs.Change) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	})
	require.True(t, ok, "Watch(temp) ok")
	fsys.Write(ctx, "a/../f", []byte("x"))
	fsys.Delete(ctx, "/f")
	fsys.Delete(ctx, "/f") // fails: no change
	cancel()
	fsys.Write(ctx, "/g", []byte("y"))
	want := []vfs.Change{{Path: "/f", Op: vfs.ChangeWrite}, {Path: "/f", Op: vfs.ChangeDelete}}
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, want, got, "changes")
}

func TestWatchers(t *testing.T) {
	var w vfs.Watchers // the zero value is ready
	var a, b []string
	ca := w.Watch(func(c vfs.Change) { a = append(a, c.Path) })
	w.Watch(func(c vfs.Change) { b = append(b, c.Path) })
	w.Notify(vfs.Change{Path: "/1", Op: vfs.ChangeWrite})
	ca()
	ca() // twice is harmless
	w.Notify(vfs.Change{Path: "/2", Op: vfs.ChangeWrite})
	assert.Equal(t, []string{"/1"}, a, "first subscriber (cancelled) saw")
	assert.Equal(t, []string{"/1", "/2"}, b, "second subscriber saw")
}

func TestContentETag(t *testing.T) {
	e1, e2 := vfs.ContentETag([]byte("a")), vfs.ContentETag([]byte("b"))
	assert.NotEqual(t, e1, e2, "ContentETag of different content")
	assert.Equal(t, e1, vfs.ContentETag([]byte("a")), "ContentETag is deterministic")
	assert.Len(t, e1, 32, "ContentETag length")
}

// TestWatchersCancelFromCallback: a subscriber that cancels itself from
// inside its callback does not deadlock, and gets no later change.
func TestWatchersCancelFromCallback(t *testing.T) {
	var w vfs.Watchers
	var calls atomic.Int32
	var cancel func()
	cancel = w.Watch(func(vfs.Change) {
		calls.Add(1)
		cancel()
	})
	var order []int
	w.Watch(func(vfs.Change) { order = append(order, 2) })
	done := make(chan struct{})
	go func() {
		w.Notify(vfs.Change{Path: "/a"})
		w.Notify(vfs.Change{Path: "/b"})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "Notify deadlocked on a subscriber that cancelled itself")
	}
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, []int{2, 2}, order)
}

// Notify allocates nothing: every write through a tree calls it.
func TestWatchersNotifyAllocates(t *testing.T) {
	var w vfs.Watchers
	n := 0
	for range 3 {
		w.Watch(func(vfs.Change) { n++ })
	}
	c := vfs.Change{Path: "/a", Op: vfs.ChangeWrite}
	assert.Zero(t, testing.AllocsPerRun(100, func() { w.Notify(c) }), "allocations per Notify")
	assert.Equal(t, 3*101, n, "calls") // AllocsPerRun runs once more to warm up
}

// TestWatchersCancelMiddle: cancelling one subscriber keeps the others
// in the order they subscribed, and a Notify under way keeps the set it
// started with.
func TestWatchersCancelMiddle(t *testing.T) {
	var w vfs.Watchers
	var got []int
	var cancels []func()
	for i := range 4 {
		cancels = append(cancels, w.Watch(func(vfs.Change) {
			got = append(got, i)
			if i == 0 {
				cancels[2]() // during this Notify: 2 still gets it
			}
		}))
	}
	w.Notify(vfs.Change{Path: "/1"})
	w.Notify(vfs.Change{Path: "/2"})
	cancels[0]()
	w.Notify(vfs.Change{Path: "/3"})
	assert.Equal(t, []int{0, 1, 2, 3, 0, 1, 3, 1, 3}, got)
}
