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
		if err != nil {
			t.Fatal(err)
		}
		l, err := temp.New(lower)
		if err != nil {
			t.Fatal(err)
		}
		return overlay.New(u, l, temp.Empty())
	}, vfstest.Options{ReadOnly: true})
}

func TestUpperWins(t *testing.T) {
	ctx := context.Background()
	upper := temp.MustNew(map[string]string{"/a.txt": "new hit\n", "/d/x": "upper x", "/e/f": "upper dir"})
	lower := temp.MustNew(map[string]string{"/a.txt": "old hit\nhit two\nhit three\n", "/b.txt": "lower hit\n", "/d/x": "lower x", "/d/y": "lower hit y", "/e": "lower file hit"})
	o := overlay.New(upper, lower)

	if data, err := o.Read(ctx, "/a.txt"); err != nil || string(data) != "new hit\n" {
		t.Errorf("Read(/a.txt) = %q, %v", data, err)
	}
	if data, err := o.Read(ctx, "/d/y"); err != nil || string(data) != "lower hit y" {
		t.Errorf("Read(/d/y) = %q, %v", data, err)
	}
	if _, err := o.Read(ctx, "/e"); !errors.Is(err, vfs.ErrIsDir) {
		t.Errorf("Read(/e) = %v, want is a directory (the upper layer's)", err)
	}
	if _, err := o.Read(ctx, "/nope"); !errors.Is(err, vfs.ErrNotFound) || err.Error() != "not found: /nope" {
		t.Errorf("Read(/nope) = %v", err)
	}
	if info, err := o.Stat(ctx, "/a.txt"); err != nil || info.Size != int64(len("new hit\n")) || info.Path != "/a.txt" {
		t.Errorf("Stat(/a.txt) = %+v, %v", info, err)
	}
	if info, _ := o.Stat(ctx, "/e"); info.Kind != vfs.KindDir {
		t.Errorf("Stat(/e) = %v, want the upper layer's directory", info.Kind)
	}
	buf := make([]byte, 3)
	if n, err := vfs.ReadAt(ctx, o, "/a.txt", buf, 4); n != 3 || err != nil || string(buf) != "hit" {
		t.Errorf("ReadAt(/a.txt) = %d, %v, %q", n, err, buf)
	}
	if n, err := vfs.ReadAt(ctx, o, "/d/y", buf, 9); n != 2 || !errors.Is(err, io.EOF) || string(buf[:2]) != " y" {
		t.Errorf("ReadAt(/d/y) at the end = %d, %v, %q", n, err, buf[:n])
	}

	es, err := collect(o.List(ctx, "/"))
	want := []vfs.DirEntry{{Path: "/a.txt", Kind: vfs.KindFile}, {Path: "/b.txt", Kind: vfs.KindFile}, {Path: "/d", Kind: vfs.KindDir}, {Path: "/e", Kind: vfs.KindDir}}
	if err != nil || !slices.Equal(es, want) {
		t.Errorf("List(/) = %v, %v, want %v", es, err, want)
	}
	es, err = collect(o.Glob(ctx, "**", "/d"))
	if want := []vfs.DirEntry{{Path: "/d/x", Kind: vfs.KindFile}, {Path: "/d/y", Kind: vfs.KindFile}}; err != nil || !slices.Equal(es, want) {
		t.Errorf("Glob(**, /d) = %v, %v, want %v", es, err, want)
	}

	hits, err := collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "hit"}))
	wantHits := []vfs.GrepResult{
		{Path: "/a.txt", LineNumber: 1, Line: "new hit"},
		{Path: "/b.txt", LineNumber: 1, Line: "lower hit"},
		{Path: "/d/y", LineNumber: 1, Line: "lower hit y"},
	}
	if err != nil || !slices.Equal(hits, wantHits) {
		t.Errorf("Grep(hit) = %v, %v, want %v", hits, err, wantHits)
	}
	hits, err = collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "hit", MaxResults: 2}))
	if err != nil || !slices.Equal(hits, wantHits[:2]) {
		t.Errorf("Grep(hit, max 2) = %v, %v, want %v", hits, err, wantHits[:2])
	}

	for _, err := range []error{o.Write(ctx, "/a.txt", nil), o.Delete(ctx, "//b.txt")} {
		if !errors.Is(err, vfs.ErrReadOnly) || !strings.HasPrefix(err.Error(), "read-only mount: /") {
			t.Errorf("write verb = %v", err)
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
	if want := []vfs.GrepResult{{Path: "/c", LineNumber: 1, Line: "hit"}}; err != nil || !slices.Equal(hits, want) {
		t.Errorf("Grep(max 1) = %v, %v, want %v", hits, err, want)
	}
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
		if data, err := o.Read(ctx, "/b"); err != nil || string(data) != "lower hit" {
			t.Errorf("Read(/b) = %q, %v", data, err)
		}
		if _, err := o.Read(ctx, "/nope"); !errors.Is(err, vfs.ErrNotFound) {
			t.Errorf("Read(/nope) = %v, want not found: other layers answered", err)
		}
		if info, err := o.Stat(ctx, "/b"); err != nil || info.Kind != vfs.KindFile {
			t.Errorf("Stat(/b) = %+v, %v", info, err)
		}
		if info, err := o.Stat(ctx, "/nope"); err != nil || info.Kind != vfs.KindMissing {
			t.Errorf("Stat(/nope) = %+v, %v", info, err)
		}
		es, err := collect(o.List(ctx, "/"))
		if want := []vfs.DirEntry{{Path: "/a", Kind: vfs.KindFile}, {Path: "/b", Kind: vfs.KindFile}}; err != nil || !slices.Equal(es, want) {
			t.Errorf("List(/) = %v, %v", es, err)
		}
		es, err = collect(o.Glob(ctx, "*", "/"))
		if err != nil || len(es) != 2 {
			t.Errorf("Glob(*) = %v, %v", es, err)
		}
		hits, err := collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "hit"}))
		want := []vfs.GrepResult{{Path: "/a", LineNumber: 1, Line: "upper hit"}, {Path: "/b", LineNumber: 1, Line: "lower hit"}}
		if err != nil || !slices.Equal(hits, want) {
			t.Errorf("Grep(hit) = %v, %v, want %v", hits, err, want)
		}
		if rs, err := collect(o.Search(ctx, vfs.SearchQuery{Query: "hit"})); err != nil || len(rs) != 0 {
			t.Errorf("Search = %v, %v", rs, err)
		}
	}
	out := logs.String()
	if n := strings.Count(out, "layer down"); n != 1 {
		t.Errorf("the downed layer was logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, "layer=1") || !strings.Contains(out, "connection refused") {
		t.Errorf("the log does not name the layer and its cause:\n%s", out)
	}

	// A second overlay logs its own downed layer again.
	o2 := overlay.NewWithOptions(overlay.Options{Logger: logger}, down, upper)
	_, _ = o2.Stat(ctx, "/a")
	if n := strings.Count(logs.String(), "layer down"); n != 2 {
		t.Errorf("two overlays logged %d times, want 2", n)
	}
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
		if !errors.Is(err, vfs.ErrUnavailable) {
			t.Errorf("%s = %v, want the first layer's error", what, err)
		}
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
	if n := strings.Count(logs.String(), "layer down"); n != 2 {
		t.Errorf("logged %d times, want once per layer:\n%s", n, logs.String())
	}
	_, err = collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "("}))
	if !errors.Is(err, vfs.ErrInvalidGrepPattern) {
		t.Errorf("Grep with a bad pattern = %v", err)
	}
}

// TestCancelIsNotDown: a cancelled context ends the call and downs no
// layer.
func TestCancelIsNotDown(t *testing.T) {
	var logs syncBuffer
	o := overlay.NewWithOptions(overlay.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		temp.MustNew(map[string]string{"/a": "a"}), temp.MustNew(map[string]string{"/b": "b"}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Stat(ctx, "/b"); !errors.Is(err, context.Canceled) {
		t.Errorf("Stat = %v", err)
	}
	if _, err := o.Read(ctx, "/b"); !errors.Is(err, context.Canceled) {
		t.Errorf("Read = %v", err)
	}
	if _, err := collect(o.List(ctx, "/")); !errors.Is(err, context.Canceled) {
		t.Errorf("List = %v", err)
	}
	if logs.String() != "" {
		t.Errorf("cancellation was logged as a downed layer:\n%s", logs.String())
	}
}
