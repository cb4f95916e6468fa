package index

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, err)
	require.NoError(t, f.Close())
	raw, err := os.ReadFile(filepath.Join(dir, bleveDir, storeMetaFile))
	require.NoError(t, err)
	var meta storeMeta
	require.NoError(t, json.Unmarshal(raw, &meta), "%s = %s", storeMetaFile, raw)
	require.Equal(t, scorch.Name, meta.Storage, "%s = %s", storeMetaFile, raw)
	require.Equal(t, scorch.Name, meta.IndexType, "%s = %s", storeMetaFile, raw)
	idx, err := bleve.OpenUsing(filepath.Join(dir, bleveDir), storeConfig())
	require.NoError(t, err, "bleve.OpenUsing")
	defer idx.Close()
	assert.NotNil(t, idx.Mapping().AnalyzerNamed(AnalyzerName), "the stored mapping lacks analyzer %s", AnalyzerName)
	n, err := idx.DocCount()
	assert.NoError(t, err, "DocCount")
	assert.Equal(t, uint64(len(storeFixture)), n, "DocCount")
	q := bleve.NewTermQuery("readmimeheader")
	q.SetField(fieldContent)
	res, err := idx.Search(bleve.NewSearchRequest(q))
	if assert.NoError(t, err, "bleve search") && assert.Len(t, res.Hits, 1, "bleve search = %v", res) {
		assert.Equal(t, "/net/textproto/reader.go", res.Hits[0].ID, "bleve search = %v", res)
	}
}

// TestStoreWrittenByBleve: an index written through bleve's root package,
// as an older julyfs wrote it, opens without a rebuild and reads no file.
func TestStoreWrittenByBleve(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	tree := temp.MustNew(storeFixture)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	// Without unsafe_batch, so that Batch is on disk when it returns.
	idx, err := bleve.NewUsing(filepath.Join(dir, bleveDir), newMapping(), scorch.Name, scorch.Name, map[string]any{"bolt_timeout": "1s"})
	require.NoError(t, err)
	old := &FS{opts: Options{}.withDefaults(), analyzer: idx.Mapping().AnalyzerNamed(AnalyzerName)}
	b := idx.NewBatch()
	for p := range storeFixture {
		info, err := tree.Stat(ctx, p)
		require.NoError(t, err)
		data, _ := tree.Read(ctx, p)
		doc, _ := old.newDocument(p, info, data)
		require.NoError(t, b.IndexAdvanced(doc))
	}
	require.NoError(t, idx.Batch(b))
	require.NoError(t, idx.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, metaFile), []byte(`{"format":1}`+"\n"), 0o644))

	var logs []string
	f, err := Open(ctx, tree, dir, Options{Log: func(m string) { logs = append(logs, m) }})
	require.NoError(t, err)
	defer f.Close()
	st := f.Stats()
	assert.Empty(t, logs, "Open of a bleve-written index: %v", st)
	assert.Equal(t, len(storeFixture), st.Unchanged, "Open of a bleve-written index: %v, logs %q", st, logs)
	assert.Equal(t, 0, st.Indexed, "Open of a bleve-written index: %v, logs %q", st, logs)
	var got []string
	for r, err := range f.Search(ctx, vfs.SearchQuery{Query: "ReadMIMEHeader"}) {
		require.NoError(t, err)
		got = append(got, r.Path)
	}
	if assert.NotEmpty(t, got, "Search, want reader.go first") {
		assert.Equal(t, "/net/textproto/reader.go", got[0], "Search = %v, want reader.go first", got)
	}
}

// TestSearchRacingClose: a Search that starts as the FS closes fails with
// ErrClosed or succeeds; it never reaches the closed index.
func TestSearchRacingClose(t *testing.T) {
	for range 20 {
		f, err := Open(t.Context(), temp.MustNew(storeFixture), filepath.Join(t.TempDir(), "idx"), Options{})
		require.NoError(t, err)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 20 {
					if _, err := f.search(t.Context(), []queryTerm{{"header", 1}}, "/", 0); err != nil {
						assert.ErrorIs(t, err, ErrClosed, "search")
					}
				}
			})
		}
		require.NoError(t, f.Close())
		wg.Wait()
	}
}
