package vfs_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// stager is a tree whose Stager records that it was called.
type stager struct {
	vfs.FileSystem
	called *bool
}

func (s stager) Stage(ctx context.Context, path string, keep bool) (vfs.StagedFile, error) {
	*s.called = true
	return vfs.Stage(ctx, plain{s.FileSystem}, path, keep)
}

func readAll(t *testing.T, f vfs.StagedFile) string {
	t.Helper()
	buf := make([]byte, f.Size()+3)
	n, err := f.ReadAt(buf, 0)
	assert.Same(t, io.EOF, err, "ReadAt(all + 3) error = %v, want io.EOF", err)
	return string(buf[:n])
}

func TestStage(t *testing.T) {
	called := false
	for _, c := range []struct {
		name string
		fsys func() vfs.FileSystem
	}{
		{"fallback", func() vfs.FileSystem { return temp.MustNew(map[string]string{"/d/f": "old"}) }},
		{"method", func() vfs.FileSystem { return stager{temp.MustNew(map[string]string{"/d/f": "old"}), &called} }},
	} {
		ctx := t.Context()
		fsys := c.fsys()
		s, err := vfs.Stage(ctx, fsys, "/d/./f", true)
		require.NoError(t, err, "%s: Stage(keep)", c.name)
		assert.Equal(t, "old", readAll(t, s), "%s: kept staging", c.name)
		s.WriteAt([]byte("NEW"), 0)
		s.WriteAt([]byte("x"), 6) // gap of zeros
		assert.Equal(t, "NEW\x00\x00\x00x", readAll(t, s), "%s: staged", c.name)
		data, _ := fsys.Read(ctx, "/d/f")
		assert.Equal(t, "old", string(data), "%s: Read before Commit", c.name)
		s.Truncate(2)
		s.Truncate(4) // regrowth is zeros, not the cut bytes
		assert.Equal(t, "NE\x00\x00", readAll(t, s), "%s: after truncates", c.name)
		require.NoError(t, s.Commit(ctx), "%s: Commit", c.name)
		data, _ = fsys.Read(ctx, "/d/f")
		assert.Equal(t, "NE\x00\x00", string(data), "%s: Read after Commit", c.name)
		_, err = s.WriteAt([]byte("y"), 0)
		assert.ErrorIs(t, err, fs.ErrClosed, "%s: WriteAt after Commit", c.name)
		assert.NoError(t, s.Abort(), "%s: Abort after Commit", c.name)

		// Empty start, abort, errors.
		s, err = vfs.Stage(ctx, fsys, "/d/f", false)
		require.NoError(t, err, "%s: Stage", c.name)
		assert.Zero(t, s.Size(), "%s: Stage without keep: Size", c.name)
		s.WriteAt([]byte("dropped"), 0)
		s.Abort()
		data, _ = fsys.Read(ctx, "/d/f")
		assert.Equal(t, "NE\x00\x00", string(data), "%s: Read after Abort", c.name)
		if s, err := vfs.Stage(ctx, fsys, "/new/g", true); assert.NoError(t, err, "%s: Stage(missing, keep)", c.name) {
			assert.Zero(t, s.Size(), "%s: Stage(missing, keep), want an empty staging", c.name)
		}
		for _, keep := range []bool{false, true} {
			for p, want := range map[string]string{"/d": "is a directory: /d", "/": "is a directory: /"} {
				_, err := vfs.Stage(ctx, fsys, p, keep)
				assert.EqualError(t, err, want, "%s: Stage(%q, %v)", c.name, p, keep)
			}
		}
		// A commit the tree refuses keeps the data for a retry.
		s, _ = vfs.Stage(ctx, fsys, "/x/y", false)
		s.WriteAt([]byte("z"), 0)
		fsys.Write(ctx, "/x/y/z", []byte("now a dir"))
		assert.Error(t, s.Commit(ctx), "%s: Commit over a directory succeeded", c.name)
		assert.Equal(t, "z", readAll(t, s), "%s: after a failed Commit", c.name)
	}
	assert.True(t, called, "Stage did not call the tree's Stager")
}

// TestStageGrowth writes a file front to back in uneven pieces from
// several goroutines' worth of offsets and checks every byte.
func TestStageGrowth(t *testing.T) {
	fsys := temp.MustNew(nil)
	s, err := vfs.Stage(t.Context(), fsys, "/big", false)
	require.NoError(t, err)
	var want []byte
	for i := 0; len(want) < 3<<20; i++ {
		chunk := bytes.Repeat([]byte{byte(i)}, 1000+i*37)
		_, err := s.WriteAt(chunk, int64(len(want)))
		require.NoError(t, err)
		want = append(want, chunk...)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			buf := make([]byte, 4096)
			off := int64(i * 700000)
			n, _ := s.ReadAt(buf, off)
			assert.Equal(t, want[off:off+int64(n)], buf[:n], "ReadAt(%d) differs", off)
		})
	}
	wg.Wait()
	require.NoError(t, s.Commit(t.Context()))
	// bytes.Equal keeps a failure to two lengths, not a diff of 3 MiB.
	got, _ := fsys.Read(t.Context(), "/big")
	assert.True(t, bytes.Equal(got, want), "committed %d bytes, want %d bytes as written", len(got), len(want))

}
