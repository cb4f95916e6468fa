package vfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"iter"
	"math"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// GrepMatcher finds the lines of a buffer that match a grep pattern. It
// never runs the regexp once per line: a literal every match must contain
// (found with regexp/syntax) is located with a byte scan, or, for a
// literal-free pattern, the regexp runs over the whole remaining buffer;
// only the line around a candidate is then checked, and not even that when
// the pattern is nothing but its literals.
//
// Case-insensitive literals are found without lowering the buffer: the scan
// looks for both cases of the literal's rarest byte and compares the bytes
// around each hit with ASCII folding. Letters whose Unicode folding leaves
// ASCII ('k' folds with the Kelvin sign, 's' with the long s) and non-ASCII
// runes are never part of the searched literal, so the prefilter cannot
// miss a line the regexp would match.
type GrepMatcher struct {
	re      *regexp.Regexp
	lits    []litFinder // one of these occurs in every matching line; none: no prefilter
	litOnly bool        // a line matches exactly when it holds one of lits
	// asciiLits are lits with 'k' and 's' kept, folded as ASCII: exact for
	// a buffer holding neither the Kelvin sign nor the long s. Nil when
	// no literal lost a 'k' or an 's'.
	asciiLits []litFinder
	asciiOnly bool
	dfa       *lineDFA // decides lines without the regexp; nil when too large
}

// litFinder locates one literal, exactly or with ASCII case folding.
type litFinder struct {
	lit    []byte // fold: lower-case ASCII
	fold   bool
	rare   int  // index in lit of its rarest byte, the one scanned for
	r1, r2 byte // that byte's two cases (equal when exact or not a letter)
	// rare2 is the index of the next rarest byte, or -1: when set, the
	// literal is searched for as that pair of bytes, many starts at a
	// time, rather than with bytes.IndexByte (per case). It is set for a
	// literal of two bytes or more when the AVX2 pair scan can run, and
	// otherwise for a folded literal whose rarest byte is a letter: a
	// common byte searched for alone stops bytes.IndexByte every few
	// dozen bytes of text.
	rare2 int
}

// reqLit is a literal every match contains, and whether it is case-folded.
type reqLit struct {
	s    string
	fold bool
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
	ast, err := syntax.Parse(pattern, parseFlags)
	if err != nil {
		return m, nil
	}
	ast = ast.Simplify()
	m.dfa = newLineDFA(ast)
	lits := requiredLiterals(ast)
	if len(lits) == 0 || len(lits) > 8 {
		return m, nil
	}
	for _, l := range lits {
		if strings.Contains(l.s, "\n") {
			return m, nil // no line holds it; the DFA or the regexp says no per line
		}
	}
	set := isLiteralSet(ast)
	m.lits, m.litOnly = litFinders(lits, set, unsafeFold)
	if ascii, only := litFinders(lits, set, nonASCII); len(ascii) > 0 && (len(m.lits) == 0 || only != m.litOnly || minLitLen(ascii) > minLitLen(m.lits)) {
		m.asciiLits, m.asciiOnly = ascii, only
	}
	return m, nil
}

// litFinders prepares the search for lits, cutting folded literals at the
// runes unsafe reports; only reports that holding one is matching (set is
// whether the pattern is nothing but lits, and nothing was cut). It returns
// nil when some literal has nothing searchable left.
func litFinders(lits []reqLit, set bool, unsafe func(rune) bool) (fs []litFinder, only bool) {
	only = set
	for _, l := range lits {
		f, whole := newLitFinder(l, unsafe)
		if f == nil {
			return nil, false
		}
		only = only && whole
		fs = append(fs, *f)
	}
	return fs, only
}

func minLitLen(fs []litFinder) int {
	n := math.MaxInt
	for _, f := range fs {
		n = min(n, len(f.lit))
	}
	return n
}

func nonASCII(r rune) bool { return r >= utf8.RuneSelf }

// hasOddFold reports whether data holds the Kelvin sign or the long s, the
// non-ASCII runes that fold with ASCII letters.
func hasOddFold(data []byte) bool {
	for _, f := range oddFolds {
		st := [2]int{-1, -1}
		if f.index(data, 0, &st) != none {
			return true
		}
	}
	return false
}

// oddFolds find the Kelvin sign and the long s by their bytes (by pairs
// where the AVX2 scan runs): bytes.Contains stops at every 0xE2, the lead
// byte of common punctuation (’ — …) in source comments.
var oddFolds = func() (fs [2]*litFinder) {
	for i, r := range []string{"\u212a", "\u017f"} {
		fs[i], _ = newLitFinder(reqLit{s: r}, nil)
	}
	return fs
}()

// isLiteralSet reports whether re is a literal or an alternation of
// literals, so that holding one of them is the same as matching.
func isLiteralSet(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if sub.Op != syntax.OpLiteral {
				return false
			}
		}
		return true
	}
	return false
}

