package readonly_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		fsys, err := temp.New(files)
		if err != nil {
			t.Fatal(err)
		}
		return readonly.New(fsys)
	}, vfstest.Options{ReadOnly: true})
}

func TestWritesNeverReachTheTree(t *testing.T) {
	ctx := context.Background()
	base := temp.MustNew(map[string]string{"/a": "a"})
	r := readonly.New(base)
	if err := r.Write(ctx, "/x/../a", []byte("b")); !errors.Is(err, vfs.ErrReadOnly) || err.Error() != "read-only mount: /a" {
		t.Errorf("Write = %v", err)
	}
	if err := r.Delete(ctx, "a"); !errors.Is(err, vfs.ErrReadOnly) || err.Error() != "read-only mount: /a" {
		t.Errorf("Delete = %v", err)
	}
	if _, err := vfs.WriteIf(ctx, r, "/a", []byte("c"), vfs.Precondition{}); !errors.Is(err, vfs.ErrReadOnly) {
		t.Errorf("WriteIf through the fallback = %v", err)
	}
	if data, _ := base.Read(ctx, "/a"); string(data) != "a" {
		t.Errorf("tree holds %q after refused writes", data)
	}
	if _, ok := r.(vfs.ConditionalWriter); ok {
		t.Error("a read-only view offers ConditionalWriter")
	}
}

func TestCapabilities(t *testing.T) {
	ctx := context.Background()
	base := temp.MustNew(map[string]string{"/a": "0123456789"})
	r := readonly.New(base)
	buf := make([]byte, 3)
	if n, err := vfs.ReadAt(ctx, r, "/a", buf, 7); n != 3 || err != nil || string(buf) != "789" {
		t.Errorf("ReadAt = %d, %v, %q", n, err, buf)
	}
	var got []vfs.Change
	cancel, ok := vfs.Watch(r, func(c vfs.Change) { got = append(got, c) })
	if !ok {
		t.Fatal("the view of a Notifier is not one")
	}
	_ = base.Write(ctx, "/b", []byte("b"))
	cancel()
	_ = base.Write(ctx, "/c", []byte("c"))
	if len(got) != 1 || got[0] != (vfs.Change{Path: "/b", Op: vfs.ChangeWrite}) {
		t.Errorf("changes = %v", got)
	}
	if _, ok := readonly.New(temp.Empty()).(vfs.Notifier); ok {
		t.Error("the view of a tree that is no Notifier claims to be one")
	}
	if _, ok := readonly.New(temp.Empty()).(vfs.RangeReader); !ok {
		t.Error("the view is no RangeReader")
	}
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
