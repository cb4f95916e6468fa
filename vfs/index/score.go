package index

import (
	"cmp"
	"container/heap"
	"context"
	"math"
	"slices"
	"sync"

	bleveindex "github.com/blevesearch/bleve_index_api"
)

// A query is scored term at a time, straight from the index's postings
// lists (bleveindex.TermFieldReader), into one accumulator per document,
// with the formula bleve's searchers would apply to the query buildQuery
// describes (query.go's doc): bleve's classic tf-idf model (per field
// match: sqrt(tf) × the field's length norm × idf × boost × idf × the
// query norm), each term's matches in a file's content and path summed
// and multiplied by their coordination factor (matched / 2), halved by
// the coordination of the term's primary and secondary pairs (a file is
// one or the other), the terms' sums added in query order and multiplied
// by the fraction of the query's terms the file matches.
//
// bleve evaluates that query document at a time through a tree of
// disjunction searchers, three deep, that allocates, compares and merges a
// match per posting at every level: over a 92k-file tree a query of
// common words ("multipart form file upload") spent 30 ms there, four
// fifths of it in the tree rather than in reading postings. Scoring term
// at a time reads the same postings once, in order, and adds into an
// array. The scores are bleve's, bit for bit while the query has at most
// 10 terms (bleve adds a longer query's terms in the order of its heap,
// which can differ in the last bit): TestScoresAsBleve compares them.

