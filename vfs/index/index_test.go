package index_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// open indexes fsys in a fresh directory and closes it at the end of the
// test.
func open(t *testing.T, fsys vfs.FileSystem, dir string, opts index.Options) *index.FS {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "idx")
	}
	f, err := index.Open(t.Context(), fsys, dir, opts)
	require.NoError(t, err, "Open")
	t.Cleanup(func() {
		assert.NoError(t, f.Close(), "Close")
	})
	return f
}

func search(t *testing.T, fsys vfs.FileSystem, q vfs.SearchQuery) []vfs.SearchResult {
	t.Helper()
	var out []vfs.SearchResult
	for r, err := range fsys.Search(t.Context(), q) {
		require.NoError(t, err, "Search(%+v)", q)
		out = append(out, r)
	}
	return out
}

func paths(rs []vfs.SearchResult) []string {
	var ps []string
	for _, r := range rs {
		ps = append(ps, r.Path)
	}
	return ps
}

func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		inner, err := temp.New(files)
		require.NoError(t, err)
		return open(t, inner, "", index.Options{})
	}, vfstest.Options{HasIndex: true})
}

var fixture = map[string]string{
	"/net/http/header.go":      "package http\n\n// A Header represents the key-value pairs in an HTTP header.\ntype Header map[string][]string\n\nfunc ParseHTTPHeader(s string) Header { return nil }\n",
	"/net/http/server.go":      "package http\n\nfunc ListenAndServe(addr string) error { return nil }\n",
	"/net/textproto/reader.go": "package textproto\n\n// ReadMIMEHeader reads a MIME-style header.\nfunc (r *Reader) ReadMIMEHeader() {}\n",
	"/strings/builder.go":      "package strings\n\n// A Builder is used to efficiently build a string.\ntype Builder struct{}\n",
	"/docs/notes.md":           "# Notes\n\nsnake_case_name and camelCaseName live here.\n",
	"/img/logo.png":            "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR header",
	"/big.txt":                 strings.Repeat("header ", 300),
	"/.git/config":             "header",
}

func TestSearch(t *testing.T) {
	inner := temp.MustNew(fixture)
	f := open(t, inner, "", index.Options{MaxFileSize: 1000})
	st := f.Stats()
	want := index.Stats{Files: 7, Indexed: 5, SkippedBinary: 1, SkippedLarge: 1}
	st.Bytes, st.Duration = 0, 0
	assert.Equal(t, want, st, "Stats()")

	rs := search(t, f, vfs.SearchQuery{Query: "http header"})
	require.NotEmpty(t, rs, "Search(http header), want /net/http/header.go first")
	require.Equal(t, "/net/http/header.go", rs[0].Path, "Search(http header) = %v, want /net/http/header.go first", rs)
	assert.True(t, slices.IsSortedFunc(rs, vfs.CompareSearchResults), "Search(http header) not in score, path order: %v", rs)
	for _, r := range rs {
		assert.NotContains(t, []string{"/img/logo.png", "/big.txt", "/.git/config"}, r.Path, "Search(http header) yielded skipped file %s", r.Path)
	}
	// The best line holds the most query terms: http, header and their
	// concatenation httpheader.
	got := rs[0]
	assert.Equal(t, 6, got.LineNumber, "best hit, want L6 with ParseHTTPHeader")
	assert.Equal(t, "func ParseHTTPHeader(s string) Header { return nil }", got.Snippet, "best hit, want L6 with ParseHTTPHeader")

	// Identifiers are searchable whole and in parts.
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"ParseHTTPHeader", "/net/http/header.go"},
		{"parsehttpheader", "/net/http/header.go"},
		{"parse", "/net/http/header.go"},
		{"mime", "/net/textproto/reader.go"},
		{"snake", "/docs/notes.md"},
		{"snake_case_name", "/docs/notes.md"},
		{"camel case", "/docs/notes.md"},
		{"textproto", "/net/textproto/reader.go"},
		{"builder", "/strings/builder.go"},
	} {
		rs := search(t, f, vfs.SearchQuery{Query: tc.query})
		if assert.NotEmpty(t, rs, "Search(%q), want %s first", tc.query, tc.want) {
			assert.Equal(t, tc.want, rs[0].Path, "Search(%q) = %v, want %s first", tc.query, paths(rs), tc.want)
		}
	}

	// Scope by path segment, MaxResults.
	rs = search(t, f, vfs.SearchQuery{Query: "header", Path: "/net/http"})
	assert.Equal(t, []string{"/net/http/header.go"}, paths(rs), "Search(header in /net/http)")
	rs = search(t, f, vfs.SearchQuery{Query: "header", Path: "/net/htt"})
	assert.Empty(t, paths(rs), "Search(header in /net/htt), want nothing")
	rs = search(t, f, vfs.SearchQuery{Query: "header", Path: "/net/http/header.go"})
	assert.Equal(t, []string{"/net/http/header.go"}, paths(rs), "Search(header in the file)")
	all := search(t, f, vfs.SearchQuery{Query: "header"})
	require.GreaterOrEqual(t, len(all), 2, "Search(header) = %v, want 2+", paths(all))
	one := search(t, f, vfs.SearchQuery{Query: "header", MaxResults: 1})
	assert.Equal(t, all[:1], one, "Search(header, max 1)")
	assert.Empty(t, search(t, f, vfs.SearchQuery{Query: "  ,;  "}), "Search of punctuation, want nothing")
}

