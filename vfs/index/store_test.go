package index

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	// Only this test links bleve's root package, to check that the store is
	// the index it would write and read; the package itself does not.
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

var storeFixture = map[string]string{
	"/net/http/header.go":      "package http\n\ntype Header map[string][]string\n",
	"/net/textproto/reader.go": "package textproto\n\nfunc (r *Reader) ReadMIMEHeader() {}\n",
	"/docs/notes.md":           "snake_case_name and camelCaseName\n",
}

// TestStoreReadableByBleve: an index this package writes opens with
// bleve's root package (as an older julyfs opened it), with its mapping
// and documents.
func TestStoreReadableByBleve(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "idx")
	f, err := Open(ctx, temp.MustNew(storeFixture), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, bleveDir, storeMetaFile))
	if err != nil {
		t.Fatal(err)
	}
	var meta storeMeta
	if err := json.Unmarshal(raw, &meta); err != nil || meta.Storage != scorch.Name || meta.IndexType != scorch.Name {
		t.Fatalf("%s = %s (%v)", storeMetaFile, raw, err)
	}
	idx, err := bleve.OpenUsing(filepath.Join(dir, bleveDir), storeConfig())
	if err != nil {
		t.Fatalf("bleve.OpenUsing: %v", err)
	}
	defer idx.Close()
	if idx.Mapping().AnalyzerNamed(AnalyzerName) == nil {
		t.Errorf("the stored mapping lacks analyzer %s", AnalyzerName)
	}
	if n, err := idx.DocCount(); err != nil || n != uint64(len(storeFixture)) {
		t.Errorf("DocCount = %d, %v; want %d", n, err, len(storeFixture))
	}
	q := bleve.NewTermQuery("readmimeheader")
	q.SetField(fieldContent)
	res, err := idx.Search(bleve.NewSearchRequest(q))
	if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != "/net/textproto/reader.go" {
		t.Errorf("bleve search = %v, %v", res, err)
	}
}

// TestStoreWrittenByBleve: an index written through bleve's root package,
// as an older julyfs wrote it, opens without a rebuild and reads no file.
func TestStoreWrittenByBleve(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	tree := temp.MustNew(storeFixture)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Without unsafe_batch, so that Batch is on disk when it returns.
	idx, err := bleve.NewUsing(filepath.Join(dir, bleveDir), newMapping(), scorch.Name, scorch.Name, map[string]any{"bolt_timeout": "1s"})
	if err != nil {
		t.Fatal(err)
	}
	old := &FS{opts: Options{}.withDefaults(), analyzer: idx.Mapping().AnalyzerNamed(AnalyzerName)}
	b := idx.NewBatch()
	for p := range storeFixture {
		info, err := tree.Stat(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := tree.Read(ctx, p)
		doc, _ := old.newDocument(p, info, data)
		if err := b.IndexAdvanced(doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, metaFile), []byte(`{"format":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var logs []string
	f, err := Open(ctx, tree, dir, Options{Log: func(m string) { logs = append(logs, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st := f.Stats(); len(logs) > 0 || st.Unchanged != len(storeFixture) || st.Indexed != 0 {
		t.Errorf("Open of a bleve-written index: %v, logs %q", st, logs)
	}
	var got []string
	for r, err := range f.Search(ctx, vfs.SearchQuery{Query: "ReadMIMEHeader"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Path)
	}
	if len(got) == 0 || got[0] != "/net/textproto/reader.go" {
		t.Errorf("Search = %v, want reader.go first", got)
	}
}

// TestSearchRacingClose: a Search that starts as the FS closes fails with
// ErrClosed or succeeds; it never reaches the closed index.
func TestSearchRacingClose(t *testing.T) {
	for range 20 {
		f, err := Open(t.Context(), temp.MustNew(storeFixture), filepath.Join(t.TempDir(), "idx"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 20 {
					if _, err := f.search(t.Context(), []queryTerm{{"header", 1}}, "/", 0); err != nil && !errors.Is(err, ErrClosed) {
						t.Errorf("search: %v", err)
					}
				}
			})
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
}
