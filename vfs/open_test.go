package vfs_test

import (
	"context"
	"io"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.NoError(t, err, "%s: OpenFile(/d/f)", c.name)
		assert.Equal(t, int64(10), f.Size(), "%s: Size()", c.name)
		for _, r := range []struct {
			off, size int
			want      string
			err       error
		}{{0, 4, "0123", nil}, {6, 4, "6789", nil}, {8, 4, "89", io.EOF}, {10, 1, "", io.EOF}, {30, 2, "", io.EOF}} {
			buf := make([]byte, r.size)
			n, err := f.ReadAt(buf, int64(r.off))
			assert.Equal(t, r.want, string(buf[:n]), "%s: ReadAt(%d bytes, %d)", c.name, r.size, r.off)
			if r.err == nil {
				assert.NoError(t, err, "%s: ReadAt(%d bytes, %d)", c.name, r.size, r.off)
			} else {
				assert.Same(t, r.err, err, "%s: ReadAt(%d bytes, %d), want %v", c.name, r.size, r.off, r.err)
			}
		}
		assert.NoError(t, f.Close(), "%s: Close", c.name)
		_, err = f.ReadAt(make([]byte, 1), 0)
		assert.ErrorIs(t, err, fs.ErrClosed, "%s: ReadAt after Close", c.name)
		for p, want := range map[string]string{"/nope/../missing": "not found: /missing", "/d": "is a directory: /d", "/": "is a directory: /"} {
			_, err := vfs.OpenFile(t.Context(), c.fsys, p)
			assert.EqualError(t, err, want, "%s: OpenFile(%q)", c.name, p)
		}
	}
	assert.True(t, called, "OpenFile did not call the tree's FileOpener")

}
