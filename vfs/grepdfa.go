package vfs

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"sync"
	"unicode/utf8"
)

// lineDFA answers "does this line hold a match?" with a lazily built DFA
// over the pattern's compiled program, far faster than the regexp package
// on a buffer (which runs a backtracker or an NFA). It works one line at a
// time, as grep matches: a state is the set of program instructions alive
// after some prefix of the line, plus the context the empty-width
// assertions need (line start, whether the previous rune was a word
// character). The assertions (^ $ \A \z \b \B) are decided when the next
// rune is known, as RE2's DFA does, so the automaton is exact; Scan still
// confirms each line it reports with the regexp.
//
// The program is shared; each scanning goroutine takes its own cache of
// states from a pool, so no lock is held while scanning.
type lineDFA struct {
	prog *syntax.Prog
	pool sync.Pool // of *dfaCache
}

// maxDFAStates bounds one cache; past it the scan falls back to the regexp.
const maxDFAStates = 4096

// maxDFAInsts bounds the program size a DFA is built for.
const maxDFAInsts = 5000

// newLineDFA compiles re for line matching, or returns nil when the program
// is too large.
func newLineDFA(re *syntax.Regexp) *lineDFA {
	prog, err := syntax.Compile(re)
	if err != nil || len(prog.Inst) > maxDFAInsts {
		return nil
	}
	return &lineDFA{prog: prog}
}

// Transition values in dfaCache.trans.
const (
	tUnknown = 0  // not computed yet
	tMatch   = -1 // a match ends here: the line matches
	tNoMatch = -2 // (end of line only) the line does not match
	tNewline = -3 // '\n': the line ends
	// k > 0: the state whose row in trans starts at k-1
)

// eol is the input that ends a line (a '\n' or the end of the buffer).
const eol = -1

// stride is the transition table width: 128 ASCII bytes and eol.
const stride = 129

type dfaState struct {
	pcs       []uint32
	prevWord  bool
	lineStart bool
}

type dfaCache struct {
	d      *lineDFA
	states []dfaState       // by row: state k-1 has row (k-1)*stride
	index  map[string]int32 // key to row offset+1
	trans  []int32          // stride entries per state
	wide   map[uint64]int32 // transitions on non-ASCII runes, by state<<32|rune
	start  int32
	full   bool // too many states: callers fall back to the regexp

	// scratch
	on   []bool
	list []uint32
	key  []byte
}

func (d *lineDFA) get() *dfaCache {
	if c, ok := d.pool.Get().(*dfaCache); ok {
		return c
	}
	c := &dfaCache{d: d, index: map[string]int32{}, wide: map[uint64]int32{}, on: make([]bool, len(d.prog.Inst))}
	c.start = c.startState()
	return c
}

func (d *lineDFA) put(c *dfaCache) {
	if c.full { // start afresh next time rather than keep a full cache
		return
	}
	d.pool.Put(c)
}

func (c *dfaCache) startState() int32 {
	c.list = c.list[:0]
	c.addClosure(uint32(c.d.prog.Start))
	c.clearOn()
	return c.intern(false, true)
}

func (c *dfaCache) clearOn() {
	for _, pc := range c.list {
		c.on[pc] = false
	}
}

// addClosure adds pc and everything reachable from it without consuming
// input or passing an empty-width assertion.
func (c *dfaCache) addClosure(pc uint32) {
	c.addFlagged(pc, 0, false)
}

// addFlagged adds pc's closure, passing empty-width assertions that flags
// satisfy when pass is set.
func (c *dfaCache) addFlagged(pc uint32, flags syntax.EmptyOp, pass bool) {
	if c.on[pc] {
		return
	}
	c.on[pc] = true
	c.list = append(c.list, pc)
	inst := &c.d.prog.Inst[pc]
	switch inst.Op {
	case syntax.InstAlt, syntax.InstAltMatch:
		c.addFlagged(inst.Out, flags, pass)
		c.addFlagged(inst.Arg, flags, pass)
	case syntax.InstNop, syntax.InstCapture:
		c.addFlagged(inst.Out, flags, pass)
	case syntax.InstEmptyWidth:
		if pass && syntax.EmptyOp(inst.Arg)&^flags == 0 {
			c.addFlagged(inst.Out, flags, pass)
		}
	}
}

