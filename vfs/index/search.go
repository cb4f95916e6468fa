package index

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"iter"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/search"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/julyfs/julyfs/vfs"
)

// Weights of query terms. A term found in a file's path weighs pathBoost
// times one found in its content: a Go programmer asking for "http header"
// wants net/http/header.go first.
const (
	pathBoost = 2
	// partBoost weighs a part of a compound identifier of the query (the
	// whole identifier weighs bigramBoost).
	partBoost = 0.5
	// bigramBoost weighs the concatenation of two adjacent query words.
	bigramBoost = 3.0
	// auxWeight scales the matches in a secondary file (tests, test data,
	// vendored code).
	auxWeight = 0.2
	// maxQueryTerms bounds the terms of one query (whole words and parts).
	maxQueryTerms = 32
	// snippetLen bounds a snippet, in bytes.
	snippetLen = 160
)

// A query term: what to look up and how much a match weighs.
type queryTerm struct {
	term  string
	boost float64
}

// queryTerms analyzes text with the code analyzer and returns its distinct
// terms in order of first appearance, followed by the concatenation of each
// two adjacent words ("wait group" also looks for waitgroup, which matches
// the identifier WaitGroup whole). Compound identifiers and concatenations
// weigh more than single words.
func (f *FS) queryTerms(text string) []queryTerm {
	var (
		terms []queryTerm
		words []string
		pos   = -1
	)
	add := func(t string, boost float64) {
		if len(terms) < maxQueryTerms && !slices.ContainsFunc(terms, func(q queryTerm) bool { return q.term == t }) {
			terms = append(terms, queryTerm{t, boost})
		}
	}
	toks := f.analyzer.Analyze([]byte(text))
	for i, tok := range toks {
		t := string(tok.Term)
		boost := 1.0
		if tok.Position == pos {
			boost = partBoost // a part of the identifier before it
		} else {
			pos = tok.Position
			words = append(words, t)
			if i+1 < len(toks) && toks[i+1].Position == pos {
				// An identifier of several parts, whole: as telling as a
				// concatenation of words.
				boost = bigramBoost
			}
		}
		add(t, boost)
	}
	for i := 1; i < len(words); i++ {
		if w := words[i-1] + words[i]; len(w) <= maxTermLen {
			add(w, bigramBoost)
		}
	}
	return terms
}

// Search yields the files matching q.Query under q.Path, by score
// descending then path ascending, at most q.MaxResults of them (0: all).
// Each result carries the line number and text of the file's line that
// matches the most query terms (the first such line); a file matched only
// by its path has LineNumber 0 and no snippet. Snippets are computed as
// results are consumed, by reading the file through the wrapped tree; a
// file that vanished from the tree since it was indexed is left out.
func (f *FS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		if f.isClosed() {
			yield(vfs.SearchResult{}, ErrClosed)
			return
		}
		if f.remote != nil {
			for r, err := range f.remote.search(ctx, q) {
				if !yield(r, err) || err != nil {
					return
				}
			}
			return
		}
		terms := f.queryTerms(q.Query)
		if len(terms) == 0 {
			return
		}
		hits, err := f.search(ctx, terms, vfs.Clean(q.Path), q.MaxResults)
		if err != nil {
			yield(vfs.SearchResult{}, err)
			return
		}
		for h, err := range f.withSnippets(ctx, hits, terms) {
			if !yield(h, err) || err != nil {
				return
			}
		}
	}
}

// withSnippets fills in each hit's line number and snippet, reading up to
// GOMAXPROCS files at once and a bounded window ahead of the consumer, and
// yields the hits in their order. A file that vanished since it was
// indexed is left out. Breaking out of the loop stops the readers.
func (f *FS) withSnippets(ctx context.Context, hits []vfs.SearchResult, terms []queryTerm) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type job struct {
			i    int
			done chan struct{}
			gone bool
			err  error
		}
		workers := min(runtime.GOMAXPROCS(0), len(hits))
		window := make(chan *job, 2*workers) // in hit order, for the consumer
		work := make(chan *job)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range work {
					data, err := f.inner.Read(ctx, hits[j.i].Path)
					switch {
					case vfs.KindOf(err) == vfs.KindNotFound:
						j.gone = true
					case err != nil:
						j.err = err
					default:
						hits[j.i].LineNumber, hits[j.i].Snippet = bestLine(data, terms)
					}
					close(j.done)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(window)
			defer close(work)
			for i := range hits {
				j := &job{i: i, done: make(chan struct{})}
				select {
				case window <- j:
				case <-ctx.Done():
					return
				}
				select {
				case work <- j:
				case <-ctx.Done():
					j.err = ctx.Err()
					close(j.done)
					return
				}
			}
		}()
		defer wg.Wait()
		defer cancel()
		for j := range window {
			<-j.done
			if j.err != nil {
				yield(vfs.SearchResult{}, j.err)
				return
			}
			if !j.gone && !yield(hits[j.i], nil) {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(vfs.SearchResult{}, err)
		}
	}
}

