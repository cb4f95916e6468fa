package index

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bleveindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// A query is scored term at a time, straight from the postings lists of
// the index's segments, into one accumulator per document, with the
// formula bleve's searchers apply to the query buildQuery describes
// (score_test.go): bleve's classic tf-idf model (per field match: sqrt(tf)
// × the field's length norm × idf × boost × idf × the query norm), a
// term's matches in a file's content and path summed and multiplied by
// their coordination factor (matched / 2), halved by the coordination of
// the term's primary and secondary pairs (a file is one or the other), the
// terms' sums added up and multiplied by the fraction of the query's terms
// the file matches.
//
// bleve evaluates that query document at a time through a tree of
// disjunction searchers, three deep, that allocates, compares and merges a
// match per posting at every level: over a 92k-file tree a query of
// common words ("multipart form file upload") spent 30 ms there, four
// fifths of it in the tree rather than in reading postings. Scoring term
// at a time reads the same postings once, in order, and adds into an
// array; the index's segments are scored in parallel, up to GOMAXPROCS at
// once, each into its own accumulator (a document is in one segment). The
// scores are bleve's, bit for bit while the query has at most 10 terms:
// the terms are added in bleve's order (its disjunction searcher sorts its
// clauses by their number of postings); over 10 terms bleve adds them in
// the order of its heap, which can differ in the last bit.
// TestScoresAsBleve compares them.
//
// This reads the segments of bleve's scorch index (IndexSnapshot.Segments)
// as scorch's own TermFieldReader does: a segment's documents are numbered
// from the sum of the full sizes of the segments before it, and its
// deleted documents are left out of its postings lists.

// leaf is one term looked up in one field: its weights.
type leaf struct {
	idf float64
	// qw is bleve's query weight: boost × idf × query norm.
	qw    float64
	count uint64 // documents holding the term in the field
}

// score is a posting's contribution, as bleve's TermQueryScorer computes
// it with the default (tf-idf) scoring model.
func (l *leaf) score(freq uint64, norm float64) float64 {
	s := math.Sqrt(float64(freq)) * norm * l.idf
	if l.qw != 1.0 {
		s = s * l.qw
	}
	return s
}

// Fields of one query term and their boosts relative to the term's, in
// the order of buildQuery's clauses: a primary file's content and path,
// then a secondary file's.
var termFields = [4]struct {
	field string
	boost float64
}{
	{fieldContent, 1},
	{fieldPath, pathBoost},
	{auxPrefix + fieldContent, auxWeight},
	{auxPrefix + fieldPath, auxWeight * pathBoost},
}

// part is one segment of the snapshot being searched.
type part struct {
	seg    *scorch.SegmentSnapshot
	offset uint64                 // the internal number of its first document
	lists  []segment.PostingsList // per leaf
	scope  []uint64               // a bit per document in the scope; nil: all
}

// accum holds the running score of the documents of a segment, by their
// number in it, and which documents it touched.
type accum struct {
	score   []float64
	matched []uint8 // query terms matched
	docs    []uint64
}

var accums = sync.Pool{New: func() any { return new(accum) }}

// add adds s to document d's score for one more matched term.
func (a *accum) add(d uint64, s float64) {
	if d >= uint64(len(a.score)) {
		n := max(d+1, uint64(2*len(a.score)), 1024)
		a.score = append(a.score, make([]float64, n-uint64(len(a.score)))...)
		a.matched = append(a.matched, make([]uint8, n-uint64(len(a.matched)))...)
	}
	if a.matched[d] == 0 {
		a.docs = append(a.docs, d)
	}
	a.score[d] += s
	a.matched[d]++
}

// reset zeroes what was touched, for the next segment.
func (a *accum) reset() {
	for _, d := range a.docs {
		a.score[d], a.matched[d] = 0, 0
	}
	a.docs = a.docs[:0]
}

// parallelDocs is the number of documents under which an index is scored
// in the calling goroutine alone (a variable for tests).
var parallelDocs uint64 = 16384

// scoreWorkers is the number of goroutines that score an index of docs
// documents in parts segments.
func scoreWorkers(parts int, docs uint64) int {
	if docs < parallelDocs {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), parts))
}

