package index

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index/relevance"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

// buildQuery returns, as a bleve query, what scoreTerms computes for terms
// scoped to clean scope (the query julyfs ran through bleve's searchers
// before scoreTerms): a disjunction over the terms, whose coordination
// factor favours files matching more of them; per term, a disjunction of
// its matches in a primary file's content and path and in a secondary
// file's (weighed less). Nesting keeps bleve's coordination factor from
// punishing a file whose content alone matches: a file is either primary
// or secondary, so the outer pair's factor is the same for all.
func buildQuery(terms []queryTerm, scope string) query.Query {
	term := func(t, field string, boost float64) query.Query {
		q := query.NewTermQuery(t)
		q.SetField(field)
		q.SetBoost(boost)
		return q
	}
	or := func(qs ...query.Query) *query.DisjunctionQuery { return query.NewDisjunctionQuery(qs) }
	outer := make([]query.Query, 0, len(terms))
	for _, t := range terms {
		b := t.boost
		outer = append(outer, or(
			or(
				term(t.term, fieldContent, b),
				term(t.term, fieldPath, pathBoost*b)),
			or(
				term(t.term, auxPrefix+fieldContent, auxWeight*b),
				term(t.term, auxPrefix+fieldPath, auxWeight*pathBoost*b)),
		))
	}
	var q query.Query = or(outer...)
	if scope != "/" {
		s := query.NewTermQuery(scope)
		s.SetField(fieldScope)
		b := query.NewBooleanQuery(nil, nil, nil)
		b.AddMust(q)
		b.AddFilter(s)
		q = b
	}
	return q
}

// TestScoresAsBleve: scoreTerms finds the documents bleve's searchers find
// for buildQuery's query, with the same scores (bit for bit up to 10
// terms), over an index of several segments with deleted documents, for
// the relevance set's queries and others (identifiers, unknown words, long
// queries, scopes), and the top 10 are the same files in the same order.
func TestScoresAsBleve(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes part of GOROOT/src; skipped with -short")
	}
	queries, err := relevance.Load("../../testdata/relevance/go-src.txt")
	require.NoError(t, err)
	// A copy of a few packages of GOROOT/src: the test writes and deletes
	// files.
	root := t.TempDir()
	for _, d := range []string{"net/http", "net/textproto", "mime/multipart", "strings", "context", "bufio", "strconv"} {
		require.NoError(t, os.CopyFS(filepath.Join(root, d), os.DirFS(filepath.Join(runtime.GOROOT(), "src", d))))
	}
	tree, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { tree.Close() })
	f, err := Open(t.Context(), tree, filepath.Join(t.TempDir(), "idx"), Options{BatchSize: 32})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	// More segments, and documents deleted or replaced in the first ones.
	ctx := t.Context()
	for i := range 5 {
		p := fmt.Sprintf("/zz/scoring/file%d_test.go", i)
		require.NoError(t, f.Write(ctx, p, fmt.Appendf(nil, "package http\n\n// parse the multipart form file upload header %d\nfunc ParseHeader%d() {}\n", i, i)))
	}
	require.NoError(t, f.Write(ctx, "/net/http/header.go", []byte("package http\n\n// Header: replaced, parse http header.\n")))
	require.NoError(t, f.Delete(ctx, "/strings/builder.go"))

	texts := []string{"multipart form file upload", "ParseHTTPHeader", "zzzunknownword header", "read_mime_header",
		"a b c d e f g h i j k l", // one-letter words: no terms
		"http server handler request response writer header body cookie context cancel deadline timeout reader"}
	for _, q := range queries {
		texts = append(texts, q.Text)
	}
	var segs int
	require.NoError(t, f.idx.read(func(r bleveindex.IndexReader) error {
		segs = len(r.(*scorch.IndexSnapshot).Segments())
		return nil
	}))
	require.Greater(t, segs, 1, "segments")
	// Every segment scored by the caller, then in parallel.
	defer func(n uint64) { parallelDocs = n }(parallelDocs)
	for _, parallelDocs = range []uint64{1 << 62, 0} {
		compareScores(t, f, texts)
	}
}