func TestWritesUpdateIndex(t *testing.T) {
	inner := temp.MustNew(fixture)
	f := open(t, inner, "", index.Options{})
	ctx := t.Context()
	require.Empty(t, search(t, f, vfs.SearchQuery{Query: "zebra"}), "Search(zebra) before write")
	require.NoError(t, f.Write(ctx, "/zoo/animals.txt", []byte("one\nthe zebra grazes\n")))
	rs := search(t, f, vfs.SearchQuery{Query: "zebra"})
	require.Len(t, rs, 1, "Search(zebra) after write")
	require.Equal(t, "/zoo/animals.txt", rs[0].Path, "Search(zebra) after write = %+v", rs)
	require.Equal(t, 2, rs[0].LineNumber, "Search(zebra) after write = %+v", rs)
	require.Equal(t, "the zebra grazes", rs[0].Snippet, "Search(zebra) after write = %+v", rs)
	// Overwrite: the old words go, the new come.
	require.NoError(t, f.Write(ctx, "/zoo/animals.txt", []byte("a lion\n")))
	assert.Empty(t, search(t, f, vfs.SearchQuery{Query: "zebra"}), "Search(zebra) after overwrite")
	assert.Len(t, search(t, f, vfs.SearchQuery{Query: "lion"}), 1, "Search(lion) after overwrite")
	// WriteIf: through the fallback (temp has a ConditionalWriter, so use
	// its etag).
	info, _ := f.Stat(ctx, "/zoo/animals.txt")
	_, err := f.WriteIf(ctx, "/zoo/animals.txt", []byte("a tiger\n"), vfs.Precondition{IfMatch: "nope"})
	assert.ErrorIs(t, err, vfs.ErrConflict, "WriteIf(stale etag), want conflict")
	_, err = f.WriteIf(ctx, "/zoo/animals.txt", []byte("a tiger\n"), vfs.Precondition{IfMatch: info.ETag})
	require.NoError(t, err)
	assert.Len(t, search(t, f, vfs.SearchQuery{Query: "tiger"}), 1, "Search(tiger) after WriteIf")
	require.NoError(t, f.Delete(ctx, "/zoo/animals.txt"))
	assert.Empty(t, search(t, f, vfs.SearchQuery{Query: "tiger"}), "Search(tiger) after delete")
	err = f.Delete(ctx, "/zoo/animals.txt")
	assert.ErrorIs(t, err, vfs.ErrNotFound, "Delete(missing)")
	assert.EqualError(t, err, "not found: /zoo/animals.txt", "Delete(missing)")
	// A binary write replaces indexed text with nothing searchable.
	require.NoError(t, f.Write(ctx, "/docs/notes.md", []byte("\x00\x01snake")))
	assert.Empty(t, search(t, f, vfs.SearchQuery{Query: "snake"}), "Search(snake) after binary overwrite")
}

