package grepscan

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

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
// where the AVX2 scan runs): bytes.Contains stops at every 0xE2, the leading
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