// intern returns the state for the instruction set in c.list, as its row
// offset in trans plus one.
func (c *dfaCache) intern(prevWord, lineStart bool) int32 {
	// Keep only instructions that matter: those that consume input, match,
	// or wait on an assertion.
	pcs := c.list[:0:0]
	for _, pc := range c.list {
		switch c.d.prog.Inst[pc].Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL,
			syntax.InstMatch, syntax.InstEmptyWidth:
			pcs = append(pcs, pc)
		}
	}
	slices.Sort(pcs)
	key := c.key[:0]
	var fl byte
	if prevWord {
		fl |= 1
	}
	if lineStart {
		fl |= 2
	}
	key = append(key, fl)
	for _, pc := range pcs {
		key = append(key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	c.key = key
	if s, ok := c.index[string(key)]; ok {
		return s
	}
	if len(c.states) >= maxDFAStates {
		c.full = true
	}
	c.states = append(c.states, dfaState{pcs: pcs, prevWord: prevWord, lineStart: lineStart})
	row := len(c.trans)
	c.trans = append(c.trans, make([]int32, stride)...)
	c.trans[row+'\n'] = tNewline
	s := int32(row + 1)
	c.index[string(key)] = s
	return s
}

// step computes the transition of the state at row offset+1 s on rune r
// or eol.
func (c *dfaCache) step(s int32, r rune) int32 {
	st := &c.states[(int(s)-1)/stride]
	var flags syntax.EmptyOp
	if st.lineStart {
		flags |= syntax.EmptyBeginLine | syntax.EmptyBeginText
	}
	if r == eol {
		flags |= syntax.EmptyEndLine | syntax.EmptyEndText
	}
	word := r != eol && syntax.IsWordChar(r)
	if st.prevWord != word {
		flags |= syntax.EmptyWordBoundary
	} else {
		flags |= syntax.EmptyNoWordBoundary
	}
	// Pass the assertions the context now satisfies.
	c.list = c.list[:0]
	for _, pc := range st.pcs {
		c.addFlagged(pc, flags, true)
	}
	c.clearOn()
	prog := c.d.prog
	for _, pc := range c.list {
		if prog.Inst[pc].Op == syntax.InstMatch {
			return tMatch
		}
	}
	if r == eol {
		return tNoMatch
	}
	// Consume r, then let a new match start after it (unanchored search).
	cur := slices.Clone(c.list)
	c.list = c.list[:0]
	for _, pc := range cur {
		inst := &prog.Inst[pc]
		switch inst.Op {
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			if inst.MatchRune(r) {
				c.addClosure(inst.Out)
			}
		}
	}
	c.addClosure(uint32(prog.Start))
	c.clearOn()
	for _, pc := range c.list {
		if prog.Inst[pc].Op == syntax.InstMatch {
			return tMatch
		}
	}
	return c.intern(word, false)
}

// matchLine reports whether line (without its '\n') holds a match. ok is
// false when the cache filled up and the caller must decide otherwise.
func (c *dfaCache) matchLine(line []byte) (match, ok bool) {
	m, _, ok := c.scanLine(line)
	return m, ok
}

// nextMatch returns the bounds of the first line at or after pos (a line
// start) that holds a match, start -1 when none does, and ok false when the
// cache filled up (pos is then the line to resume from with the regexp).
func (c *dfaCache) nextMatch(data []byte, pos int) (start, end int, ok bool) {
	for pos < len(data) {
		matched, i, ok := c.scanLine(data[pos:])
		if !ok {
			return pos, 0, false
		}
		end := pos + i
		if matched && end < len(data) && data[end] != '\n' {
			end = indexByteFrom(data, end, '\n')
		}
		if matched {
			return pos, end, true
		}
		pos = end + 1
	}
	return -1, -1, true
}

// scanLine runs the automaton over the line at the start of data, up to
// its '\n'. It returns whether the line matches and where it stopped: at
// the '\n' (or the end) when it does not, anywhere in the line when it
// does. ok is false when the cache is full.
func (c *dfaCache) scanLine(data []byte) (matched bool, stop int, ok bool) {
	off := int(c.start) // offset+1 of the current state's row
	for i := 0; i < len(data); i++ {
		b := data[i]
		var v int32
		if b < utf8.RuneSelf {
			v = c.trans[off-1+int(b)]
			if v > 0 {
				off = int(v)
				continue
			}
			switch v {
			case tNewline:
				return c.endLine(off), i, !c.full || c.trans[off-1+stride-1] != tUnknown
			case tUnknown:
				if c.full {
					return false, i, false
				}
				v = c.step(int32(off), rune(b))
				c.trans[off-1+int(b)] = v
			}
		} else {
			r, w := utf8.DecodeRune(data[i:])
			i += w - 1
			k := uint64(off)<<32 | uint64(uint32(r))
			var found bool
			if v, found = c.wide[k]; !found {
				if c.full {
					return false, i, false
				}
				v = c.step(int32(off), r)
				c.wide[k] = v
			}
		}
		if v == tMatch {
			return true, i, true
		}
		off = int(v)
	}
	if c.full && c.trans[off-1+stride-1] == tUnknown {
		return false, len(data), false
	}
	return c.endLine(off), len(data), true
}

// endLine reports whether the state at row off matches at the end of a line.
func (c *dfaCache) endLine(off int) bool {
	v := c.trans[off-1+stride-1]
	if v == tUnknown {
		v = c.step(int32(off), eol)
		c.trans[off-1+stride-1] = v
	}
	return v == tMatch
}

func indexByteFrom(data []byte, from int, b byte) int {
	if j := bytes.IndexByte(data[from:], b); j >= 0 {
		return from + j
	}
	return len(data)
}

// dfaSplitMin is the smallest buffer scanned as two interleaved halves.
var dfaSplitMin = 4 << 10

// dfaCursor is one walk of matchTwo: its position, the end of its region,
// the start of its current line, and its state's row offset+1.
type dfaCursor struct {
	i, end, lineStart, off int
}

// matchTwo finds the matching lines of data, which it splits at a line
// boundary into two halves walked at once: a table-driven DFA spends its
// time waiting for each load, and two independent walks overlap their
// waits. It returns the [start, end) bounds of the matching lines in
// order, or ok false when the cache filled up.
func (c *dfaCache) matchTwo(data []byte) (spans []int, ok bool) {
	mid := indexByteFrom(data, len(data)/2, '\n') + 1
	if mid >= len(data) {
		mid = len(data)
	}
	a := dfaCursor{i: 0, end: mid, lineStart: 0, off: int(c.start)}
	b := dfaCursor{i: mid, end: len(data), lineStart: mid, off: int(c.start)}
	var sa, sb []int
	trans := c.trans
	for a.i < a.end && b.i < b.end {
		if x := data[a.i]; x < utf8.RuneSelf && trans[a.off-1+int(x)] > 0 {
			a.off = int(trans[a.off-1+int(x)])
			a.i++
		} else if !c.slowStep(data, &a, &sa) {
			return nil, false
		} else {
			trans = c.trans
		}
		if x := data[b.i]; x < utf8.RuneSelf && trans[b.off-1+int(x)] > 0 {
			b.off = int(trans[b.off-1+int(x)])
			b.i++
		} else if !c.slowStep(data, &b, &sb) {
			return nil, false
		} else {
			trans = c.trans
		}
	}
	for _, cur := range []struct {
		c *dfaCursor
		s *[]int
	}{{&a, &sa}, {&b, &sb}} {
		for cur.c.i < cur.c.end {
			if !c.slowStep(data, cur.c, cur.s) {
				return nil, false
			}
		}
		if cur.c.lineStart < cur.c.end { // a last line without '\n'
			if c.full && c.trans[cur.c.off-1+stride-1] == tUnknown {
				return nil, false
			}
			if c.endLine(cur.c.off) {
				*cur.s = append(*cur.s, cur.c.lineStart, cur.c.end)
			}
		}
	}
	return append(sa, sb...), true
}

// slowStep advances cur by one rune the table does not answer directly: a
// newline, a transition not computed yet, a non-ASCII rune, or any rune
// when called to finish a region. It records a matching line's bounds in
// spans.
func (c *dfaCache) slowStep(data []byte, cur *dfaCursor, spans *[]int) bool {
	x := data[cur.i]
	w := 1
	var v int32
	switch {
	case x == '\n':
		if c.full && c.trans[cur.off-1+stride-1] == tUnknown {
			return false
		}
		if c.endLine(cur.off) {
			*spans = append(*spans, cur.lineStart, cur.i)
		}
		cur.i++
		cur.lineStart, cur.off = cur.i, int(c.start)
		return true
	case x < utf8.RuneSelf:
		v = c.trans[cur.off-1+int(x)]
		if v == tUnknown {
			if c.full {
				return false
			}
			v = c.step(int32(cur.off), rune(x))
			c.trans[cur.off-1+int(x)] = v
		}
	default:
		var r rune
		r, w = utf8.DecodeRune(data[cur.i:])
		k := uint64(cur.off)<<32 | uint64(uint32(r))
		var found bool
		if v, found = c.wide[k]; !found {
			if c.full {
				return false
			}
			v = c.step(int32(cur.off), r)
			c.wide[k] = v
		}
	}
	if v == tMatch {
		end := indexByteFrom(data[:cur.end], cur.i, '\n')
		*spans = append(*spans, cur.lineStart, end)
		cur.i = end + 1
		cur.lineStart, cur.off = cur.i, int(c.start)
		if cur.i > cur.end { // the region's last line had no '\n'
			cur.i, cur.lineStart = cur.end, cur.end
		}
		return true
	}
	cur.off = int(v)
	cur.i += w
	return true
}