// plain hides temp.FS's optional capabilities, leaving the eight verbs.
type plain struct{ vfs.FileSystem }

func TestCapabilities(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name  string
		inner vfs.FileSystem
	}{
		{"forwarded", temp.MustNew(map[string]string{"/a.txt": "hello world"})},
		{"fallback", plain{temp.MustNew(map[string]string{"/a.txt": "hello world"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, tc.inner, "", index.Options{})
			var changes []vfs.Change
			cancel := f.Watch(func(c vfs.Change) { changes = append(changes, c) })
			defer cancel()
			buf := make([]byte, 5)
			n, err := f.ReadAt(ctx, "/a.txt", buf, 6)
			assert.NoError(t, err, "ReadAt")
			assert.Equal(t, 5, n, "ReadAt")
			assert.Equal(t, "world", string(buf), "ReadAt")
			etag, err := f.WriteIf(ctx, "/b.txt", []byte("fresh words"), vfs.Precondition{IfNoneMatch: true})
			require.NoError(t, err, "WriteIf(create)")
			require.NotEmpty(t, etag, "WriteIf(create)")
			_, err = f.WriteIf(ctx, "/b.txt", []byte("x"), vfs.Precondition{IfNoneMatch: true})
			assert.ErrorIs(t, err, vfs.ErrConflict, "WriteIf(create existing), want conflict")
			assert.Len(t, search(t, f, vfs.SearchQuery{Query: "fresh"}), 1, "Search(fresh)")
			require.NoError(t, f.Delete(ctx, "/b.txt"))
			want := []vfs.Change{{Path: "/b.txt", Op: vfs.ChangeWrite}, {Path: "/b.txt", Op: vfs.ChangeDelete}}
			assert.Equal(t, want, changes, "changes")
		})
	}
}

func TestReopenAndResync(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "idx")
	inner := temp.MustNew(fixture)
	f, err := index.Open(ctx, inner, dir, index.Options{})
	require.NoError(t, err)
	st := f.Stats()
	assert.Equal(t, 6, st.Indexed, "first build: %+v", st)
	assert.Equal(t, 0, st.Unchanged, "first build: %+v", st)
	require.NoError(t, f.Close())
	for _, err := range f.Search(ctx, vfs.SearchQuery{Query: "header"}) {
		assert.ErrorIs(t, err, index.ErrClosed, "Search after Close, want ErrClosed")
	}

	// Nothing changed: nothing is read.
	f, err = index.Open(ctx, inner, dir, index.Options{})
	require.NoError(t, err)
	st = f.Stats()
	assert.Equal(t, 0, st.Indexed, "reopen unchanged: %+v", st)
	assert.Equal(t, 7, st.Unchanged, "reopen unchanged: %+v", st)
	assert.Equal(t, 0, st.Removed, "reopen unchanged: %+v", st)
	require.NoError(t, f.Close())

	// Changed while closed: one modified, one new, one deleted.
	must(t, inner.Write(ctx, "/strings/builder.go", []byte("package strings\n// a quokka\n")))
	must(t, inner.Write(ctx, "/new.md", []byte("wombat\n")))
	must(t, inner.Delete(ctx, "/net/http/server.go"))
	f = open(t, inner, dir, index.Options{})
	st = f.Stats()
	assert.Equal(t, 2, st.Indexed, "resync: %+v", st)
	assert.Equal(t, 5, st.Unchanged, "resync: %+v", st)
	assert.Equal(t, 1, st.Removed, "resync: %+v", st)
	assert.Equal(t, 7, st.Files, "resync: %+v", st)
	for q, want := range map[string][]string{
		"quokka":         {"/strings/builder.go"},
		"wombat":         {"/new.md"},
		"efficiently":    nil,
		"listenandserve": nil,
	} {
		assert.Equal(t, want, paths(search(t, f, vfs.SearchQuery{Query: q})), "after resync Search(%q)", q)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	require.NoError(t, err)
}

// countingTree records reads and cancels a context after `after` of them.
type countingTree struct {
	vfs.FileSystem
	reads  chan string
	cancel context.CancelFunc
	after  int
}

