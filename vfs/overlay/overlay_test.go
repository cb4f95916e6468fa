package overlay_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/overlay"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// TestConformance runs the suite on an overlay of three layers: the seeded
// files alternate between the upper two, the second also holds a stale copy
// of each of the first's files (which must never show), and an empty tree
// is the bottom.
func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		upper, lower := map[string][]byte{}, map[string][]byte{}
		for i, p := range slices.Sorted(maps.Keys(files)) {
			if i%2 == 0 {
				upper[p] = files[p]
				lower[p] = []byte("stale TODO copy\n\nfunc main\n")
			} else {
				lower[p] = files[p]
			}
		}
		u, err := temp.New(upper)
		require.NoError(t, err)
		l, err := temp.New(lower)
		require.NoError(t, err)
		return overlay.New(u, l, temp.Empty())
	}, vfstest.Options{ReadOnly: true})
}

func TestUpperWins(t *testing.T) {
	ctx := context.Background()
	upper := temp.MustNew(map[string]string{"/a.txt": "new hit\n", "/d/x": "upper x", "/e/f": "upper dir"})
	lower := temp.MustNew(map[string]string{"/a.txt": "old hit\nhit two\nhit three\n", "/b.txt": "lower hit\n", "/d/x": "lower x", "/d/y": "lower hit y", "/e": "lower file hit"})
	o := overlay.New(upper, lower)

	data, err := o.Read(ctx, "/a.txt")
	assert.NoError(t, err, "Read(/a.txt)")
	assert.Equal(t, "new hit\n", string(data), "Read(/a.txt)")
	data, err = o.Read(ctx, "/d/y")
	assert.NoError(t, err, "Read(/d/y)")
	assert.Equal(t, "lower hit y", string(data), "Read(/d/y)")
	_, err = o.Read(ctx, "/e")
	assert.ErrorIs(t, err, vfs.ErrIsDir, "Read(/e), want is a directory (the upper layer's)")
	_, err = o.Read(ctx, "/nope")
	assert.ErrorIs(t, err, vfs.ErrNotFound, "Read(/nope)")
	assert.EqualError(t, err, "not found: /nope", "Read(/nope)")
	info, err := o.Stat(ctx, "/a.txt")
	assert.NoError(t, err, "Stat(/a.txt)")
	assert.Equal(t, int64(len("new hit\n")), info.Size, "Stat(/a.txt).Size")
	assert.Equal(t, "/a.txt", info.Path, "Stat(/a.txt).Path")
	info, _ = o.Stat(ctx, "/e")
	assert.Equal(t, vfs.KindDir, info.Kind, "Stat(/e), want the upper layer's directory")
	buf := make([]byte, 3)
	n, err := vfs.ReadAt(ctx, o, "/a.txt", buf, 4)
	assert.NoError(t, err, "ReadAt(/a.txt)")
	assert.Equal(t, 3, n, "ReadAt(/a.txt)")
	assert.Equal(t, "hit", string(buf), "ReadAt(/a.txt)")
	n, err = vfs.ReadAt(ctx, o, "/d/y", buf, 9)
	assert.ErrorIs(t, err, io.EOF, "ReadAt(/d/y) at the end")
	assert.Equal(t, 2, n, "ReadAt(/d/y) at the end")
	assert.Equal(t, " y", string(buf[:2]), "ReadAt(/d/y) at the end")

	es, err := collect(o.List(ctx, "/"))
	assert.NoError(t, err, "List(/)")
	assert.Equal(t, []vfs.DirEntry{{Path: "/a.txt", Kind: vfs.KindFile}, {Path: "/b.txt", Kind: vfs.KindFile}, {Path: "/d", Kind: vfs.KindDir}, {Path: "/e", Kind: vfs.KindDir}}, es, "List(/)")
	es, err = collect(o.Glob(ctx, "**", "/d"))
	assert.NoError(t, err, "Glob(**, /d)")
	assert.Equal(t, []vfs.DirEntry{{Path: "/d/x", Kind: vfs.KindFile}, {Path: "/d/y", Kind: vfs.KindFile}}, es, "Glob(**, /d)")

	hits, err := collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "hit"}))
	wantHits := []vfs.GrepResult{
		{Path: "/a.txt", LineNumber: 1, Line: "new hit"},
		{Path: "/b.txt", LineNumber: 1, Line: "lower hit"},
		{Path: "/d/y", LineNumber: 1, Line: "lower hit y"},
	}
	assert.NoError(t, err, "Grep(hit)")
	assert.Equal(t, wantHits, hits, "Grep(hit)")
	hits, err = collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "hit", MaxResults: 2}))
	assert.NoError(t, err, "Grep(hit, max 2)")
	assert.Equal(t, wantHits[:2], hits, "Grep(hit, max 2)")

	for _, err := range []error{o.Write(ctx, "/a.txt", nil), o.Delete(ctx, "//b.txt")} {
		if assert.ErrorIs(t, err, vfs.ErrReadOnly, "write verb") {
			assert.True(t, strings.HasPrefix(err.Error(), "read-only mount: /"), "write verb = %v", err)
		}
	}
}

// TestMaxResultsWithStaleHits: a lower layer whose first hits are stale
// copies must not stop before the overlay has its results.
func TestMaxResultsWithStaleHits(t *testing.T) {
	ctx := context.Background()
	upper := temp.MustNew(map[string]string{"/a": "miss", "/b": "miss"})
	lower := temp.MustNew(map[string]string{"/a": "hit", "/b": "hit", "/c": "hit"})
	hits, err := collect(overlay.New(upper, lower).Grep(ctx, vfs.GrepQuery{Pattern: "hit", MaxResults: 1}))
	assert.NoError(t, err, "Grep(max 1)")
	assert.Equal(t, []vfs.GrepResult{{Path: "/c", LineNumber: 1, Line: "hit"}}, hits, "Grep(max 1)")
}

