package index

import (
	"testing"

	"github.com/blevesearch/bleve/v2"
)

func TestZZQuery(t *testing.T) {
	idx, err := bleve.Open("/tmp/jidx-full/bleve")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	f := &FS{analyzer: newCodeAnalyzer()}
	terms := f.queryTerms("ReadMIMEHeader")
	t.Logf("%+v", terms)
	q := buildQuery(terms, "/")
	req := bleve.NewSearchRequestOptions(q, 5, 0, true)
	res, err := idx.Search(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits[:2] {
		t.Logf("  %s %.3f\n%s", h.ID, h.Score, h.Expl)
	}
	res, _ = idx.Search(bleve.NewSearchRequestOptions(bleve.NewDocIDQuery([]string{"/net/textproto/reader.go"}), 1, 0, false))
	req = bleve.NewSearchRequestOptions(bleve.NewConjunctionQuery(q, bleve.NewDocIDQuery([]string{"/net/textproto/reader.go"})), 5, 0, true)
	res, _ = idx.Search(req)
	for _, h := range res.Hits {
		t.Logf("  %s %.3f\n%s", h.ID, h.Score, h.Expl)
	}
}