// newLitFinder prepares the search for l. A folded literal is cut down to
// its longest run of bytes whose folding stays in ASCII; whole reports that
// nothing was cut. It returns nil when no searchable byte is left.
func newLitFinder(l reqLit, unsafe func(rune) bool) (f *litFinder, whole bool) {
	if !l.fold {
		if l.s == "" {
			return nil, false
		}
		f = &litFinder{lit: []byte(l.s), rare2: -1}
		rank := math.MaxInt
		for i, c := range f.lit {
			if r := byteRank[c]; r < rank {
				rank, f.rare = r, i
			}
		}
		f.r1, f.r2 = f.lit[f.rare], f.lit[f.rare]
		if pairAVX2 {
			f.rare2 = secondRarest(f.lit, f.rare)
		}
		return f, true
	}
	best := ""
	for run := range strings.FieldsFuncSeq(l.s, unsafe) {
		if len(run) > len(best) || (len(run) == len(best) && rarest(run) < rarest(best)) {
			best = run
		}
	}
	if best == "" {
		return nil, false
	}
	lit := []byte(strings.ToLower(best))
	f = &litFinder{lit: lit, fold: true}
	rank := math.MaxInt
	for i, c := range lit {
		if r := byteRank[c]; r < rank {
			rank, f.rare = r, i
		}
	}
	c := lit[f.rare]
	f.r1, f.r2 = c, c
	if 'a' <= c && c <= 'z' {
		f.r2 = c - 'a' + 'A'
	}
	f.rare2 = -1
	if f.r1 != f.r2 {
		f.rare2 = secondRarest(lit, f.rare)
	}
	return f, len(best) == len(l.s)
}

// secondRarest returns the index of lit's rarest byte other than the one
// at rare, or -1 when lit has no other byte.
func secondRarest(lit []byte, rare int) int {
	rank, at := math.MaxInt, -1
	for i, c := range lit {
		if r := byteRank[c]; i != rare && r < rank {
			rank, at = r, i
		}
	}
	return at
}

// unsafeFold reports a rune whose case folding is not within ASCII.
func unsafeFold(r rune) bool {
	return r >= 0x80 || r == 'k' || r == 'K' || r == 's' || r == 'S'
}

// rarest returns the rank of s's rarest byte (lower is rarer).
func rarest(s string) int {
	rank := math.MaxInt
	for i := 0; i < len(s); i++ {
		rank = min(rank, byteRank[s[i]])
	}
	return rank
}

// byteRank orders bytes by how rare they are in source code and text:
// lower is rarer. Bytes not listed (control bytes, non-ASCII) are rarest.
var byteRank = func() [256]int {
	// Most common first, roughly as counted over a Go source tree.
	const common = " etnirsoa\tlcdupf\n.()\"mg,hb=:_/*;{}0yx1-[]wvk&2<>'!%+3|#4895@67jzq\\$^~`?"
	var r [256]int
	for i := 0; i < len(common); i++ {
		c := common[i]
		r[c] = 1000 - i
		if 'a' <= c && c <= 'z' {
			r[c-'a'+'A'] = 1000 - i - len(common)/2 // capitals are rarer
		}
	}
	return r
}()

// requiredLiterals returns a set of strings one of which occurs in every
// match of re, or nil when it cannot tell.
func requiredLiterals(re *syntax.Regexp) []reqLit {
	switch re.Op {
	case syntax.OpLiteral:
		return []reqLit{{string(re.Rune), re.Flags&syntax.FoldCase != 0}}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0])
		}
	case syntax.OpConcat:
		// Adjacent literals with the same folding make one longer literal;
		// of the candidates, keep the set whose shortest member is longest,
		// and of equals the one with the rarer bytes.
		var best []reqLit
		var run strings.Builder
		runFold := false
		consider := func(ls []reqLit) {
			if len(ls) > 0 && betterLits(ls, best) {
				best = ls
			}
		}
		flush := func() {
			if run.Len() > 0 {
				consider([]reqLit{{run.String(), runFold}})
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
			consider(requiredLiterals(sub))
		}
		flush()
		return best
	case syntax.OpAlternate:
		var all []reqLit
		for _, sub := range re.Sub {
			ls := requiredLiterals(sub)
			if len(ls) == 0 {
				return nil
			}
			all = append(all, ls...)
		}
		return all
	}
	return nil
}

// betterLits reports whether literal set a makes a better prefilter than b.
func betterLits(a, b []reqLit) bool {
	if len(b) == 0 {
		return true
	}
	la, lb := minLen(a), minLen(b)
	if la != lb {
		return la > lb
	}
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return minRank(a) < minRank(b)
}

// minLen is the length of the shortest searchable part of a set.
func minLen(ls []reqLit) int {
	n := math.MaxInt
	for _, l := range ls {
		k := len(l.s)
		if l.fold {
			k = 0
			for run := range strings.FieldsFuncSeq(l.s, unsafeFold) {
				k = max(k, len(run))
			}
		}
		n = min(n, k)
	}
	return n
}

func minRank(ls []reqLit) int {
	r := 0
	for _, l := range ls {
		r = max(r, rarest(l.s))
	}
	return r
}

// MatchLine reports whether one line (without its terminator) matches.
func (m *GrepMatcher) MatchLine(line []byte) bool { return m.re.Match(line) }

