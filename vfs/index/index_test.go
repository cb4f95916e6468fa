package index_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return f
}

func search(t *testing.T, fsys vfs.FileSystem, q vfs.SearchQuery) []vfs.SearchResult {
	t.Helper()
	var out []vfs.SearchResult
	for r, err := range fsys.Search(t.Context(), q) {
		if err != nil {
			t.Fatalf("Search(%+v): %v", q, err)
		}
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
		if err != nil {
			t.Fatal(err)
		}
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
	if st != want {
		t.Errorf("Stats() = %+v, want %+v", st, want)
	}

	rs := search(t, f, vfs.SearchQuery{Query: "http header"})
	if len(rs) == 0 || rs[0].Path != "/net/http/header.go" {
		t.Fatalf("Search(http header) = %v, want /net/http/header.go first", rs)
	}
	if !slices.IsSortedFunc(rs, vfs.CompareSearchResults) {
		t.Errorf("Search(http header) not in score, path order: %v", rs)
	}
	for _, r := range rs {
		if r.Path == "/img/logo.png" || r.Path == "/big.txt" || r.Path == "/.git/config" {
			t.Errorf("Search(http header) yielded skipped file %s", r.Path)
		}
	}
	// The best line holds the most query terms: http, header and their
	// concatenation httpheader.
	if got := rs[0]; got.LineNumber != 6 || got.Snippet != "func ParseHTTPHeader(s string) Header { return nil }" {
		t.Errorf("best hit = L%d %q, want L6 with ParseHTTPHeader", got.LineNumber, got.Snippet)
	}

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
		if len(rs) == 0 || rs[0].Path != tc.want {
			t.Errorf("Search(%q) = %v, want %s first", tc.query, paths(rs), tc.want)
		}
	}

	// Scope by path segment, MaxResults.
	rs = search(t, f, vfs.SearchQuery{Query: "header", Path: "/net/http"})
	if got := paths(rs); !slices.Equal(got, []string{"/net/http/header.go"}) {
		t.Errorf("Search(header in /net/http) = %v", got)
	}
	rs = search(t, f, vfs.SearchQuery{Query: "header", Path: "/net/htt"})
	if len(rs) != 0 {
		t.Errorf("Search(header in /net/htt) = %v, want nothing", paths(rs))
	}
	rs = search(t, f, vfs.SearchQuery{Query: "header", Path: "/net/http/header.go"})
	if got := paths(rs); !slices.Equal(got, []string{"/net/http/header.go"}) {
		t.Errorf("Search(header in the file) = %v", got)
	}
	all := search(t, f, vfs.SearchQuery{Query: "header"})
	if len(all) < 2 {
		t.Fatalf("Search(header) = %v, want 2+", paths(all))
	}
	one := search(t, f, vfs.SearchQuery{Query: "header", MaxResults: 1})
	if !slices.Equal(one, all[:1]) {
		t.Errorf("Search(header, max 1) = %v, want %v", one, all[:1])
	}
	if rs := search(t, f, vfs.SearchQuery{Query: "  ,;  "}); len(rs) != 0 {
		t.Errorf("Search of punctuation = %v, want nothing", rs)
	}
}

