package vfs_test

import (
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// plain hides every optional capability of the tree it wraps, so the
// helpers take their fallbacks.
type plain struct{ vfs.FileSystem }

func TestPlainHidesCapabilities(t *testing.T) {
	var fsys vfs.FileSystem = plain{temp.MustNew(nil)}
	if _, ok := fsys.(vfs.RangeReader); ok {
		t.Error("plain is a RangeReader")
	}
	if _, ok := fsys.(vfs.ConditionalWriter); ok {
		t.Error("plain is a ConditionalWriter")
	}
	if _, ok := fsys.(vfs.Notifier); ok {
		t.Error("plain is a Notifier")
	}
	if _, ok := fsys.(vfs.FileOpener); ok {
		t.Error("plain is a FileOpener")
	}
	if _, ok := fsys.(vfs.Stager); ok {
		t.Error("plain is a Stager")
	}
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
			if string(buf[:n]) != r.want || err != r.err {
				t.Errorf("%s: ReadAt(/f, %d bytes, %d) = %q, %v; want %q, %v", c.name, r.size, r.off, buf[:n], err, r.want, r.err)
			}
		}
		if _, err := vfs.ReadAt(t.Context(), c.fsys, "nope/../missing", make([]byte, 1), 0); err == nil || err.Error() != "not found: /missing" {
			t.Errorf("%s: ReadAt(missing) = %v, want not found: /missing", c.name, err)
		}
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
				if !errors.Is(err, vfs.ErrConflict) || err.Error() != "conflict: "+s.path {
					t.Errorf("%s: WriteIf(%s, %+v) = %v, want conflict: %s", c.name, s.path, s.cond, err, s.path)
				}
				if string(after) != string(before) {
					t.Errorf("%s: a refused WriteIf(%s) changed %q to %q", c.name, s.path, before, after)
				}
				continue
			}
			info, _ := fsys.Stat(ctx, s.path)
			if err != nil || string(after) != s.data || etag == "" || etag != info.ETag {
				t.Errorf("%s: WriteIf(%s, %q, %+v) = %q, %v; read %q, Stat etag %q", c.name, s.path, s.data, s.cond, etag, err, after, info.ETag)
			}
		}
	}
}

func TestWatch(t *testing.T) {
	ctx := t.Context()
	if cancel, ok := vfs.Watch(plain{temp.MustNew(nil)}, func(vfs.Change) { t.Error("plain tree notified") }); ok {
		t.Error("Watch(plain) ok = true")
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
	if !ok {
		t.Fatal("Watch(temp) ok = false")
	}
	fsys.Write(ctx, "a/../f", []byte("x"))
	fsys.Delete(ctx, "/f")
	fsys.Delete(ctx, "/f") // fails: no change
	cancel()
	fsys.Write(ctx, "/g", []byte("y"))
	want := []vfs.Change{{Path: "/f", Op: vfs.ChangeWrite}, {Path: "/f", Op: vfs.ChangeDelete}}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("changes = %+v, want %+v", got, want)
	}
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
	if !slices.Equal(a, []string{"/1"}) || !slices.Equal(b, []string{"/1", "/2"}) {
		t.Errorf("subscribers saw %q and %q, want [/1] and [/1 /2]", a, b)
	}
}

func TestContentETag(t *testing.T) {
	e1, e2 := vfs.ContentETag([]byte("a")), vfs.ContentETag([]byte("b"))
	if e1 == e2 || e1 != vfs.ContentETag([]byte("a")) || len(e1) != 32 {
		t.Errorf("ContentETag: %q, %q", e1, e2)
	}
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
		t.Fatal("Notify deadlocked on a subscriber that cancelled itself")
	}
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, []int{2, 2}, order)
}