func compareScores(t *testing.T, f *FS, texts []string) {
	ctx := t.Context()
	compared := 0
	for _, text := range texts {
		terms := f.queryTerms(text)
		exact := len(terms) <= 10
		for _, scope := range []string{"/", "/net/http", "/strings", "/zz"} {
			// Both in one snapshot: the merger renumbers documents.
			require.NoError(t, f.idx.read(func(r bleveindex.IndexReader) error {
				want := bleveHits(t, r, f, terms, scope)
				got, err := scoreTerms(ctx, r, terms, scope, 0)
				require.NoError(t, err)
				gotScores := map[uint64]float64{}
				for _, h := range got {
					gotScores[h.iid.Value()] = h.score
				}
				require.Len(t, gotScores, len(want), "%q in %s: documents found", text, scope)
				for id, w := range want {
					g, ok := gotScores[id]
					require.True(t, ok, "%q in %s: document %d not found", text, scope, id)
					if exact {
						assert.Equal(t, w, g, "%q in %s: score of document %d", text, scope, id)
					} else {
						assert.InEpsilon(t, w, g, 1e-12, "%q in %s: score of document %d", text, scope, id)
					}
				}
				compared += len(want)
				// The top 10 (ties at the 10th included), by score then path.
				top10, err := scoreTerms(ctx, r, terms, scope, 10)
				require.NoError(t, err)
				gotTop := topPaths(t, r, top10, 10)
				var all []hit
				for id, score := range want {
					all = append(all, hit{score: score, iid: bleveindex.NewIndexInternalID(nil, id)})
				}
				wantTop := topPaths(t, r, all, 10)
				if exact {
					assert.Equal(t, wantTop, gotTop, "%q in %s: top 10", text, scope)
				} else {
					assert.Equal(t, paths(wantTop), paths(gotTop), "%q in %s: top 10", text, scope)
				}
				return nil
			}))
		}
	}
	assert.Greater(t, compared, 3000, "documents compared")
}

// paths returns the results' paths.
func paths(rs []vfs.SearchResult) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Path)
	}
	return out
}

// topPaths returns the best n of hits by score then path.
func topPaths(t *testing.T, r bleveindex.IndexReader, hits []hit, n int) []vfs.SearchResult {
	t.Helper()
	var out []vfs.SearchResult
	for _, h := range hits {
		p, err := r.ExternalID(h.iid)
		require.NoError(t, err)
		out = append(out, vfs.SearchResult{Path: p, Score: h.score})
	}
	slices.SortFunc(out, vfs.CompareSearchResults)
	return out[:min(n, len(out))]
}

// bleveHits runs buildQuery's query through bleve's searchers and returns
// every hit's score by internal document number.
func bleveHits(t *testing.T, r bleveindex.IndexReader, f *FS, terms []queryTerm, scope string) map[uint64]float64 {
	t.Helper()
	out := map[uint64]float64{}
	if len(terms) == 0 {
		return out
	}
	s, err := buildQuery(terms, scope).Searcher(t.Context(), r, f.mapping, search.SearcherOptions{})
	require.NoError(t, err)
	defer s.Close()
	hits, err := topHits(t.Context(), s, r, 0)
	require.NoError(t, err)
	for _, h := range hits {
		out[h.iid.Value()] = h.score
	}
	return out
}

// TestSearchCancelled: a search whose context is cancelled fails with the
// context's error, whether the segments are scored by the caller or in
// parallel.
func TestSearchCancelled(t *testing.T) {
	f, err := Open(t.Context(), temp.MustNew(storeFixture), filepath.Join(t.TempDir(), "idx"), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	// A segment more (each Write commits one), for the parallel case.
	require.NoError(t, f.Write(t.Context(), "/docs/more.md", []byte("nothing to see\n")))
	require.NoError(t, f.idx.read(func(r bleveindex.IndexReader) error {
		require.Greater(t, len(r.(*scorch.IndexSnapshot).Segments()), 1, "segments")
		return nil
	}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	defer func(n uint64) { parallelDocs = n }(parallelDocs)
	for _, parallelDocs = range []uint64{1 << 62, 0} {
		_, err := f.search(ctx, f.queryTerms("header reader"), "/", 10)
		assert.ErrorIs(t, err, context.Canceled, "search, parallelDocs %d", parallelDocs)
		hits, err := f.search(t.Context(), f.queryTerms("header reader"), "/", 10)
		require.NoError(t, err, "search, parallelDocs %d", parallelDocs)
		assert.Equal(t, []string{"/net/textproto/reader.go", "/net/http/header.go"}, paths(hits), "search, parallelDocs %d", parallelDocs)
	}
}