func TestWritesUpdateIndex(t *testing.T) {
	inner := temp.MustNew(fixture)
	f := open(t, inner, "", index.Options{})
	ctx := t.Context()
	if rs := search(t, f, vfs.SearchQuery{Query: "zebra"}); len(rs) != 0 {
		t.Fatalf("Search(zebra) before write = %v", rs)
	}
	if err := f.Write(ctx, "/zoo/animals.txt", []byte("one\nthe zebra grazes\n")); err != nil {
		t.Fatal(err)
	}
	rs := search(t, f, vfs.SearchQuery{Query: "zebra"})
	if len(rs) != 1 || rs[0].Path != "/zoo/animals.txt" || rs[0].LineNumber != 2 || rs[0].Snippet != "the zebra grazes" {
		t.Fatalf("Search(zebra) after write = %+v", rs)
	}
	// Overwrite: the old words go, the new come.
	if err := f.Write(ctx, "/zoo/animals.txt", []byte("a lion\n")); err != nil {
		t.Fatal(err)
	}
	if rs := search(t, f, vfs.SearchQuery{Query: "zebra"}); len(rs) != 0 {
		t.Errorf("Search(zebra) after overwrite = %v", rs)
	}
	if rs := search(t, f, vfs.SearchQuery{Query: "lion"}); len(rs) != 1 {
		t.Errorf("Search(lion) after overwrite = %v", rs)
	}
	// WriteIf: through the fallback (temp has a ConditionalWriter, so use
	// its etag).
	info, _ := f.Stat(ctx, "/zoo/animals.txt")
	if _, err := f.WriteIf(ctx, "/zoo/animals.txt", []byte("a tiger\n"), vfs.Precondition{IfMatch: "nope"}); !errors.Is(err, vfs.ErrConflict) {
		t.Errorf("WriteIf(stale etag) = %v, want conflict", err)
	}
	if _, err := f.WriteIf(ctx, "/zoo/animals.txt", []byte("a tiger\n"), vfs.Precondition{IfMatch: info.ETag}); err != nil {
		t.Fatal(err)
	}
	if rs := search(t, f, vfs.SearchQuery{Query: "tiger"}); len(rs) != 1 {
		t.Errorf("Search(tiger) after WriteIf = %v", rs)
	}
	if err := f.Delete(ctx, "/zoo/animals.txt"); err != nil {
		t.Fatal(err)
	}
	if rs := search(t, f, vfs.SearchQuery{Query: "tiger"}); len(rs) != 0 {
		t.Errorf("Search(tiger) after delete = %v", rs)
	}
	if err := f.Delete(ctx, "/zoo/animals.txt"); !errors.Is(err, vfs.ErrNotFound) || err.Error() != "not found: /zoo/animals.txt" {
		t.Errorf("Delete(missing) = %v", err)
	}
	// A binary write replaces indexed text with nothing searchable.
	if err := f.Write(ctx, "/docs/notes.md", []byte("\x00\x01snake")); err != nil {
		t.Fatal(err)
	}
	if rs := search(t, f, vfs.SearchQuery{Query: "snake"}); len(rs) != 0 {
		t.Errorf("Search(snake) after binary overwrite = %v", rs)
	}
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
			if n, err := f.ReadAt(ctx, "/a.txt", buf, 6); n != 5 || err != nil || string(buf) != "world" {
				t.Errorf("ReadAt = %d, %v, %q", n, err, buf)
			}
			etag, err := f.WriteIf(ctx, "/b.txt", []byte("fresh words"), vfs.Precondition{IfNoneMatch: true})
			if err != nil || etag == "" {
				t.Fatalf("WriteIf(create) = %q, %v", etag, err)
			}
			if _, err := f.WriteIf(ctx, "/b.txt", []byte("x"), vfs.Precondition{IfNoneMatch: true}); !errors.Is(err, vfs.ErrConflict) {
				t.Errorf("WriteIf(create existing) = %v, want conflict", err)
			}
			if rs := search(t, f, vfs.SearchQuery{Query: "fresh"}); len(rs) != 1 {
				t.Errorf("Search(fresh) = %v", rs)
			}
			if err := f.Delete(ctx, "/b.txt"); err != nil {
				t.Fatal(err)
			}
			want := []vfs.Change{{Path: "/b.txt", Op: vfs.ChangeWrite}, {Path: "/b.txt", Op: vfs.ChangeDelete}}
			if !slices.Equal(changes, want) {
				t.Errorf("changes = %v, want %v", changes, want)
			}
		})
	}
}

