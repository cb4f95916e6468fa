package pgstore_test

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// TestOpenChunked reads a file larger than the read chunk through Open:
// it comes in pieces, whole and in order, and a put in the
// middle of the read does not mix versions (the reader's snapshot).
func TestOpenChunked(t *testing.T) {
	defer pgstore.SetReadChunk(4096)()
	ctx := t.Context()
	s := openStore(t, pgtest.URL(t))
	sc := freshScope(t)
	var old bytes.Buffer
	for i := range 5000 {
		fmt.Fprintf(&old, "line %05d\n", i)
	}
	_, err := s.Put(ctx, sc, "/big", old.Bytes(), vfs.Precondition{})
	require.NoError(t, err)

	r, m, err := s.Open(ctx, sc, "/big")
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, int64(old.Len()), m.Size)
	assert.Equal(t, vfs.ContentETag(old.Bytes()), m.ETag)
	var got bytes.Buffer
	buf := make([]byte, 10000)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.LessOrEqual(t, n, 8*4096, "one read returns at most a piece (at most 8 chunks)")
	assert.Less(t, n, old.Len(), "the file comes in pieces")
	got.Write(buf[:n])
	// Another writer replaces the file mid-read.
	_, err = s.Put(ctx, sc, "/big", bytes.Repeat([]byte("new\n"), 20000), vfs.Precondition{})
	require.NoError(t, err)
	_, err = io.Copy(&got, r)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(old.Bytes(), got.Bytes()), "the reader returned the version it opened, whole (got %d bytes)", got.Len())
	require.NoError(t, r.Close())

	// Small files come in one query; missing ones are ErrNotFound.
	_, err = s.Put(ctx, sc, "/small", []byte("hi\n"), vfs.Precondition{})
	require.NoError(t, err)
	r, _, err = s.Open(ctx, sc, "/small")
	require.NoError(t, err)
	data, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(data))
	require.NoError(t, r.Close())
	_, _, err = s.Open(ctx, sc, "/missing")
	assert.ErrorIs(t, err, hostfiles.ErrNotFound)
}

// TestGrepChunked greps a file of many chunks through the tree: every
// hit, with its line number, including lines cut across chunks.
func TestGrepChunked(t *testing.T) {
	defer pgstore.SetReadChunk(1000)()
	ctx := t.Context()
	s := openStore(t, pgtest.URL(t))
	sc := freshScope(t)
	var data bytes.Buffer
	var want []string
	for i := range 3000 {
		line := fmt.Sprintf("row %d %s", i, strings.Repeat("x", i%37))
		if i%250 == 7 {
			line += " hit"
			want = append(want, fmt.Sprintf("%d:%s", i+1, line))
		}
		data.WriteString(line + "\n")
	}
	_, err := s.Put(ctx, sc, "/log.txt", data.Bytes(), vfs.Precondition{})
	require.NoError(t, err)
	fsys, err := hostfiles.New(s, sc)
	require.NoError(t, err)
	var got []string
	for r, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "hit$", Path: "/log.txt"}) {
		require.NoError(t, err)
		got = append(got, fmt.Sprintf("%d:%s", r.LineNumber, r.Line))
	}
	assert.Equal(t, want, got)
}