// leaf is one term looked up in one field: its postings and weights.
type leaf struct {
	tfr bleveindex.TermFieldReader
	idf float64
	// qw is bleve's query weight: boost × idf × query norm.
	qw float64
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

// accum holds the running score of every document of a snapshot, by its
// internal number, and which documents it touched.
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

// reset zeroes what was touched, for the next query.
func (a *accum) reset() {
	for _, d := range a.docs {
		a.score[d], a.matched[d] = 0, 0
	}
	a.docs = a.docs[:0]
}

// scoreTerms scores the documents of r matching terms under scope (a
// clean path, "/" for all) and returns the hits among which the best
// maxResults (0: all) lie by score then path, as topHits does.
func scoreTerms(ctx context.Context, r bleveindex.IndexReader, terms []queryTerm, scope string, maxResults int) (_ []hit, err error) {
	docCount, err := r.DocCount()
	if err != nil || docCount == 0 || len(terms) == 0 {
		return nil, err
	}
	// Every leaf's postings and idf, four per term (termFields).
	leaves := make([]leaf, 0, len(terms)*len(termFields))
	defer func() {
		for _, l := range leaves {
			if cerr := l.tfr.Close(); err == nil {
				err = cerr
			}
		}
	}()
	for _, t := range terms {
		for _, tf := range termFields {
			tfr, err := r.TermFieldReader(ctx, []byte(t.term), tf.field, true, true, false)
			if err != nil {
				return nil, err
			}
			boost := tf.boost * t.boost
			idf := 1.0 + math.Log(float64(docCount)/float64(tfr.Count()+1.0))
			leaves = append(leaves, leaf{tfr: tfr, idf: idf, qw: boost * idf})
		}
	}
	// The order in which bleve adds up weights and scores: its disjunction
	// searcher (up to 10 clauses) sorts its clauses by their number of
	// postings, stably; over 10 it keeps them in query order. (Within a
	// term's pairs, of two clauses, the order does not change a sum.)
	type termPlan struct {
		leaves []leaf
		count  uint64
	}
	plan := make([]termPlan, len(terms))
	for i := range terms {
		l := leaves[4*i : 4*i+4]
		plan[i] = termPlan{l, l[0].tfr.Count() + l[1].tfr.Count() + l[2].tfr.Count() + l[3].tfr.Count()}
	}
	if len(plan) <= 10 {
		slices.SortStableFunc(plan, func(a, b termPlan) int { return cmp.Compare(a.count, b.count) })
	}
	// The query norm: 1/sqrt of the sum of every leaf's squared weight,
	// summed as bleve's nested disjunctions sum them.
	var sumSq float64
	for _, tp := range plan {
		var termSq float64
		for p := range 2 {
			var pairSq float64
			for _, l := range tp.leaves[2*p : 2*p+2] {
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

	var inScope func(uint64) bool
	if scope != "/" {
		set, err := scopeSet(ctx, r, scope)
		if err != nil {
			return nil, err
		}
		inScope = func(d uint64) bool { return d/64 < uint64(len(set)) && set[d/64]&(1<<(d%64)) != 0 }
	}

	a := accums.Get().(*accum)
	defer func() {
		a.reset()
		accums.Put(a)
	}()
	for _, tp := range plan {
		for p := range 2 {
			if err := scorePair(ctx, a, &tp.leaves[2*p], &tp.leaves[2*p+1], inScope); err != nil {
				return nil, err
			}
		}
	}

	// Each document's final score, and the best maxResults with ties.
	coord := make([]float64, len(terms)+1)
	for m := range coord {
		coord[m] = float64(m) / float64(len(terms))
	}
	hits := make([]hit, 0, min(len(a.docs), max(maxResults, 16)))
	if maxResults <= 0 {
		for _, d := range a.docs {
			hits = append(hits, hit{score: a.score[d] * coord[a.matched[d]], iid: bleveindex.NewIndexInternalID(nil, d)})
		}
		return hits, nil
	}
	if len(a.docs) == 0 {
		return nil, nil
	}
	best := make(minScores, 0, maxResults)
	for _, d := range a.docs {
		s := a.score[d] * coord[a.matched[d]]
		switch {
		case len(best) < maxResults:
			heap.Push(&best, s)
		case s > best[0]:
			best[0] = s
			heap.Fix(&best, 0)
		}
	}
	threshold := best[0]
	for _, d := range a.docs {
		if s := a.score[d] * coord[a.matched[d]]; s >= threshold {
			hits = append(hits, hit{score: s, iid: bleveindex.NewIndexInternalID(nil, d)})
		}
	}
	slices.SortFunc(hits, func(x, y hit) int { return cmp.Compare(y.score, x.score) })
	return hits, nil
}

// scorePair adds one query term's matches in a pair of fields (a file's
// content and path) to a: the two leaves' scores summed and multiplied by
// their coordination factor, then by the primary/secondary pair's (1/2).
// Documents for which inScope (when not nil) is false are skipped.
func scorePair(ctx context.Context, a *accum, x, y *leaf, inScope func(uint64) bool) error {
	var dx, dy bleveindex.TermFieldDoc
	next := func(l *leaf, d *bleveindex.TermFieldDoc) (uint64, bool, error) {
		td, err := l.tfr.Next(d.Reset())
		if err != nil || td == nil {
			return 0, false, err
		}
		return td.ID.Value(), true, nil
	}
	nx, okx, err := next(x, &dx)
	if err != nil {
		return err
	}
	ny, oky, err := next(y, &dy)
	if err != nil {
		return err
	}
	for n := 0; okx || oky; n++ {
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
		switch {
		case okx && (!oky || nx <= ny):
			d = nx
			sum += x.score(dx.Freq, dx.Norm)
			count++
			if oky && ny == nx {
				sum += y.score(dy.Freq, dy.Norm)
				count++
				if ny, oky, err = next(y, &dy); err != nil {
					return err
				}
			}
			if nx, okx, err = next(x, &dx); err != nil {
				return err
			}
		default:
			d = ny
			sum += y.score(dy.Freq, dy.Norm)
			count++
			if ny, oky, err = next(y, &dy); err != nil {
				return err
			}
		}
		if inScope != nil && !inScope(d) {
			continue
		}
		pair := sum * (float64(count) / 2)
		a.add(d, pair*(1.0/2))
	}
	return nil
}

// scopeSet returns the set of the internal numbers of the documents whose
// scope field holds scope (the files under it), a bit per number.
func scopeSet(ctx context.Context, r bleveindex.IndexReader, scope string) ([]uint64, error) {
	tfr, err := r.TermFieldReader(ctx, []byte(scope), fieldScope, false, false, false)
	if err != nil {
		return nil, err
	}
	defer tfr.Close()
	var (
		set []uint64
		td  bleveindex.TermFieldDoc
	)
	for {
		d, err := tfr.Next(td.Reset())
		if err != nil {
			return nil, err
		}
		if d == nil {
			return set, nil
		}
		n := d.ID.Value()
		for uint64(len(set)) <= n/64 {
			set = append(set, 0)
		}
		set[n/64] |= 1 << (n % 64)
	}
}

// minScores is a min-heap of scores: the best maxResults seen so far.
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