func (c *countingTree) Read(ctx context.Context, p string) ([]byte, error) {
	select {
	case c.reads <- p:
	default:
	}
	if c.cancel != nil && len(c.reads) >= c.after {
		c.cancel()
	}
	return c.FileSystem.Read(ctx, p)
}

func TestCancelAndResume(t *testing.T) {
	files := map[string]string{}
	for i := range 600 {
		files[filepath.Join("/d", strings.Repeat("x", i%7), "f"+strconv.Itoa(i)+".txt")] = "word" + strconv.Itoa(i) + " common\n"
	}
	dir := filepath.Join(t.TempDir(), "idx")
	ctx, cancel := context.WithCancel(t.Context())
	tree := &countingTree{FileSystem: temp.MustNew(files), reads: make(chan string, 10000), cancel: cancel, after: 300}
	_, err := index.Open(ctx, tree, dir, index.Options{BatchSize: 50, Parallelism: 2})
	require.ErrorIs(t, err, context.Canceled, "Open with a cancelled build")
	firstReads := len(tree.reads)

	tree2 := &countingTree{FileSystem: tree.FileSystem, reads: make(chan string, 10000)}
	f := open(t, tree2, dir, index.Options{BatchSize: 50})
	st := f.Stats()
	assert.NotZero(t, st.Unchanged, "resumed build: %+v (first run read %d files)", st, firstReads)
	assert.Equal(t, 600, st.Unchanged+st.Indexed, "resumed build: %+v (first run read %d files)", st, firstReads)
	assert.Equal(t, 600, st.Files, "resumed build: %+v (first run read %d files)", st, firstReads)
	assert.Equal(t, st.Indexed, len(tree2.reads), "resumed build read files, indexed %d", st.Indexed)
	// The count, not the 600 results, on failure.
	assert.Equal(t, 600, len(search(t, f, vfs.SearchQuery{Query: "common"})), "Search(common) results")
}

func TestFormatVersionMismatchRebuilds(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "idx")
	inner := temp.MustNew(fixture)
	f, err := index.Open(ctx, inner, dir, index.Options{})
	must(t, err)
	must(t, f.Close())
	must(t, os.WriteFile(filepath.Join(dir, "julyfs-index.json"), []byte(`{"format": 999}`+"\n"), 0o644))
	var logs []string
	f = open(t, inner, dir, index.Options{Log: func(m string) { logs = append(logs, m) }})
	if assert.Len(t, logs, 1, "logs, want one message naming format 999 and the rebuild") {
		assert.Contains(t, logs[0], "format 999", "logs, want one message naming format 999 and the rebuild")
		assert.Contains(t, logs[0], "rebuilding", "logs, want one message naming format 999 and the rebuild")
	}
	st := f.Stats()
	assert.Equal(t, 6, st.Indexed, "rebuild stats: %+v", st)
	assert.Equal(t, 0, st.Unchanged, "rebuild stats: %+v", st)
	assert.Len(t, search(t, f, vfs.SearchQuery{Query: "textproto"}), 1, "Search after rebuild")
}

func TestCorruptIndex(t *testing.T) {
	ctx := t.Context()
	inner := temp.MustNew(fixture)
	for _, tc := range []struct {
		name    string
		corrupt func(t *testing.T, dir string)
	}{
		{"meta", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "julyfs-index.json"), []byte("{garbage"), 0o644))
		}},
		{"bleve meta", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "bleve", "index_meta.json"), []byte("{garbage"), 0o644))
		}},
		{"root bolt", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "bleve", "store", "root.bolt"), []byte(strings.Repeat("garbage", 1000)), 0o600))
		}},
		{"store gone", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, "bleve")))
		}},
		{"segment", func(t *testing.T, dir string) {
			// A huge length where the first document's stored fields
			// start: bleve opens the segment and panics reading them.
			segs, err := filepath.Glob(filepath.Join(dir, "bleve", "store", "*.zap"))
			must(t, err)
			require.NotEmpty(t, segs, "no segment to damage")
			for _, seg := range segs {
				b, err := os.ReadFile(seg)
				must(t, err)
				copy(b, "\xff\xff\x7f")
				must(t, os.WriteFile(seg, b, 0o600))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			f, err := index.Open(ctx, inner, dir, index.Options{})
			must(t, err)
			must(t, f.Close())
			tc.corrupt(t, dir)
			_, err = index.Open(ctx, inner, dir, index.Options{})
			require.ErrorIs(t, err, index.ErrCorrupt, "Open(corrupt), want ErrCorrupt naming --rebuild")
			require.ErrorContains(t, err, "--rebuild", "Open(corrupt), want ErrCorrupt naming --rebuild")
			f = open(t, inner, dir, index.Options{Rebuild: true})
			st := f.Stats()
			assert.Equal(t, 6, st.Indexed, "rebuild stats: %+v", st)
			assert.Len(t, search(t, f, vfs.SearchQuery{Query: "textproto"}), 1, "Search after rebuild")
		})
	}
}

func TestRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("keep me"), 0o644))
	for _, rebuild := range []bool{false, true} {
		_, err := index.Open(t.Context(), temp.MustNew(fixture), dir, index.Options{Rebuild: rebuild})
		assert.ErrorContains(t, err, "not a julyfs index", "Open(foreign dir, rebuild=%v)", rebuild)
	}
	data, err := os.ReadFile(filepath.Join(dir, "precious.txt"))
	assert.NoError(t, err, "foreign file after Open")
	assert.Equal(t, "keep me", string(data), "foreign file after Open")
}

func TestInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	open(t, temp.MustNew(fixture), dir, index.Options{})
	_, err := index.Open(t.Context(), temp.MustNew(fixture), dir, index.Options{})
	assert.ErrorIs(t, err, index.ErrInUse, "second Open")
}

// TestSearchSnippetsInOrder checks that snippets, read in parallel, come
// back with their own hits in score order, that a file deleted behind the
// index's back is left out, and that breaking out early stops the readers.
func TestSearchSnippetsInOrder(t *testing.T) {
	files := map[string][]byte{}
	for i := range 40 {
		// File i mentions the word i+1 times, so scores fall with i.
		body := strings.Repeat("filler line\n", 5) + strings.Repeat("marker "+strconv.Itoa(i)+"\n", 40-i)
		files["/f"+strconv.Itoa(100+i)+".txt"] = []byte(body)
	}
	inner := temp.MustNew(nil)
	for p, b := range files {
		require.NoError(t, inner.Write(t.Context(), p, b))
	}
	f := open(t, inner, "", index.Options{})
	require.NoError(t, inner.Delete(t.Context(), "/f105.txt")) // behind the index's back
	got := search(t, f, vfs.SearchQuery{Query: "marker"})
	require.Len(t, got, 39, "Search(marker), want 39 (40 less the deleted one)")
	for i, r := range got {
		assert.NotEqual(t, "/f105.txt", r.Path, "Search(marker) yielded deleted %s", r.Path)
		if i > 0 {
			assert.LessOrEqual(t, vfs.CompareSearchResults(got[i-1], r), 0, "Search(marker)[%d] = %s out of order after %s", i, r.Path, got[i-1].Path)
		}
		n := strings.TrimSuffix(strings.TrimPrefix(r.Path, "/f1"), ".txt")
		want := "marker " + strings.TrimLeft(n, "0")
		assert.Equal(t, 6, r.LineNumber, "Search(marker)[%d] = %s L%d %q, want L6 %q", i, r.Path, r.LineNumber, r.Snippet, want)
		if !(n == "00" && r.Snippet == "marker 0") {
			assert.Equal(t, want, r.Snippet, "Search(marker)[%d] = %s L%d %q, want L6 %q", i, r.Path, r.LineNumber, r.Snippet, want)
		}
	}
	before := runtime.NumGoroutine()
	for range 20 {
		for _, err := range f.Search(t.Context(), vfs.SearchQuery{Query: "marker"}) {
			require.NoError(t, err)
			break
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	n := runtime.NumGoroutine()
	assert.LessOrEqual(t, n, before+2, "goroutines after 20 early breaks: %d, before %d", n, before)
}
