package vfs

import (
	"bytes"
	"context"
	"iter"
	"regexp"
	"regexp/syntax"
	"runtime"
	"strings"
	"sync"
)

// GrepMatcher finds the lines of a buffer that match a grep pattern. It
// never runs the regexp once per line: a literal every match must contain
// (found with regexp/syntax) is located with bytes.Index, or, for a
// literal-free pattern, the regexp runs over the whole remaining buffer;
// only the line around a candidate is then checked.
type GrepMatcher struct {
	re   *regexp.Regexp
	lits [][]byte // one of these occurs in every matching line; none: no prefilter
	fold bool     // lits are lower-case ASCII and must be searched case-insensitively
}

// CompileGrep compiles a grep pattern (Go RE2 syntax, matched per line).
// A pattern that does not compile fails with "invalid grep pattern: <pattern>".
func CompileGrep(pattern string, caseInsensitive bool) (*GrepMatcher, error) {
	flags := "(?m)"
	if caseInsensitive {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		return nil, InvalidGrepPattern(pattern, err)
	}
	m := &GrepMatcher{re: re}
	parseFlags := syntax.Perl
	if caseInsensitive {
		parseFlags |= syntax.FoldCase
	}
	if ast, err := syntax.Parse(pattern, parseFlags); err == nil {
		lits, fold := requiredLiterals(ast.Simplify())
		if len(lits) > 0 && len(lits) <= 8 {
			for _, l := range lits {
				if fold {
					if !isASCII(l) {
						lits = nil
						break
					}
					l = strings.ToLower(l)
				}
				m.lits = append(m.lits, []byte(l))
			}
			m.fold = fold
		}
	}
	return m, nil
}

// requiredLiterals returns a set of strings one of which occurs in every
// match of re, or nil when it cannot tell. fold reports that some literal
// is case-folded.
func requiredLiterals(re *syntax.Regexp) (lits []string, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}, re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literals with the same folding make one longer literal;
		// of the candidates, keep the set whose shortest member is longest.
		var best []string
		bestFold := false
		score := func(ls []string) int {
			min := -1
			for _, l := range ls {
				if min < 0 || len(l) < min {
					min = len(l)
				}
			}
			return min
		}
		var run strings.Builder
		runFold := false
		flush := func() {
			if run.Len() > 0 {
				cand := []string{run.String()}
				if score(cand) > score(best) {
					best, bestFold = cand, runFold
				}
				run.Reset()
			}
		}
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral {
				f := sub.Flags&syntax.FoldCase != 0
				if run.Len() > 0 && f != runFold {
					flush()
				}
				runFold = f
				run.WriteString(string(sub.Rune))
				continue
			}
			flush()
			if ls, f := requiredLiterals(sub); len(ls) > 0 && score(ls) > score(best) {
				best, bestFold = ls, f
			}
		}
		flush()
		return best, bestFold
	case syntax.OpAlternate:
		var all []string
		anyFold := false
		for _, sub := range re.Sub {
			ls, f := requiredLiterals(sub)
			if len(ls) == 0 {
				return nil, false
			}
			all = append(all, ls...)
			anyFold = anyFold || f
		}
		return all, anyFold
	}
	return nil, false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// MatchLine reports whether one line (without its terminator) matches.
func (m *GrepMatcher) MatchLine(line []byte) bool { return m.re.Match(line) }

