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
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"

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

// planSegment is a segment of live documents for mergeplan.Plan.
type planSegment struct{ id, size int64 }

func (s planSegment) Id() uint64          { return uint64(s.id) }
func (s planSegment) FullSize() int64     { return s.size }
func (s planSegment) LiveSize() int64     { return s.size }
func (s planSegment) HasVector() bool     { return false }
func (s planSegment) FileSize() int64     { return 1000 * s.size }
func (s planSegment) LiveFileSize() int64 { return 1000 * s.size }

// TestFinalMergePlan: the merge at the end of a large sync takes the
// small segments the build's tiers left (into as few merges as fit), and
// leaves the segments of 1,800 documents and more as they are.
func TestFinalMergePlan(t *testing.T) {
	sizes := []int64{15781, 15106, 1571, 1688, 2048, 1995, 3584, 256, 256, 256, 256, 256, 256, 256, 256, 256, 213, 15, 900}
	var segs []mergeplan.Segment
	for i, n := range sizes {
		segs = append(segs, planSegment{int64(i), n})
	}
	o := finalMergePlan()
	plan, err := mergeplan.Plan(segs, &o)
	require.NoError(t, err)
	require.NotNil(t, plan)
	merged := map[int64]bool{}
	for _, task := range plan.Tasks {
		assert.Greater(t, len(task.Segments), 1, "a merge of one segment")
		var docs int64
		for _, s := range task.Segments {
			assert.False(t, merged[s.(planSegment).id], "segment %d in two merges", s.Id())
			merged[s.(planSegment).id] = true
			docs += s.LiveSize()
		}
		assert.Less(t, docs, int64(2*finalMergeBelow), "documents in one merge")
	}
	for i, n := range sizes {
		assert.Equal(t, n < finalMergeBelow, merged[int64(i)], "segment %d of %d documents", i, n)
	}
	assert.Len(t, plan.Tasks, 2, "merges")

	// Nothing small: nothing to merge.
	plan, err = mergeplan.Plan([]mergeplan.Segment{planSegment{1, 15000}, planSegment{2, 2048}, planSegment{3, 1900}}, &o)
	require.NoError(t, err)
	if plan != nil {
		assert.Empty(t, plan.Tasks)
	}
}
