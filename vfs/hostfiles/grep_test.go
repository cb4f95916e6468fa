package hostfiles_test

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
)

// lineStream generates size bytes of lines ("line 0000000\n"...)
// without holding them, ending with the line "NEEDLE\n"; it counts what
// was read and the largest single read.
type lineStream struct {
	size, off int64
	maxRead   int
	closed    bool
}

const streamLine = "line 0000000\n" // 13 bytes

// streamBlock is whole lines to copy from.
var streamBlock = []byte(strings.Repeat(streamLine, 5000))

func (s *lineStream) Read(p []byte) (int, error) {
	if s.off >= s.size {
		return 0, io.EOF
	}
	s.maxRead = max(s.maxRead, len(p))
	n := 0
	for n < len(p) && s.off < s.size {
		var m int
		if rest := s.size - s.off; rest <= 7 {
			m = copy(p[n:], "NEEDLE\n"[7-rest:])
		} else {
			i := s.off % int64(len(streamLine))
			m = copy(p[n:min(len(p), n+int(rest-7))], streamBlock[i:])
		}
		n += m
		s.off += int64(m)
	}
	return n, nil
}

func (s *lineStream) Close() error { s.closed = true; return nil }

// streamStore serves /big.log as a generated stream of size bytes through
// Open, and fails the test if anything reads a file whole with Get.
type streamStore struct {
	hostfiles.Store
	t      *testing.T
	size   int64
	stream *lineStream
}

func (s *streamStore) Get(ctx context.Context, sc hostfiles.Scope, key string) ([]byte, hostfiles.Meta, error) {
	assert.Failf(s.t, "grep read a whole file", "Get(%s)", key)
	return s.Store.Get(ctx, sc, key)
}

func (s *streamStore) Stat(ctx context.Context, sc hostfiles.Scope, key string) (hostfiles.Meta, error) {
	m, err := s.Store.Stat(ctx, sc, key)
	if key == "/big.log" {
		m.Size = s.size
	}
	return m, err
}

func (s *streamStore) Open(ctx context.Context, sc hostfiles.Scope, key string) (io.ReadCloser, hostfiles.Meta, error) {
	if key != "/big.log" {
		return s.Store.(hostfiles.Opener).Open(ctx, sc, key)
	}
	s.stream = &lineStream{size: s.size}
	return s.stream, hostfiles.Meta{Key: key, Size: s.size}, nil
}

// TestGrepStreams greps a 64 MiB file (generated as it is read, so the
// test itself holds none of it): the hit on the last line is found with
// the right line number, the file is read through Open in pieces (never
// Get), and the grep allocates a small fraction of the file's size. A
// Grep that loaded files whole (vfs.Grep over Read) allocates the whole
// file and fails both checks.
func TestGrepStreams(t *testing.T) {
	ctx := t.Context()
	ds, err := diskstore.Open(t.TempDir(), diskstore.Options{})
	require.NoError(t, err)
	defer ds.Close()
	_, err = ds.Put(ctx, hostfiles.Deployment, "/big.log", []byte("placeholder\n"), vfs.Precondition{})
	require.NoError(t, err)
	_, err = ds.Put(ctx, hostfiles.Deployment, "/small.txt", []byte("a NEEDLE here\n"), vfs.Precondition{})
	require.NoError(t, err)
	const size = 64 << 20
	size64 := int64(size) - int64(size)%int64(len(streamLine)) + 7 // whole lines, then NEEDLE
	s := &streamStore{Store: ds, t: t, size: size64}
	fsys, err := hostfiles.New(s, hostfiles.Deployment)
	require.NoError(t, err)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var hits []string
	for r, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "NEEDLE", Path: "/"}) {
		require.NoError(t, err)
		hits = append(hits, fmt.Sprintf("%s:%d:%s", r.Path, r.LineNumber, r.Line))
	}
	runtime.ReadMemStats(&after)
	lines := (size64-7)/int64(len(streamLine)) + 1
	assert.Equal(t, []string{fmt.Sprintf("/big.log:%d:NEEDLE", lines), "/small.txt:1:a NEEDLE here"}, hits)
	require.NotNil(t, s.stream, "grep opened the file")
	assert.Equal(t, size64, s.stream.off, "the whole file was scanned")
	assert.True(t, s.stream.closed, "the reader was closed")
	assert.LessOrEqual(t, s.stream.maxRead, 1<<20, "reads are pieces, not the whole file")
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("grep of a %d MiB file allocated %d KiB, largest read %d KiB", size>>20, alloc>>10, s.stream.maxRead>>10)
	assert.Less(t, alloc, uint64(size/8), "grep allocated %d bytes for a %d-byte file: it buffered", alloc, size)
}

// TestGrepCachesNoETag: a grep is not a read for the CAS rule, so a later
// Write of a grepped file stays unconditional.
func TestGrepCachesNoETag(t *testing.T) {
	ctx := t.Context()
	s, err := diskstore.Open(t.TempDir(), diskstore.Options{})
	require.NoError(t, err)
	defer s.Close()
	a, err := hostfiles.New(s, hostfiles.Deployment)
	require.NoError(t, err)
	b, err := hostfiles.New(s, hostfiles.Deployment)
	require.NoError(t, err)
	require.NoError(t, a.Write(ctx, "/n", []byte("one\n")))
	n := 0
	for _, err := range b.Grep(ctx, vfs.GrepQuery{Pattern: "one", Path: "/"}) {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 1, n)
	require.NoError(t, a.Write(ctx, "/n", []byte("two\n")))
	assert.NoError(t, b.Write(ctx, "/n", []byte("three\n")), "b never read /n: its write is unconditional")
}