// downFS fails every call with err.
type downFS struct{ err error }

func (f downFS) List(context.Context, string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Fail[vfs.DirEntry](f.err)
}
func (f downFS) Stat(context.Context, string) (vfs.FileInfo, error) { return vfs.FileInfo{}, f.err }
func (f downFS) Glob(context.Context, string, string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Fail[vfs.DirEntry](f.err)
}
func (f downFS) Read(context.Context, string) ([]byte, error) { return nil, f.err }
func (f downFS) Grep(context.Context, vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return vfs.Fail[vfs.GrepResult](f.err)
}
func (f downFS) Write(context.Context, string, []byte) error { return f.err }
func (f downFS) Delete(context.Context, string) error        { return f.err }
func (f downFS) Search(context.Context, vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return vfs.Fail[vfs.SearchResult](f.err)
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDownedLayer(t *testing.T) {
	ctx := context.Background()
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cause := errors.New("dial tcp 10.0.0.1:443: connection refused")
	down := downFS{err: vfs.NewError(vfs.KindUnavailable, "/", cause)}
	upper := temp.MustNew(map[string]string{"/a": "upper hit"})
	lower := temp.MustNew(map[string]string{"/a": "stale hit", "/b": "lower hit"})
	o := overlay.NewWithOptions(overlay.Options{Logger: logger}, upper, down, lower)

	for range 3 {
		data, err := o.Read(ctx, "/b")
		assert.NoError(t, err, "Read(/b)")
		assert.Equal(t, "lower hit", string(data), "Read(/b)")
		_, err = o.Read(ctx, "/nope")
		assert.ErrorIs(t, err, vfs.ErrNotFound, "Read(/nope), want not found: other layers answered")
		info, err := o.Stat(ctx, "/b")
		assert.NoError(t, err, "Stat(/b)")
		assert.Equal(t, vfs.KindFile, info.Kind, "Stat(/b)")
		info, err = o.Stat(ctx, "/nope")
		assert.NoError(t, err, "Stat(/nope)")
		assert.Equal(t, vfs.KindMissing, info.Kind, "Stat(/nope)")
		es, err := collect(o.List(ctx, "/"))
		assert.NoError(t, err, "List(/)")
		assert.Equal(t, []vfs.DirEntry{{Path: "/a", Kind: vfs.KindFile}, {Path: "/b", Kind: vfs.KindFile}}, es, "List(/)")
		es, err = collect(o.Glob(ctx, "*", "/"))
		assert.NoError(t, err, "Glob(*)")
		assert.Len(t, es, 2, "Glob(*)")
		hits, err := collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "hit"}))
		assert.NoError(t, err, "Grep(hit)")
		assert.Equal(t, []vfs.GrepResult{{Path: "/a", LineNumber: 1, Line: "upper hit"}, {Path: "/b", LineNumber: 1, Line: "lower hit"}}, hits, "Grep(hit)")
		rs, err := collect(o.Search(ctx, vfs.SearchQuery{Query: "hit"}))
		assert.NoError(t, err, "Search")
		assert.Empty(t, rs, "Search")
	}
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "layer down"), "the downed layer was logged other than once:\n%s", out)
	assert.Contains(t, out, "layer=1", "the log does not name the layer")
	assert.Contains(t, out, "connection refused", "the log does not name the cause")

	// A second overlay logs its own downed layer again.
	o2 := overlay.NewWithOptions(overlay.Options{Logger: logger}, down, upper)
	_, _ = o2.Stat(ctx, "/a")
	assert.Equal(t, 2, strings.Count(logs.String(), "layer down"), "two overlays logged")
}

func TestEveryLayerDown(t *testing.T) {
	ctx := context.Background()
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	d1 := downFS{err: vfs.NewError(vfs.KindUnavailable, "/", errors.New("one"))}
	d2 := downFS{err: errors.New("two")}
	o := overlay.NewWithOptions(overlay.Options{Logger: logger}, d1, d2)
	check := func(what string, err error) {
		t.Helper()
		assert.ErrorIs(t, err, vfs.ErrUnavailable, "%s, want the first layer's error", what)
	}
	_, err := o.Stat(ctx, "/a")
	check("Stat", err)
	_, err = o.Read(ctx, "/a")
	check("Read", err)
	_, err = collect(o.List(ctx, "/"))
	check("List", err)
	_, err = collect(o.Glob(ctx, "**", "/"))
	check("Glob", err)
	_, err = collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "x"}))
	check("Grep", err)
	_, err = collect(o.Search(ctx, vfs.SearchQuery{Query: "x"}))
	check("Search", err)
	assert.Equal(t, 2, strings.Count(logs.String(), "layer down"), "logged other than once per layer:\n%s", logs.String())
	_, err = collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "("}))
	assert.ErrorIs(t, err, vfs.ErrInvalidGrepPattern, "Grep with a bad pattern")
}

// TestCancelIsNotDown: a cancelled context ends the call and downs no
// layer.
func TestCancelIsNotDown(t *testing.T) {
	var logs syncBuffer
	o := overlay.NewWithOptions(overlay.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		temp.MustNew(map[string]string{"/a": "a"}), temp.MustNew(map[string]string{"/b": "b"}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := o.Stat(ctx, "/b")
	assert.ErrorIs(t, err, context.Canceled, "Stat")
	_, err = o.Read(ctx, "/b")
	assert.ErrorIs(t, err, context.Canceled, "Read")
	_, err = collect(o.List(ctx, "/"))
	assert.ErrorIs(t, err, context.Canceled, "List")
	assert.Empty(t, logs.String(), "cancellation was logged as a downed layer")

}