// Scan calls fn for each matching line of data in order, with its 1-based
// line number and the line without its "\n" (a trailing "\r" is kept).
// It stops when fn returns false.
func (m *GrepMatcher) Scan(data []byte, fn func(lineNumber int, line []byte) bool) {
	var lower []byte
	if m.fold {
		lower = toLowerASCII(data)
	}
	next := make([]int, len(m.lits)) // cached next occurrence per literal
	for i := range next {
		next[i] = -2
	}
	lineNo, counted := 1, 0
	pos := 0
	for pos <= len(data) {
		var cand int
		if len(m.lits) > 0 {
			hay := data
			if m.fold {
				hay = lower
			}
			cand = -1
			for i, l := range m.lits {
				if next[i] == -1 {
					continue
				}
				if next[i] < pos {
					j := bytes.Index(hay[pos:], l)
					if j < 0 {
						next[i] = -1
						continue
					}
					next[i] = pos + j
				}
				if cand < 0 || next[i] < cand {
					cand = next[i]
				}
			}
			if cand < 0 {
				return
			}
		} else {
			loc := m.re.FindIndex(data[pos:])
			if loc == nil {
				return
			}
			cand = pos + loc[0]
		}
		start := bytes.LastIndexByte(data[:cand], '\n') + 1
		if start < pos {
			start = pos
		}
		end := bytes.IndexByte(data[cand:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += cand
		}
		line := data[start:end]
		if m.re.Match(line) {
			lineNo += bytes.Count(data[counted:start], []byte{'\n'})
			counted = start
			if !fn(lineNo, line) {
				return
			}
		}
		pos = end + 1
	}
}

func toLowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// IsBinary reports whether data looks binary: a NUL byte in its first 8000
// bytes, the heuristic of git and ripgrep. Grep skips binary files.
func IsBinary(data []byte) bool {
	n := min(len(data), 8000)
	return bytes.IndexByte(data[:n], 0) >= 0
}

// GrepFilter is a compiled GrepQuery.Glob: a slash-free pattern matches the
// basename at any depth, a pattern with a slash matches the path relative to
// the grep scope.
type GrepFilter struct {
	p     *Pattern
	base  bool
	scope string
}

// CompileGrepFilter compiles glob for a grep scoped at scope; a nil filter
// (for an empty glob) matches everything.
func CompileGrepFilter(glob, scope string) (*GrepFilter, error) {
	if glob == "" {
		return nil, nil
	}
	p, err := CompilePattern(glob)
	if err != nil {
		return nil, err
	}
	return &GrepFilter{p: p, base: !strings.Contains(glob, "/"), scope: Clean(scope)}, nil
}

// Match reports whether the file at clean path p passes the filter.
func (f *GrepFilter) Match(p string) bool {
	if f == nil {
		return true
	}
	if f.base {
		return f.p.Match(Base(p))
	}
	rel, ok := Rel(p, f.scope)
	if !ok {
		return false
	}
	if rel == "" { // the scope is the file itself
		rel = Base(p)
	}
	return f.p.Match(rel)
}

// ReadFunc reads a whole file, as FileSystem.Read does.
type ReadFunc func(ctx context.Context, path string) ([]byte, error)

// Grep is the shared implementation of FileSystem.Grep for any tree: it
// walks the files under q.Path in order, reads them in parallel and scans
// them with a [GrepMatcher]. A missing scope yields nothing; binary files
// are skipped; a file that vanishes between walk and read is skipped.
func Grep(ctx context.Context, fsys FileSystem, q GrepQuery) iter.Seq2[GrepResult, error] {
	return func(yield func(GrepResult, error) bool) {
		m, err := CompileGrep(q.Pattern, q.CaseInsensitive)
		if err != nil {
			yield(GrepResult{}, err)
			return
		}
		filter, err := CompileGrepFilter(q.Glob, Clean(q.Path))
		if err != nil {
			yield(GrepResult{}, err)
			return
		}
		files := func(yield func(string, error) bool) {
			for p, err := range WalkFiles(ctx, fsys, q.Path) {
				if err != nil {
					yield("", err)
					return
				}
				if filter.Match(p) && !yield(p, nil) {
					return
				}
			}
		}
		for r, err := range GrepFiles(ctx, m, files, fsys.Read, q.MaxResults) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// GrepFiles scans the files named by files (already in path order) with m,
// reading up to GOMAXPROCS of them at once, and yields hits in path then
// line order, at most max of them (0: no limit). A read that fails with
// not-found or is-a-directory skips the file; any other failure ends the
// stream with that error.
func GrepFiles(ctx context.Context, m *GrepMatcher, files iter.Seq2[string, error], read ReadFunc, max int) iter.Seq2[GrepResult, error] {
	return func(yield func(GrepResult, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		workers := runtime.GOMAXPROCS(0)
		type job struct {
			path string
			done chan struct{}
			hits []GrepResult
			err  error
		}
		jobs := make(chan *job, workers*4) // in path order, for the consumer
		work := make(chan *job)            // to the readers
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range work {
					j.hits, j.err = grepOne(ctx, m, j.path, read, max)
					close(j.done)
				}
			}()
		}
		var walkErr error
		go func() {
			defer close(jobs)
			defer close(work)
			for p, err := range files {
				if err != nil {
					walkErr = err
					return
				}
				j := &job{path: p, done: make(chan struct{})}
				select {
				case jobs <- j:
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
		n := 0
		for j := range jobs {
			<-j.done
			if j.err != nil {
				yield(GrepResult{}, j.err)
				return
			}
			for _, h := range j.hits {
				if !yield(h, nil) {
					return
				}
				if n++; max > 0 && n >= max {
					return
				}
			}
		}
		if walkErr != nil {
			yield(GrepResult{}, walkErr)
			return
		}
		if err := ctx.Err(); err != nil {
			yield(GrepResult{}, err)
		}
	}
}

func grepOne(ctx context.Context, m *GrepMatcher, p string, read ReadFunc, max int) ([]GrepResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := read(ctx, p)
	if err != nil {
		switch KindOf(err) {
		case KindNotFound, KindIsDir:
			return nil, nil
		}
		return nil, err
	}
	if IsBinary(data) {
		return nil, nil
	}
	var hits []GrepResult
	m.Scan(data, func(n int, line []byte) bool {
		hits = append(hits, GrepResult{Path: p, LineNumber: n, Line: string(line)})
		return max <= 0 || len(hits) < max
	})
	return hits, nil
}
