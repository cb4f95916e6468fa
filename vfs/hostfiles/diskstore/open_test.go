package diskstore_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// TestOpenSnapshot: Open's reader returns the version it opened, whole,
// though a put replaces the file mid-read.
func TestOpenSnapshot(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	old := bytes.Repeat([]byte("old\n"), 100000)
	_, err := s.Put(ctx, hostfiles.Deployment, "/f", old, vfs.Precondition{})
	require.NoError(t, err)
	r, m, err := s.Open(ctx, hostfiles.Deployment, "/f")
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, int64(len(old)), m.Size)
	head := make([]byte, 1000)
	_, err = io.ReadFull(r, head)
	require.NoError(t, err)
	_, err = s.Put(ctx, hostfiles.Deployment, "/f", []byte("new\n"), vfs.Precondition{})
	require.NoError(t, err)
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(old, append(head, rest...)), "the reader kept the opened version")
	_, _, err = s.Open(ctx, hostfiles.Deployment, "/missing")
	assert.ErrorIs(t, err, hostfiles.ErrNotFound)
}

// TestStatHashesAStream: the etag of a large file written behind the
// store's back is computed without a buffer of its size.
func TestStatHashesAStream(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	const size = 32 << 20
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "deployment"), 0o755))
	data := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "deployment", "big"), data, 0o644))
	want := vfs.ContentETag(data)
	data = nil
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := s.Stat(t.Context(), hostfiles.Deployment, "/big")
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Equal(t, want, m.ETag)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Stat of a %d MiB file allocated %d KiB", size>>20, alloc>>10)
	assert.Less(t, alloc, uint64(size/8), "Stat allocated %d bytes for a %d-byte file", alloc, size)
}