// matchLine decides a candidate line with the DFA cache dc when there is
// one (and it has room), else with the regexp.
func (m *GrepMatcher) matchLine(dc *dfaCache, line []byte) bool {
	if dc != nil {
		if match, ok := dc.matchLine(line); ok {
			return match
		}
	}
	return m.re.Match(line)
}

// none marks a literal or byte with no further occurrence.
const none = math.MaxInt

// index returns the first occurrence of f's literal in hay at or after
// from, or none. st caches, across calls with growing from, the next
// positions of the scanned byte's two cases.
func (f *litFinder) index(hay []byte, from int, st *[2]int) int {
	if f.rare2 >= 0 {
		return f.indexPair(hay, from)
	}
	n := len(f.lit)
	for {
		s := from + f.rare
		if s >= len(hay) {
			return none
		}
		if st[0] < s {
			st[0] = nextByte(hay, s, f.r1)
		}
		c := st[0]
		if f.r2 != f.r1 {
			if st[1] < s {
				st[1] = nextByte(hay, s, f.r2)
			}
			c = min(c, st[1])
		}
		if c == none {
			return none
		}
		start := c - f.rare
		if start >= 0 && start+n <= len(hay) && f.equal(hay[start:start+n]) {
			return start
		}
		from = start + 1
	}
}

// indexPair is index by the literal's two rarest bytes: it tests them at
// every start, 32 starts per AVX2 instruction where it can run, else
// sixteen at a time (SWAR: OR-ing 0x20 lowers an ASCII letter, and a byte
// of the two XORs is zero where both match), and compares the literal
// only where both match.
func (f *litFinder) indexPair(hay []byte, from int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	n, a, b := len(f.lit), f.rare, f.rare2
	ca, cb := f.lit[a], f.lit[b]
	var fa, fb byte // the folding OR-masks: none for a non-letter
	if f.fold && 'a' <= ca && ca <= 'z' {
		fa = 0x20
	}
	if f.fold && 'a' <= cb && cb <= 'z' {
		fb = 0x20
	}
	s := max(from, 0)
	if pairAVX2 {
		// 32 starts s..s+31 read up to s+31+max(a, b) and need a whole
		// literal at s+31: within hay when s+31+n <= len(hay).
		for s+31+n <= len(hay) {
			blocks := (len(hay) - n - s + 1) / 32
			off, mask := pairMask32(&hay[s+a], &hay[s+b], blocks, ca, cb, fa, fb)
			if off < 0 {
				s += blocks * 32
				break
			}
			s += off
			for ; mask != 0; mask &= mask - 1 {
				if k := s + bits.TrailingZeros32(mask); f.equal(hay[k : k+n]) {
					return k
				}
			}
			s += 32
		}
	}
	wa, wb := lo*uint64(ca), lo*uint64(cb)
	wfa, wfb := lo*uint64(fa), lo*uint64(fb)
	// Eight starts s..s+7 need bytes up to s+7+max(a, b) and a whole
	// literal at s+7: within hay when s+7+n <= len(hay).
	// Sixteen starts at a time while they fit, then eight.
	for ; s+15+n <= len(hay); s += 16 {
		pa, pb := hay[s+a:s+a+16], hay[s+b:s+b+16]
		z1 := (binary.LittleEndian.Uint64(pa) | wfa) ^ wa | (binary.LittleEndian.Uint64(pb) | wfb) ^ wb
		z2 := (binary.LittleEndian.Uint64(pa[8:]) | wfa) ^ wa | (binary.LittleEndian.Uint64(pb[8:]) | wfb) ^ wb
		// Flags every zero byte of z (and maybe bytes above one, which
		// the comparison weeds out).
		t1, t2 := (z1-lo)&^z1&hi, (z2-lo)&^z2&hi
		if t1|t2 == 0 {
			continue
		}
		for ; t1 != 0; t1 &= t1 - 1 {
			if k := s + bits.TrailingZeros64(t1)>>3; f.equal(hay[k : k+n]) {
				return k
			}
		}
		for ; t2 != 0; t2 &= t2 - 1 {
			if k := s + 8 + bits.TrailingZeros64(t2)>>3; f.equal(hay[k : k+n]) {
				return k
			}
		}
	}
	for ; s+7+n <= len(hay); s += 8 {
		z := (binary.LittleEndian.Uint64(hay[s+a:]) | wfa) ^ wa | (binary.LittleEndian.Uint64(hay[s+b:]) | wfb) ^ wb
		for t := (z - lo) &^ z & hi; t != 0; t &= t - 1 {
			if k := s + bits.TrailingZeros64(t)>>3; f.equal(hay[k : k+n]) {
				return k
			}
		}
	}
	for ; s+n <= len(hay); s++ {
		if hay[s+a]|fa == ca && hay[s+b]|fb == cb && f.equal(hay[s:s+n]) {
			return s
		}
	}
	return none
}

func (f *litFinder) equal(b []byte) bool {
	if f.fold {
		return equalFoldASCII(b, f.lit)
	}
	return bytes.Equal(b, f.lit)
}

func nextByte(hay []byte, from int, c byte) int {
	if i := bytes.IndexByte(hay[from:], c); i >= 0 {
		return from + i
	}
	return none
}