// search runs the query and returns its hits, without snippets.
func (f *FS) search(ctx context.Context, terms []queryTerm, scope string, maxResults int) (_ []vfs.SearchResult, err error) {
	defer func() {
		// bleve (zap) panics on some damaged segments instead of
		// returning an error.
		if r := recover(); r != nil {
			err = corrupt(f.dir, fmt.Errorf("unreadable segment: %v", r))
			return
		}
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			} else {
				err = fmt.Errorf("index: search: %w", err)
			}
		}
	}()
	var out []vfs.SearchResult
	err = f.idx.read(func(r bleveindex.IndexReader) (err error) {
		cands, err := scoreTerms(ctx, r, terms, scope, maxResults)
		if err != nil {
			return err
		}
		out = make([]vfs.SearchResult, 0, len(cands))
		for _, c := range cands {
			id, err := r.ExternalID(c.iid)
			if err != nil {
				return err
			}
			out = append(out, vfs.SearchResult{Path: id, Score: c.score})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, vfs.CompareSearchResults)
	if maxResults > 0 && len(out) > maxResults {
		out = out[:maxResults]
	}
	return out, nil
}

// hit is a document matched, by its index-internal id.
type hit struct {
	score float64
	iid   bleveindex.IndexInternalID
}

// topHits runs the searcher and returns the hits among which the best
// maxResults (0: all) lie by score then path: every hit scoring at least
// the maxResults-th best score, ties included, so the caller can order
// them by path. It does not look up the paths of the hits it drops:
// bleve's collector, asked to sort by score then id, looks up the id of
// every hit, which dominated a query over a large index.
func topHits(ctx context.Context, s search.Searcher, r bleveindex.IndexReader, maxResults int) ([]hit, error) {
	sctx := &search.SearchContext{
		DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0),
		IndexReader:       r,
	}
	var hits []hit
	threshold := math.Inf(-1)
	prune := func() {
		if maxResults <= 0 || len(hits) <= maxResults {
			return
		}
		slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
		threshold = hits[maxResults-1].score
		n := maxResults
		for n < len(hits) && hits[n].score >= threshold {
			n++
		}
		hits = hits[:n]
	}
	for i := 0; ; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		dm, err := s.Next(sctx)
		if err != nil {
			return nil, err
		}
		if dm == nil {
			break
		}
		if dm.Score >= threshold {
			hits = append(hits, hit{score: dm.Score, iid: slices.Clone(dm.IndexInternalID)})
			if maxResults > 0 && len(hits) >= 4*maxResults+64 {
				prune()
			}
		}
		sctx.DocumentMatchPool.Put(dm)
	}
	prune()
	return hits, nil
}

// bestLine returns the 1-based number and trimmed text of the first line of
// data containing the most distinct terms (case-insensitively), or 0 and ""
// when no line contains any.
func bestLine(data []byte, terms []queryTerm) (int, string) {
	if len(data) == 0 || vfs.IsBinary(data) {
		return 0, ""
	}
	lower := appendLower(make([]byte, 0, len(data)), data)
	if len(lower) != len(data) {
		// Lower-casing changed byte offsets (rare non-ASCII case folding):
		// match on the original bytes instead.
		lower = data
	}
	// masks[start] is the bitmask of the terms on the line starting at
	// byte offset start. Line numbers are counted only for the best line.
	masks := map[int]uint64{}
	for i, t := range terms {
		tb := []byte(t.term)
		for off := 0; off < len(lower); {
			j := bytes.Index(lower[off:], tb)
			if j < 0 {
				break
			}
			at := off + j
			start := bytes.LastIndexByte(lower[:at], '\n') + 1
			masks[start] |= 1 << uint(i)
			end := bytes.IndexByte(lower[at:], '\n')
			if end < 0 {
				break
			}
			off = at + end + 1 // next line: one hit per line and term
		}
	}
	best, bestN := -1, 0
	for start, m := range masks {
		n := popcount(m)
		if n > bestN || n == bestN && start < best {
			best, bestN = start, n
		}
	}
	if best < 0 {
		return 0, ""
	}
	end := len(data)
	if i := bytes.IndexByte(data[best:], '\n'); i >= 0 {
		end = best + i
	}
	line := data[best:end]
	lline := lower[best:end]
	first := len(line)
	for _, t := range terms {
		if j := bytes.Index(lline, []byte(t.term)); j >= 0 && j < first {
			first = j
		}
	}
	return bytes.Count(data[:best], []byte{'\n'}) + 1, snippet(line, first)
}

func popcount(m uint64) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// snippet trims line to at most snippetLen bytes of valid UTF-8 around
// byte offset at.
func snippet(line []byte, at int) string {
	line = bytes.TrimRight(line, "\r")
	lead := len(line) - len(bytes.TrimLeft(line, " \t"))
	line = bytes.TrimSpace(line)
	at = max(0, at-lead)
	if len(line) <= snippetLen {
		return strings.ToValidUTF8(string(line), "\uFFFD")
	}
	from := max(0, min(at-snippetLen/4, len(line)-snippetLen))
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	to := min(len(line), from+snippetLen)
	for to < len(line) && !utf8.RuneStart(line[to]) {
		to--
	}
	s := strings.ToValidUTF8(string(line[from:to]), "\uFFFD")
	if from > 0 {
		s = "…" + s
	}
	if to < len(line) {
		s += "…"
	}
	return s
}
