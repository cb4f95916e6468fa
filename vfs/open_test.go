package vfs_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// opener is a tree whose FileOpener records that it was called.
type opener struct {
	vfs.FileSystem
	called *bool
}

func (o opener) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	*o.called = true
	return vfs.OpenFile(ctx, plain{o.FileSystem}, path)
}

func TestOpenFile(t *testing.T) {
	called := false
	for _, c := range []struct {
		name string
		fsys vfs.FileSystem
	}{
		{"rangeReader", temp.MustNew(map[string]string{"/d/f": "0123456789"})},
		{"wholeRead", plain{temp.MustNew(map[string]string{"/d/f": "0123456789"})}},
		{"method", opener{temp.MustNew(map[string]string{"/d/f": "0123456789"}), &called}},
	} {
		f, err := vfs.OpenFile(t.Context(), c.fsys, "d/../d//f")
		if err != nil {
			t.Fatalf("%s: OpenFile(/d/f): %v", c.name, err)
		}
		if f.Size() != 10 {
			t.Errorf("%s: Size() = %d, want 10", c.name, f.Size())
		}
		for _, r := range []struct {
			off, size int
			want      string
			err       error
		}{{0, 4, "0123", nil}, {6, 4, "6789", nil}, {8, 4, "89", io.EOF}, {10, 1, "", io.EOF}, {30, 2, "", io.EOF}} {
			buf := make([]byte, r.size)
			n, err := f.ReadAt(buf, int64(r.off))
			if string(buf[:n]) != r.want || err != r.err {
				t.Errorf("%s: ReadAt(%d bytes, %d) = %q, %v; want %q, %v", c.name, r.size, r.off, buf[:n], err, r.want, r.err)
			}
		}
		if err := f.Close(); err != nil {
			t.Errorf("%s: Close: %v", c.name, err)
		}
		if _, err := f.ReadAt(make([]byte, 1), 0); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("%s: ReadAt after Close = %v, want fs.ErrClosed", c.name, err)
		}
		for p, want := range map[string]string{"/nope/../missing": "not found: /missing", "/d": "is a directory: /d", "/": "is a directory: /"} {
			if _, err := vfs.OpenFile(t.Context(), c.fsys, p); err == nil || err.Error() != want {
				t.Errorf("%s: OpenFile(%q) = %v, want %s", c.name, p, err, want)
			}
		}
	}
	if !called {
		t.Error("OpenFile did not call the tree's FileOpener")
	}
}