// equalFoldASCII reports whether b equals lower (lower-case ASCII) when
// b's ASCII capitals are lowered.
func equalFoldASCII(b, lower []byte) bool {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// Scan calls fn for each matching line of data in order, with its 1-based
// line number and the line without its "\n" (a trailing "\r" is kept).
// It stops when fn returns false. The line aliases data.
func (m *GrepMatcher) Scan(data []byte, fn func(lineNumber int, line []byte) bool) {
	lits, litOnly := m.lits, m.litOnly
	if m.asciiLits != nil && !hasOddFold(data) {
		lits, litOnly = m.asciiLits, m.asciiOnly
	}
	var stackState [8][3]int // per literal: next occurrence, cached byte positions
	state := stackState[:0]
	if len(lits) > len(stackState) {
		state = make([][3]int, 0, len(lits))
	}
	for range lits {
		state = append(state, [3]int{-1, -1, -1})
	}
	var dc *dfaCache
	if m.dfa != nil && !litOnly {
		dc = m.dfa.get()
		defer m.dfa.put(dc)
	}
	lineNo, counted := 1, 0
	pos := 0
	if dc != nil && len(lits) == 0 {
		if spans, ok := dc.matchLines(data); ok {
			for k := 0; k < len(spans); k += 2 {
				start, end := spans[k], spans[k+1]
				lineNo += bytes.Count(data[counted:start], []byte{'\n'})
				counted = start
				if !fn(lineNo, data[start:end]) {
					return
				}
			}
			return
		}
		dc = nil // too many states: the regexp decides
	}
	for pos < len(data) {
		var cand int
		if len(lits) > 0 {
			cand = none
			for i := range lits {
				st := &state[i]
				if st[0] == none {
					continue
				}
				if st[0] < pos {
					st[0] = lits[i].index(data, pos, (*[2]int)(st[1:]))
				}
				cand = min(cand, st[0])
			}
			if cand == none {
				return
			}
		} else {
			loc := m.re.FindIndex(data[pos:])
			if loc == nil {
				return
			}
			cand = pos + loc[0]
			if cand == len(data) && data[cand-1] == '\n' {
				return // the empty "line" after the final newline is none
			}
		}
		start := bytes.LastIndexByte(data[pos:cand], '\n') + 1 + pos
		end := bytes.IndexByte(data[cand:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += cand
		}
		line := data[start:end]
		if litOnly || m.matchLine(dc, line) {
			lineNo += bytes.Count(data[counted:start], []byte{'\n'})
			counted = start
			if !fn(lineNo, line) {
				return
			}
		}
		pos = end + 1
	}
}

// IsBinary reports whether data looks binary: a NUL byte in its first 8000
// bytes, the heuristic of git. (Grep is stricter; see [GrepScan].)
func IsBinary(data []byte) bool {
	n := min(len(data), 8000)
	return bytes.IndexByte(data[:n], 0) >= 0
}

// hasNUL reports whether data holds a NUL byte anywhere: grep's test for a
// binary file. ripgrep stops searching a file at its first NUL and reports
// nothing from the buffer holding it, so for a file that fits its first
// buffer the two agree; grep skipping the file whole is the simpler rule.
func hasNUL(data []byte) bool { return bytes.IndexByte(data, 0) >= 0 }

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

// CompileGrepQuery compiles q's pattern and its glob filter (scoped at
// q.Path), failing with the contract's invalid-pattern errors: what every
// Grep checks before it reads anything.
func CompileGrepQuery(q GrepQuery) (*GrepMatcher, *GrepFilter, error) {
	m, err := CompileGrep(q.Pattern, q.CaseInsensitive)
	if err != nil {
		return nil, nil, err
	}
	f, err := CompileGrepFilter(q.Glob, Clean(q.Path))
	if err != nil {
		return nil, nil, err
	}
	return m, f, nil
}

// ReadFunc reads a whole file, as FileSystem.Read does.
type ReadFunc func(ctx context.Context, path string) ([]byte, error)

// Grep is the shared implementation of FileSystem.Grep for any tree: it
// walks the files under q.Path in order, reads them in parallel and scans
// them with a [GrepMatcher]. A missing scope yields nothing; binary files
// are skipped; a file that vanishes between walk and read is skipped.
func Grep(ctx context.Context, fsys FileSystem, q GrepQuery) iter.Seq2[GrepResult, error] {
	return func(yield func(GrepResult, error) bool) {
		m, filter, err := CompileGrepQuery(q)
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
		for r, err := range GrepFiles(ctx, m, files, fsys.Read, q.Limits()) {
			if !yield(r, err) || err != nil {
				return
			}
		}
	}
}

// GrepLimits bound a scan without changing what matches: at most
// MaxResults hits (0: no limit), each hit's line cut to MaxLineBytes (0:
// whole lines), as in [GrepQuery].
type GrepLimits struct {
	MaxResults   int
	MaxLineBytes int
}

// Limits returns q's MaxResults and MaxLineBytes.
func (q GrepQuery) Limits() GrepLimits {
	return GrepLimits{MaxResults: q.MaxResults, MaxLineBytes: q.MaxLineBytes}
}

// GrepFiles scans the files named by files (already in path order) with m,
// reading up to GOMAXPROCS of them at once, and yields hits in path then
// line order within lim. A read that fails with not-found or
// is-a-directory skips the file; any other failure ends the stream with
// that error. It is [GrepScan] over read.
func GrepFiles(ctx context.Context, m *GrepMatcher, files iter.Seq2[string, error], read ReadFunc, lim GrepLimits) iter.Seq2[GrepResult, error] {
	items := func(yield func(GrepFile, error) bool) {
		for p, err := range files {
			if err != nil {
				yield(GrepFile{}, err)
				return
			}
			f := GrepFile{Path: p, Load: func(ctx context.Context, _ *[]byte) ([]byte, error) {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				return read(ctx, p)
			}}
			if !yield(f, nil) {
				return
			}
		}
	}
	return GrepScan(ctx, m, items, lim)
}

// GrepFile is one file for [GrepScan]: its path and how to load it.
type GrepFile struct {
	Path string
	// Load returns the file's contents. buf points to a scratch buffer
	// owned by the calling worker (nil after the stream has stopped): Load
	// may read into it, storing the grown buffer back in *buf, and return
	// a slice of it, used only until that worker's next Load. Or it may
	// return memory it keeps, which GrepScan never modifies. GrepScan
	// calls Load exactly once for every file it takes from its source,
	// even after the stream has stopped (then with a cancelled context),
	// so a source may release per-file resources in Load.
	Load func(ctx context.Context, buf *[]byte) ([]byte, error)
	// Open, when set, is called instead of Load: it opens the file for
	// reading and returns its size (-1 when unknown). GrepScan reads it
	// in pieces of at most grepChunk bytes (whole lines), so a large file
	// needs no buffer of its size, and closes it. A line longer than a
	// piece grows the buffer to hold it, unless the scan cuts lines
	// (GrepLimits.MaxLineBytes): then the line is matched a window at a
	// time, and only its head is kept. The same rules hold as
	// for Load: it is called exactly once for every file taken from the
	// source, after the stream has stopped with a cancelled context (it
	// must then release what it holds and fail).
	Open func(ctx context.Context) (r io.ReadCloser, size int64, err error)
}

// release lets go of a file the stream will not scan.
func (f GrepFile) release(dead context.Context) {
	if f.Open != nil {
		if r, _, err := f.Open(dead); err == nil {
			r.Close()
		}
		return
	}
	f.Load(dead, nil)
}

// GrepScan scans files (in path order) with m, loading up to GOMAXPROCS of
// them at once with a reused buffer per worker, and yields hits in path
// then line order, at most lim.MaxResults of them (0: no limit), each
// line cut to lim.MaxLineBytes (0: whole lines). A file holding a NUL
// byte is binary and skipped. A load that fails with not-found or
// is-a-directory skips the file; any other failure ends the stream with
// that error. Memory is bounded by the files in flight (a few hundred
// files' hits, and one buffer per worker), not by the number of files; a
// loaded file is held whole while it is scanned, an opened one a piece of
// whole lines at a time, or, when lines are cut, a window of
// grepChunk bytes of a longer line (see [GrepFile]). Breaking out of the
// stream stops the walk and every worker before GrepScan returns.
//
// The workers take files in batches straight from the source, one worker
// at a time, and queue each batch for the consumer as they take it, so
// the walk runs on whichever worker needs files (no walker goroutine to
// wait for). Batches start at one file and grow to grepBatchMax as the
// walk goes on, so a small tree is still spread over every worker and a
// large one costs a few channel operations per batch, not per file.
func GrepScan(ctx context.Context, m *GrepMatcher, files iter.Seq2[GrepFile, error], lim GrepLimits) iter.Seq2[GrepResult, error] {
	max := lim.MaxResults
	return func(yield func(GrepResult, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		// dead is the cancelled context files are released with once a
		// batch has stopped early.
		dead, kill := context.WithCancel(ctx)
		kill()
		workers := runtime.GOMAXPROCS(0)
		jobs := make(chan *grepBatch, workers*grepWindow) // in path order, for the consumer
		next, stop := iter.Pull2(files)
		var (
			mu      sync.Mutex // serializes next, and the order batches enter jobs
			ended   bool       // no more batches: the source ended or failed, or the stream stopped
			walkErr error
			taken   int
		)
		// take gathers the next batch and queues it for the consumer; nil
		// when there is none.
		take := func() *grepBatch {
			mu.Lock()
			defer mu.Unlock()
			if ended || ctx.Err() != nil {
				ended = true
				return nil
			}
			b := newGrepBatch()
			for size := min(grepBatchMax, 1+taken/workers); len(b.files) < size; {
				f, err, ok := next()
				if !ok {
					ended = true
					break
				}
				if err != nil {
					walkErr, ended = err, true
					break
				}
				b.files = append(b.files, f)
			}
			if len(b.files) == 0 {
				return nil
			}
			taken++
			select {
			case jobs <- b:
				return b
			case <-ctx.Done():
				for _, f := range b.files {
					f.release(dead) // the stream has stopped
				}
				ended = true
				return nil
			}
		}
		var wg sync.WaitGroup
		// Registered first so it runs last: stop everything, wait, then
		// end the walk.
		defer stop()
		defer wg.Wait()
		defer cancel()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				w := grepWorker{maxLine: lim.MaxLineBytes}
				for b := take(); b != nil; b = take() {
					b.run(ctx, dead, m, &w, max)
				}
			}()
		}
		go func() {
			wg.Wait()
			close(jobs)
		}()
		n := 0
		for b := range jobs {
			<-b.done
			for _, h := range b.hits {
				if !yield(h, nil) {
					return
				}
				if n++; max > 0 && n >= max {
					return
				}
			}
			if b.err != nil {
				yield(GrepResult{}, b.err)
				return
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

const (
	// grepBatchMax is the most files a batch takes.
	grepBatchMax = 16
	// grepWindow is how many batches per worker may wait for the consumer:
	// how far the workers may run ahead of a slow file.
	grepWindow = 8
)

// A grepBatch is a run of consecutive files one worker loads and scans.
type grepBatch struct {
	files []GrepFile
	done  chan struct{} // closed when hits and err are set
	hits  []GrepResult  // in path then line order
	err   error         // the error that ends the stream after hits
}

func newGrepBatch() *grepBatch {
	return &grepBatch{files: make([]GrepFile, 0, grepBatchMax), done: make(chan struct{})}
}

// run loads and scans b's files with the worker's buffer buf, which it
// returns for the next batch. After an error, or once max hits are in,
// the remaining files are released with the cancelled context dead.
func (b *grepBatch) run(ctx, dead context.Context, m *GrepMatcher, w *grepWorker, max int) {
	defer close(b.done)
	for i, f := range b.files {
		if b.err != nil || (max > 0 && len(b.hits) >= max) {
			for _, f := range b.files[i:] {
				f.release(dead)
			}
			break
		}
		b.hits, b.err = w.grepOne(ctx, m, f, max, b.hits)
	}
	b.files = nil
}

// maxKeptBuffer is the largest scratch buffer a worker keeps between files.
const maxKeptBuffer = 8 << 20

// A grepWorker is one worker's scratch, reused from file to file: the
// buffer files are loaded into, and the hits of the file being scanned.
type grepWorker struct {
	maxLine int // GrepLimits.MaxLineBytes: hits' lines are cut to it (0: whole)
	buf     []byte
	nums    []int      // line numbers of the hits
	lines   []byte     // the hits' lines (cut), end to end
	ends    []int      // where each line ends in lines
	fulls   []int      // each hit's whole length when its line was cut, else 0
	head    []byte     // the start of a long line while it is scanned
	src     grepReader // the streamed file (here, not on the heap per file)
}

// grepOne loads and scans one file and appends its hits to hits, stopping
// when hits holds max (0: no limit). It returns the hits and the error
// that ends the stream (nil to go on).
func (w *grepWorker) grepOne(ctx context.Context, m *GrepMatcher, f GrepFile, max int, hits []GrepResult) ([]GrepResult, error) {
	if f.Open != nil {
		return w.grepStream(ctx, m, f, max, hits)
	}
	data, err := f.Load(ctx, &w.buf)
	if cap(w.buf) > maxKeptBuffer {
		w.buf = nil
	}
	if err != nil || ctx.Err() != nil {
		return hits, loadErr(ctx, err)
	}
	if len(data) == 0 || hasNUL(data) {
		return hits, nil
	}
	w.reset()
	w.scan(m, data, 0, room(max, hits))
	return w.flush(f.Path, hits), nil
}

// loadErr decides what a file's failed load (or open) means for the
// stream: the context's error once it is done, nil for a file that
// vanished or became a directory (skipped), else err.
func loadErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	switch KindOf(err) {
	case KindNotFound, KindIsDir:
		return nil
	}
	return err
}

// grepChunk is the most a streamed file's scan holds at once (more only
// for a longer line when lines are not cut). A variable for tests.
var grepChunk = 256 << 10

// grepReader reads a file GrepScan opened, up to its size when known,
// until ctx is done.
type grepReader struct {
	ctx  context.Context
	r    io.Reader
	size int64 // -1: unknown
	read int64
	path string
}

// fill reads into buf up to its capacity, or to the end of the file
// (eof). A failed read, or the context's end, is the error that ends the
// stream: a long file stops between two pieces.
func (g *grepReader) fill(buf []byte) (_ []byte, eof bool, err error) {
	if err := g.ctx.Err(); err != nil {
		return buf, false, err
	}
	for len(buf) < cap(buf) {
		want := cap(buf)
		if g.size >= 0 {
			want = min(want, len(buf)+int(g.size-g.read))
		}
		if want == len(buf) {
			return buf, true, nil
		}
		n, err := g.r.Read(buf[len(buf):want])
		buf = buf[:len(buf)+n]
		g.read += int64(n)
		switch {
		case err == io.EOF:
			return buf, true, nil
		case err != nil:
			return buf, false, NewError(KindOther, g.path, err)
		case n == 0:
			return buf, true, nil // a reader that returns nothing has nothing more
		}
	}
	return buf, false, nil
}

// grepStream scans a file GrepScan opens, a piece of whole lines at a
// time through the worker's buffer. A line longer than the buffer grows
// it when lines are not cut, and is matched a window at a time when they
// are (see longLine).
func (w *grepWorker) grepStream(ctx context.Context, m *GrepMatcher, f GrepFile, max int, hits []GrepResult) ([]GrepResult, error) {
	r, size, err := f.Open(ctx)
	if err != nil {
		return hits, loadErr(ctx, err)
	}
	defer r.Close()
	if err := ctx.Err(); err != nil {
		return hits, err
	}
	if cap(w.buf) < grepChunk || cap(w.buf) > maxKeptBuffer {
		w.buf = make([]byte, 0, grepChunk)
	}
	w.reset()
	limit := room(max, hits)
	w.src = grepReader{ctx: ctx, r: r, size: size, path: f.Path}
	defer func() { w.src = grepReader{} }()
	src := &w.src
	buf, base := w.buf[:0], 0 // buf: the unscanned bytes; base: lines before them
	full := false             // limit hits are in
	for {
		var eof bool
		if buf, eof, err = src.fill(buf); err != nil {
			return hits, err
		}
		data, rest := buf, buf[len(buf):]
		if !eof {
			cut := bytes.LastIndexByte(buf, '\n')
			if cut < 0 && w.maxLine <= 0 { // a line longer than the buffer: grow it
				buf = slices.Grow(buf, cap(buf))
				continue
			}
			if cut < 0 { // a line longer than the buffer, cut in the hits
				var binary bool
				buf, binary, err = w.longLine(m, src, buf, base+1, limit, &full)
				switch {
				case err != nil:
					return hits, err
				case binary:
					w.reset()
					w.keep(buf)
					return hits, nil
				}
				base++
				continue
			}
			data, rest = buf[:cut+1], buf[cut+1:]
		}
		if hasNUL(data) {
			w.reset() // binary: skipped whole, hits found so far too
			w.keep(buf)
			return hits, nil
		}
		// Once the hits are in (full), the rest is only read to be sure the
		// file holds no NUL.
		if !full {
			full = !w.scan(m, data, base, limit)
		}
		if eof {
			w.keep(buf)
			return w.flush(f.Path, hits), nil
		}
		if !full {
			base += bytes.Count(data, []byte{'\n'})
		}
		buf = buf[:copy(buf, rest)]
	}
}

// longLine scans the line numbered lineNo whose start fills buf (no
// '\n' in it) without ever holding more of it than the buffer: the
// matcher runs over it a window at a time ([GrepMatcher.matchWindows]),
// and only its first bytes are kept, for the hit. It records the hit when
// the line matches and there is room (room: see scan; *full is set once
// the hits are in). It returns the buffer holding the bytes read past the
// line's end, and whether the line holds a NUL byte (the file is binary).
func (w *grepWorker) longLine(m *GrepMatcher, src *grepReader, buf []byte, lineNo, room int, full *bool) ([]byte, bool, error) {
	lw := lineWindows{src: src, buf: buf, head: w.head[:0], keep: w.maxLine + utf8.UTFMax}
	matched := !*full && m.matchWindows(&lw)
	for _, ok := lw.next(); ok; _, ok = lw.next() {
	}
	w.head = lw.head[:0]
	if cap(w.head) > maxKeptBuffer {
		w.head = nil
	}
	rest := lw.buf[:copy(lw.buf, lw.buf[lw.i:])]
	switch {
	case lw.err != nil:
		return rest, false, lw.err
	case lw.nul:
		return rest, true, nil
	}
	if matched {
		w.add(lineNo, lw.head, lw.n)
		*full = room > 0 && len(w.nums) >= room
	}
	return rest, false, nil
}

// lineWindows reads one line a window at a time through a buffer of fixed
// capacity. It hands the line out in parts that hold no '\n' and never
// end inside a UTF-8 sequence the next part completes, so a matcher run
// over the parts in turn sees the runes it would see in the whole line.
// It keeps the line's first keep bytes in head and counts its length.
type lineWindows struct {
	src  *grepReader
	buf  []byte // the window; buf[i:] is not handed out yet
	i    int
	eof  bool // src has nothing more
	end  bool // no more parts: the line ended, or a NUL byte or a failed read stopped it
	nul  bool // the line holds a NUL byte
	err  error
	n    int // the line's length so far
	head []byte
	keep int
}

// next returns the next part of the line; ok is false once there is none.
// A part may be empty.
func (l *lineWindows) next() (part []byte, ok bool) {
	for !l.end {
		rest := l.buf[l.i:]
		if k := bytes.IndexByte(rest, '\n'); k >= 0 {
			part, l.end = rest[:k], true
			l.i += k + 1
		} else if l.eof {
			part, l.end = rest, true
			l.i = len(l.buf)
		} else if j := runeCut(rest); j > 0 {
			part = rest[:j]
			l.i += j
		} else {
			// Refill the window after what is left (an incomplete UTF-8
			// sequence at most).
			l.buf, l.i = l.buf[:copy(l.buf[:cap(l.buf)], rest)], 0
			if l.buf, l.eof, l.err = l.src.fill(l.buf); l.err != nil {
				l.end = true
			}
			continue
		}
		if hasNUL(part) {
			l.nul, l.end = true, true
			return nil, false
		}
		l.n += len(part)
		if len(l.head) < l.keep {
			l.head = append(l.head, part[:min(len(part), l.keep-len(l.head))]...)
		}
		return part, true
	}
	return nil, false
}

// runeCut returns the length of b without a UTF-8 sequence that b cuts
// short at its end (one that more bytes could complete).
func runeCut(b []byte) int {
	for k := len(b) - 1; k >= 0 && k > len(b)-utf8.UTFMax; k-- {
		if utf8.RuneStart(b[k]) {
			if !utf8.FullRune(b[k:]) {
				return k
			}
			break
		}
	}
	return len(b)
}

// lineRunes reads the runes of a line from its windows, for the regexp.
type lineRunes struct {
	l    *lineWindows
	part []byte
}

func (r *lineRunes) ReadRune() (rune, int, error) {
	for len(r.part) == 0 {
		p, ok := r.l.next()
		if !ok {
			return 0, 0, io.EOF
		}
		r.part = p
	}
	if c := r.part[0]; c < utf8.RuneSelf {
		r.part = r.part[1:]
		return rune(c), 1, nil
	}
	c, n := utf8.DecodeRune(r.part)
	r.part = r.part[n:]
	return c, n, nil
}

// matchWindows reports whether the line l reads matches, reading no more
// of it than it must, with memory bounded by the pattern, not the line.
// The answer is exactly [GrepMatcher.MatchLine]'s on the whole line: the
// line DFA carries its state from one part to the next (and when its
// cache fills, starts a new cache from the state it is in, as RE2's DFA
// does), and a pattern too large for the DFA is run by the regexp
// package's NFA over the line's runes (Regexp.MatchReader), which keeps
// no input either.
func (m *GrepMatcher) matchWindows(l *lineWindows) bool {
	if m.dfa == nil {
		return m.re.MatchReader(&lineRunes{l: l})
	}
	dc := m.dfa.get()
	defer m.dfa.put(dc)
	off := int(dc.start)
	for {
		part, ok := l.next()
		if !ok {
			return l.err == nil && !l.nul && dc.finish(off)
		}
		if off = dc.feed(off, part); off == tMatch {
			return true
		}
	}
}

// keep keeps buf as the worker's buffer unless it grew too large.
func (w *grepWorker) keep(buf []byte) {
	if cap(buf) <= maxKeptBuffer {
		w.buf = buf[:0]
	} else {
		w.buf = nil
	}
}

// room is how many hits a file may add to hits under max (0: no limit).
func room(max int, hits []GrepResult) int {
	if max <= 0 {
		return 0
	}
	return max - len(hits)
}

func (w *grepWorker) reset() {
	w.nums, w.lines, w.ends, w.fulls = w.nums[:0], w.lines[:0], w.ends[:0], w.fulls[:0]
}

// scan collects the matching lines of data, numbered after base lines,
// until the worker holds room hits (0: no limit). It reports whether there
// may be room for more.
func (w *grepWorker) scan(m *GrepMatcher, data []byte, base, room int) bool {
	more := true
	m.Scan(data, func(n int, line []byte) bool {
		w.add(base+n, line, len(line))
		more = room <= 0 || len(w.nums) < room
		return more
	})
	return more
}

// add records hit n, a line of length bytes whose start is line (all of
// it, or at least its first maxLine+utf8.UTFMax bytes), cut to maxLine.
func (w *grepWorker) add(n int, line []byte, length int) {
	full := 0
	if w.maxLine > 0 && length > w.maxLine {
		line, full = line[:lineCut(line, w.maxLine)], length
	}
	w.nums = append(w.nums, n)
	w.lines = append(w.lines, line...)
	w.ends = append(w.ends, len(w.lines))
	w.fulls = append(w.fulls, full)
}

// lineCut returns where to cut line to at most max bytes (line is
// longer): at max, or before a valid UTF-8 sequence that max would split.
func lineCut(line []byte, max int) int {
	for s := max; s >= 0 && s > max-utf8.UTFMax; s-- {
		if utf8.RuneStart(line[s]) {
			if _, n := utf8.DecodeRune(line[s:]); n > 1 && s+n > max {
				return s
			}
			break
		}
	}
	return max
}

// flush appends the collected hits of the file at path to hits.
func (w *grepWorker) flush(path string, hits []GrepResult) []GrepResult {
	if len(w.nums) == 0 {
		return hits
	}
	// The hits' lines share one string per file: one allocation, not one
	// per hit.
	s := string(w.lines)
	if cap(w.lines) > maxKeptBuffer {
		w.lines = nil
	}
	hits = slices.Grow(hits, len(w.nums))
	start := 0
	for i, n := range w.nums {
		hits = append(hits, GrepResult{Path: path, LineNumber: n, Line: s[start:w.ends[i]], LineBytes: w.fulls[i]})
		start = w.ends[i]
	}
	return hits
}
