// Package relevance loads the relevance sets under testdata/relevance and
// scores a tree's Search against them (recall@k and mean reciprocal rank),
// for vfs/index's tests and bench/index.
package relevance

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// Query is one query of a set and the files expected among its top
// results, as paths relative to the corpus root (no leading slash).
type Query struct {
	Text string
	Want []string
}

// Load parses a relevance file: a query on a line of its own starting in
// column 0, the expected files on the indented lines under it; blank lines
// and lines starting with '#' are ignored.
func Load(path string) ([]Query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []Query
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case line[0] == ' ' || line[0] == '\t':
			if len(qs) == 0 {
				return nil, fmt.Errorf("%s:%d: expected file before any query", path, n)
			}
			qs[len(qs)-1].Want = append(qs[len(qs)-1].Want, trimmed)
		default:
			qs = append(qs, Query{Text: trimmed})
		}
	}
	for _, q := range qs {
		if len(q.Want) == 0 {
			return nil, fmt.Errorf("%s: query %q lists no expected file", path, q.Text)
		}
	}
	return qs, sc.Err()
}

// Dirs returns the top-level directories (first two segments for a path
// with three or more) holding the expected files of qs: a subset of the
// corpus that is enough to evaluate qs.
func Dirs(qs []Query) []string {
	var dirs []string
	for _, q := range qs {
		for _, w := range q.Want {
			segs := strings.Split(w, "/")
			d := segs[0]
			if len(segs) > 2 {
				d = segs[0] + "/" + segs[1]
			}
			if !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	slices.Sort(dirs)
	return dirs
}

// Result is the outcome of one query.
type Result struct {
	Query   Query
	Got     []string       // the top k paths, relative to the corpus root
	Ranks   map[string]int // 1-based rank of each expected file found
	Latency time.Duration  // time to drain the Search stream
	Recall  float64        // found / expected
	RR      float64        // reciprocal rank of the first expected file
}

// Report aggregates a run.
type Report struct {
	K       int
	Results []Result
	Recall  float64 // mean recall@K
	MRR     float64 // mean reciprocal rank (within the top K)
}

// Evaluate runs every query of qs against fsys with MaxResults k; the
// corpus is the tree under root (expected files are relative to it).
func Evaluate(ctx context.Context, fsys vfs.FileSystem, root string, qs []Query, k int) (Report, error) {
	rep := Report{K: k}
	for _, q := range qs {
		r := Result{Query: q, Ranks: map[string]int{}}
		start := time.Now()
		for hit, err := range fsys.Search(ctx, vfs.SearchQuery{Query: q.Text, Path: root, MaxResults: k}) {
			if err != nil {
				return rep, fmt.Errorf("search %q: %w", q.Text, err)
			}
			rel, _ := vfs.Rel(hit.Path, root)
			r.Got = append(r.Got, rel)
		}
		r.Latency = time.Since(start)
		for _, w := range q.Want {
			if i := slices.Index(r.Got, w); i >= 0 {
				r.Ranks[w] = i + 1
				if rr := 1 / float64(i+1); rr > r.RR {
					r.RR = rr
				}
			}
		}
		r.Recall = float64(len(r.Ranks)) / float64(len(q.Want))
		rep.Recall += r.Recall
		rep.MRR += r.RR
		rep.Results = append(rep.Results, r)
	}
	if n := len(qs); n > 0 {
		rep.Recall /= float64(n)
		rep.MRR /= float64(n)
	}
	return rep, nil
}

// String renders the report: one line per query that missed an expected
// file or ranked it below the first place, then the totals.
func (rep Report) String() string {
	var b strings.Builder
	for _, r := range rep.Results {
		if r.Recall == 1 && r.RR == 1 {
			continue
		}
		fmt.Fprintf(&b, "%-32q recall %.2f rr %.2f want %v ranks %v top %v\n", r.Query.Text, r.Recall, r.RR, r.Query.Want, r.Ranks, head(r.Got, 3))
	}
	fmt.Fprintf(&b, "%d queries: recall@%d %.3f, MRR %.3f", len(rep.Results), rep.K, rep.Recall, rep.MRR)
	return b.String()
}

func head(s []string, n int) []string { return s[:min(n, len(s))] }