// eachPart calls fn for each part, from workers goroutines (fn is given
// the worker's number, from 0), the largest parts first, and returns the
// first error. A panic in fn (zap panics on some damaged segments) is
// raised again in the caller.
func eachPart(ctx context.Context, parts []*part, workers int, fn func(w int, p *part) error) error {
	if workers <= 1 {
		for _, p := range parts {
			if err := fn(0, p); err != nil {
				return err
			}
		}
		return nil
	}
	order := slices.Clone(parts)
	slices.SortStableFunc(order, func(a, b *part) int { return cmp.Compare(b.seg.FullSize(), a.seg.FullSize()) })
	next := make(chan *part, len(order))
	for _, p := range order {
		next <- p
	}
	close(next)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		panicked any
	)
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := range workers {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					panicked = r
					mu.Unlock()
					cancel()
				}
			}()
			for p := range next {
				if ctx.Err() != nil {
					return
				}
				if err := fn(w, p); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	if firstErr == nil {
		// The workers stop early, without an error, when the caller
		// cancels.
		firstErr = parent.Err()
	}
	return firstErr
}

// scoreTerms scores the documents of r matching terms under scope (a
// clean path, "/" for all) and returns the hits among which the best
// maxResults (0: all) lie by score then path, as topHits does, best
// first.
func scoreTerms(ctx context.Context, r bleveindex.IndexReader, terms []queryTerm, scope string, maxResults int) ([]hit, error) {
	is, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, fmt.Errorf("unexpected index reader %T", r)
	}
	docCount, err := r.DocCount()
	if err != nil || docCount == 0 || len(terms) == 0 {
		return nil, err
	}
	nleaves := len(terms) * len(termFields)
	var (
		parts []*part
		total uint64
	)
	for _, ss := range is.Segments() {
		parts = append(parts, &part{seg: ss, offset: total, lists: make([]segment.PostingsList, nleaves)})
		total += ss.Segment().Count()
	}
	workers := scoreWorkers(len(parts), total)
	// Each leaf's postings list in each segment, and the scope's.
	err = eachPart(ctx, parts, workers, func(_ int, p *part) error {
		for j, tf := range termFields {
			dict, err := p.seg.Segment().Dictionary(tf.field)
			if err != nil {
				return err
			}
			for i, t := range terms {
				if p.lists[4*i+j], err = dict.PostingsList([]byte(t.term), p.seg.Deleted(), nil); err != nil {
					return err
				}
			}
		}
		if scope != "/" {
			var err error
			if p.scope, err = scopeSet(p, scope); err != nil {
				return err
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	// Each leaf's weights, as bleve's TermSearcher computes them.
	leaves := make([]leaf, nleaves)
	for i, t := range terms {
		for j, tf := range termFields {
			l := &leaves[4*i+j]
			for _, p := range parts {
				l.count += p.lists[4*i+j].Count()
			}
			boost := tf.boost * t.boost
			l.idf = 1.0 + math.Log(float64(docCount)/float64(l.count+1.0))
			l.qw = boost * l.idf
		}
	}
	// The order in which bleve adds up weights and scores: its disjunction
	// searcher (up to 10 clauses) sorts its clauses by their number of
	// postings, stably; over 10 it keeps them in query order. (Within a
	// term's pairs, of two clauses, the order does not change a sum.)
	plan := make([]int, len(terms)) // term indexes, in order
	counts := make([]uint64, len(terms))
	for i := range terms {
		plan[i] = i
		for _, l := range leaves[4*i : 4*i+4] {
			counts[i] += l.count
		}
	}
	if len(plan) <= 10 {
		slices.SortStableFunc(plan, func(a, b int) int { return cmp.Compare(counts[a], counts[b]) })
	}
	// The query norm: 1/sqrt of the sum of every leaf's squared weight,
	// summed as bleve's nested disjunctions sum them.
	var sumSq float64
	for _, i := range plan {
		var termSq float64
		for p := range 2 {
			var pairSq float64
			for _, l := range leaves[4*i+2*p : 4*i+2*p+2] {
				pairSq += l.qw * l.qw
			}
			termSq += pairSq
		}
		sumSq += termSq
	}
	norm := 1.0 / math.Sqrt(sumSq)
	for i := range leaves {
		leaves[i].qw *= norm
	}
	coord := make([]float64, len(terms)+1)
	for m := range coord {
		coord[m] = float64(m) / float64(len(terms))
	}

	// Score each segment into an accumulator, and keep its best.
	cols := make([]collector, workers)
	for w := range cols {
		cols[w] = collector{k: maxResults}
	}
	err = eachPart(ctx, parts, workers, func(w int, p *part) error {
		a := accums.Get().(*accum)
		defer func() {
			a.reset()
			accums.Put(a)
		}()
		for _, i := range plan {
			for k := range 2 {
				j := 4*i + 2*k
				if err := scorePair(ctx, a, p, &leaves[j], &leaves[j+1], p.lists[j], p.lists[j+1]); err != nil {
					return err
				}
			}
		}
		c := &cols[w]
		for _, d := range a.docs {
			c.add(a.score[d]*coord[a.matched[d]], p.offset+d)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	all := collector{k: maxResults}
	for _, c := range cols {
		for _, h := range c.hits {
			all.add(h.score, h.iid.Value())
		}
	}
	return all.result(), nil
}

// scorePair adds one query term's matches in a pair of fields (a file's
// content and path) in segment p to a: the two leaves' scores summed and
// multiplied by their coordination factor, then by the primary/secondary
// pair's (1/2). Documents out of p's scope are skipped.
func scorePair(ctx context.Context, a *accum, p *part, x, y *leaf, lx, ly segment.PostingsList) error {
	if lx == nil || ly == nil || lx.Count()+ly.Count() == 0 {
		return nil
	}
	type cursor struct {
		it   segment.PostingsIterator
		doc  uint64
		freq uint64
		norm float64
		ok   bool
	}
	next := func(c *cursor) error {
		pst, err := c.it.Next()
		if err != nil || pst == nil {
			c.ok = false
			return err
		}
		c.doc, c.freq, c.norm, c.ok = pst.Number(), pst.Frequency(), pst.Norm(), true
		return nil
	}
	cx := cursor{it: lx.Iterator(true, true, false, nil)}
	cy := cursor{it: ly.Iterator(true, true, false, nil)}
	if err := next(&cx); err != nil {
		return err
	}
	if err := next(&cy); err != nil {
		return err
	}
	for n := 0; cx.ok || cy.ok; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var (
			d     uint64
			sum   float64
			count int
		)
		if cx.ok && (!cy.ok || cx.doc <= cy.doc) {
			d = cx.doc
			sum += x.score(cx.freq, cx.norm)
			count++
			if cy.ok && cy.doc == cx.doc {
				sum += y.score(cy.freq, cy.norm)
				count++
				if err := next(&cy); err != nil {
					return err
				}
			}
			if err := next(&cx); err != nil {
				return err
			}
		} else {
			d = cy.doc
			sum += y.score(cy.freq, cy.norm)
			count++
			if err := next(&cy); err != nil {
				return err
			}
		}
		if p.scope != nil && (d/64 >= uint64(len(p.scope)) || p.scope[d/64]&(1<<(d%64)) == 0) {
			continue
		}
		pair := sum * (float64(count) / 2)
		a.add(d, pair*(1.0/2))
	}
	return nil
}

// scopeSet returns the documents of p whose scope field holds scope (the
// files under it), a bit per document number. It is empty, not nil, when
// none is.
func scopeSet(p *part, scope string) ([]uint64, error) {
	dict, err := p.seg.Segment().Dictionary(fieldScope)
	if err != nil {
		return nil, err
	}
	pl, err := dict.PostingsList([]byte(scope), p.seg.Deleted(), nil)
	if err != nil {
		return nil, err
	}
	set := make([]uint64, 0, 1)
	it := pl.Iterator(false, false, false, nil)
	for {
		pst, err := it.Next()
		if err != nil {
			return nil, err
		}
		if pst == nil {
			return set, nil
		}
		n := pst.Number()
		for uint64(len(set)) <= n/64 {
			set = append(set, 0)
		}
		set[n/64] |= 1 << (n % 64)
	}
}

// collector keeps the hits among which the best k (0: all) lie: every hit
// scoring at least the k-th best score seen, ties included.
type collector struct {
	k     int
	best  minScores // the k best scores, a min-heap
	hits  []hit
	limit int // prune when this many hits are kept
}

func (c *collector) add(score float64, doc uint64) {
	if c.k > 0 {
		switch {
		case len(c.best) < c.k:
			heap.Push(&c.best, score)
		case score > c.best[0]:
			c.best[0] = score
			heap.Fix(&c.best, 0)
		case score < c.best[0]:
			return
		}
	}
	c.hits = append(c.hits, hit{score: score, iid: bleveindex.NewIndexInternalID(nil, doc)})
	if c.k > 0 && len(c.hits) >= max(c.limit, 4*c.k+64) {
		c.prune()
		c.limit = 2 * len(c.hits) // many ties: do not prune at every hit
	}
}

// prune drops the hits under the k-th best score.
func (c *collector) prune() {
	if c.k > 0 && len(c.best) == c.k {
		c.hits = slices.DeleteFunc(c.hits, func(h hit) bool { return h.score < c.best[0] })
	}
}

// result returns the hits kept, best first.
func (c *collector) result() []hit {
	c.prune()
	slices.SortFunc(c.hits, func(x, y hit) int { return cmp.Compare(y.score, x.score) })
	return c.hits
}

// minScores is a min-heap of scores.
type minScores []float64

func (h minScores) Len() int           { return len(h) }
func (h minScores) Less(i, j int) bool { return h[i] < h[j] }
func (h minScores) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minScores) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *minScores) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