func TestReopenAndResync(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "idx")
	inner := temp.MustNew(fixture)
	f, err := index.Open(ctx, inner, dir, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Indexed != 6 || st.Unchanged != 0 {
		t.Errorf("first build: %+v", st)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, err := range f.Search(ctx, vfs.SearchQuery{Query: "header"}) {
		if !errors.Is(err, index.ErrClosed) {
			t.Errorf("Search after Close: %v, want ErrClosed", err)
		}
	}

	// Nothing changed: nothing is read.
	f, err = index.Open(ctx, inner, dir, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Indexed != 0 || st.Unchanged != 7 || st.Removed != 0 {
		t.Errorf("reopen unchanged: %+v", st)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// Changed while closed: one modified, one new, one deleted.
	must(t, inner.Write(ctx, "/strings/builder.go", []byte("package strings\n// a quokka\n")))
	must(t, inner.Write(ctx, "/new.md", []byte("wombat\n")))
	must(t, inner.Delete(ctx, "/net/http/server.go"))
	f = open(t, inner, dir, index.Options{})
	if st := f.Stats(); st.Indexed != 2 || st.Unchanged != 5 || st.Removed != 1 || st.Files != 7 {
		t.Errorf("resync: %+v", st)
	}
	for q, want := range map[string][]string{
		"quokka":         {"/strings/builder.go"},
		"wombat":         {"/new.md"},
		"efficiently":    nil,
		"listenandserve": nil,
	} {
		if got := paths(search(t, f, vfs.SearchQuery{Query: q})); !slices.Equal(got, want) {
			t.Errorf("after resync Search(%q) = %v, want %v", q, got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
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
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Open with a cancelled build = %v, want context.Canceled", err)
	}
	firstReads := len(tree.reads)

	tree2 := &countingTree{FileSystem: tree.FileSystem, reads: make(chan string, 10000)}
	f := open(t, tree2, dir, index.Options{BatchSize: 50})
	st := f.Stats()
	if st.Unchanged == 0 || st.Unchanged+st.Indexed != 600 || st.Files != 600 {
		t.Errorf("resumed build: %+v (first run read %d files)", st, firstReads)
	}
	if len(tree2.reads) != st.Indexed {
		t.Errorf("resumed build read %d files, indexed %d", len(tree2.reads), st.Indexed)
	}
	if rs := search(t, f, vfs.SearchQuery{Query: "common"}); len(rs) != 600 {
		t.Errorf("Search(common) = %d results, want 600", len(rs))
	}
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
	if len(logs) != 1 || !strings.Contains(logs[0], "format 999") || !strings.Contains(logs[0], "rebuilding") {
		t.Errorf("logs = %q, want one message naming format 999 and the rebuild", logs)
	}
	if st := f.Stats(); st.Indexed != 6 || st.Unchanged != 0 {
		t.Errorf("rebuild stats: %+v", st)
	}
	if rs := search(t, f, vfs.SearchQuery{Query: "textproto"}); len(rs) != 1 {
		t.Errorf("Search after rebuild = %v", rs)
	}
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
			if len(segs) == 0 {
				t.Fatal("no segment to damage")
			}
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
			if !errors.Is(err, index.ErrCorrupt) || !strings.Contains(err.Error(), "--rebuild") {
				t.Fatalf("Open(corrupt) = %v, want ErrCorrupt naming --rebuild", err)
			}
			f = open(t, inner, dir, index.Options{Rebuild: true})
			if st := f.Stats(); st.Indexed != 6 {
				t.Errorf("rebuild stats: %+v", st)
			}
			if rs := search(t, f, vfs.SearchQuery{Query: "textproto"}); len(rs) != 1 {
				t.Errorf("Search after rebuild = %v", rs)
			}
		})
	}
}

func TestRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("keep me"), 0o644))
	for _, rebuild := range []bool{false, true} {
		_, err := index.Open(t.Context(), temp.MustNew(fixture), dir, index.Options{Rebuild: rebuild})
		if err == nil || !strings.Contains(err.Error(), "not a julyfs index") {
			t.Errorf("Open(foreign dir, rebuild=%v) = %v", rebuild, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "precious.txt")); err != nil || string(data) != "keep me" {
		t.Errorf("foreign file after Open: %q, %v", data, err)
	}
}

func TestInUse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx")
	open(t, temp.MustNew(fixture), dir, index.Options{})
	_, err := index.Open(t.Context(), temp.MustNew(fixture), dir, index.Options{})
	if !errors.Is(err, index.ErrInUse) {
		t.Errorf("second Open = %v, want ErrInUse", err)
	}
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
		if err := inner.Write(t.Context(), p, b); err != nil {
			t.Fatal(err)
		}
	}
	f := open(t, inner, "", index.Options{})
	if err := inner.Delete(t.Context(), "/f105.txt"); err != nil { // behind the index's back
		t.Fatal(err)
	}
	got := search(t, f, vfs.SearchQuery{Query: "marker"})
	if len(got) != 39 {
		t.Fatalf("Search(marker) = %d results, want 39 (40 less the deleted one)", len(got))
	}
	for i, r := range got {
		if r.Path == "/f105.txt" {
			t.Errorf("Search(marker) yielded deleted %s", r.Path)
		}
		if i > 0 && vfs.CompareSearchResults(got[i-1], r) > 0 {
			t.Errorf("Search(marker)[%d] = %s out of order after %s", i, r.Path, got[i-1].Path)
		}
		n := strings.TrimSuffix(strings.TrimPrefix(r.Path, "/f1"), ".txt")
		if want := "marker " + strings.TrimLeft(n, "0"); r.LineNumber != 6 || (r.Snippet != want && !(n == "00" && r.Snippet == "marker 0")) {
			t.Errorf("Search(marker)[%d] = %s L%d %q, want L6 %q", i, r.Path, r.LineNumber, r.Snippet, want)
		}
	}
	before := runtime.NumGoroutine()
	for range 20 {
		for _, err := range f.Search(t.Context(), vfs.SearchQuery{Query: "marker"}) {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Errorf("goroutines after 20 early breaks: %d, before %d", n, before)
	}
}
