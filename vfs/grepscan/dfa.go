package grepscan

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"sync"
	"unicode/utf8"
	"unsafe"
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

// The transition table has a column per byte and one for eol. Columns of
// non-ASCII bytes stay tUnknown (their runes' transitions are in wide), so
// the scan tests one entry per byte whatever the byte.
const (
	eolCol = 256
	stride = 257
)

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

// scanLine runs the automaton over one line (data holds no '\n': once a
// line has been found not to match in some state, that state's '\n' entry
// leads to the next line's start, see slowStep). It returns whether the
// line matches and where it stopped: at the end when it does not,
// anywhere in the line when it does. ok is false when the cache is full.
func (c *dfaCache) scanLine(data []byte) (matched bool, stop int, ok bool) {
	off := int(c.start) // offset+1 of the current state's row
	for i := 0; i < len(data); i++ {
		b := data[i]
		v := c.trans[off-1+int(b)]
		if v > 0 {
			off = int(v)
			continue
		}
		if b < utf8.RuneSelf {
			switch v {
			case tNewline:
				return c.endLine(off), i, !c.full || c.trans[off-1+eolCol] != tUnknown
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
	if c.full && c.trans[off-1+eolCol] == tUnknown {
		return false, len(data), false
	}
	return c.endLine(off), len(data), true
}

// endLine reports whether the state at row off matches at the end of a line.
func (c *dfaCache) endLine(off int) bool {
	v := c.trans[off-1+eolCol]
	if v == tUnknown {
		v = c.step(int32(off), eol)
		c.trans[off-1+eolCol] = v
	}
	return v == tMatch
}

// feed runs the automaton from the state at row offset+1 off over part
// of a line: no '\n', and no UTF-8 sequence that the next part completes.
// It returns the state reached, or tMatch as soon as a match ends. It
// never gives up: when the cache is full it starts a fresh one from the
// state it is in (see reset), so one line of any length is decided in
// bounded memory.
func (c *dfaCache) feed(off int, part []byte) int {
	for i := 0; i < len(part); i++ {
		b := part[i]
		v := c.trans[off-1+int(b)]
		if v > 0 {
			off = int(v)
			continue
		}
		if b < utf8.RuneSelf {
			if c.full {
				off = c.reset(off)
			}
			if v = c.trans[off-1+int(b)]; v == tUnknown {
				v = c.step(int32(off), rune(b))
				c.trans[off-1+int(b)] = v
			}
		} else {
			r, w := utf8.DecodeRune(part[i:])
			i += w - 1
			k := uint64(off)<<32 | uint64(uint32(r))
			var found bool
			if v, found = c.wide[k]; !found {
				if c.full {
					off = c.reset(off)
					k = uint64(off)<<32 | uint64(uint32(r))
				}
				v = c.step(int32(off), r)
				c.wide[k] = v
			}
		}
		if v == tMatch {
			return tMatch
		}
		off = int(v)
	}
	return off
}

// finish reports whether the state at row offset+1 off, reached at the
// end of a line fed in parts, is a match.
func (c *dfaCache) finish(off int) bool {
	if c.full && c.trans[off-1+eolCol] == tUnknown {
		off = c.reset(off)
	}
	return c.endLine(off)
}

// reset empties a full cache, keeping only the start state and the state
// at row offset+1 off, whose new row offset+1 it returns.
func (c *dfaCache) reset(off int) int {
	st := c.states[(off-1)/stride]
	c.states = c.states[:0]
	c.trans = c.trans[:0]
	clear(c.index)
	clear(c.wide)
	c.full = false
	c.start = c.startState()
	c.list = append(c.list[:0], st.pcs...)
	return int(c.intern(st.prevWord, st.lineStart))
}

func indexByteFrom(data []byte, from int, b byte) int {
	if j := bytes.IndexByte(data[from:], b); j >= 0 {
		return from + j
	}
	return len(data)
}

// dfaSplitMin is the smallest buffer scanned as four interleaved regions.
var dfaSplitMin = 4 << 10

// dfaCursor is one walk of matchLines over the region [start, end) of the
// buffer (whole lines): its position and its state's row offset+1. done
// is set when a match ran to the region's end.
type dfaCursor struct {
	i, start, end, off int
	done               bool
}

// matchLines finds the matching lines of data. A buffer of dfaSplitMin
// bytes or more is split at line boundaries into four regions walked at
// once: a table-driven DFA spends its time waiting for each load, and four
// independent walks overlap their waits. It returns the [start, end)
// bounds of the matching lines in order, or ok false when the cache
// filled up.
func (c *dfaCache) matchLines(data []byte) (spans []int, ok bool) {
	var cur [4]dfaCursor
	var found [4][]int
	start := 0
	for k := range cur {
		end := len(data)
		if k < len(cur)-1 && len(data) >= dfaSplitMin {
			end = max(start, min(indexByteFrom(data, len(data)*(k+1)/len(cur), '\n')+1, len(data)))
		}
		cur[k] = dfaCursor{i: start, start: start, end: end, off: int(c.start)}
		start = end
	}
	for {
		walkFour(c.trans, data, &cur)
		stuck := false
		for k := range cur {
			cu := &cur[k]
			if cu.i >= cu.end {
				stuck = true
				continue
			}
			// This cursor may need more than the table.
			if v := c.trans[cu.off-1+int(data[cu.i])]; v > 0 {
				cu.off = int(v)
				cu.i++
			} else if !c.slowStep(data, cu, &found[k]) {
				return nil, false
			}
		}
		if stuck {
			break
		}
	}
	for k := range cur {
		if !c.run(data, &cur[k], &found[k]) {
			return nil, false
		}
		spans = append(spans, found[k]...)
	}
	return spans, true
}

// walkFour advances four cursors over data through trans, one byte each
// per step, while every transition is in the table (positive). It is the
// scan's hot loop, so it indexes without bounds checks: each cursor has
// i <= end <= len(data), and its offset is a state's in trans, whose rows
// hold stride entries, so off-1+x for a byte x is always within trans.
func walkFour(trans []int32, data []byte, cur *[4]dfaCursor) {
	for k := range cur {
		if cur[k].end > len(data) || cur[k].i > cur[k].end || cur[k].off < 1 || cur[k].off-1+stride > len(trans) {
			panic("grepscan: walkFour out of range")
		}
	}
	tp := unsafe.Pointer(unsafe.SliceData(trans))
	dp := unsafe.Pointer(unsafe.SliceData(data))
	i0, o0, e0 := cur[0].i, cur[0].off, cur[0].end
	i1, o1, e1 := cur[1].i, cur[1].off, cur[1].end
	i2, o2, e2 := cur[2].i, cur[2].off, cur[2].end
	i3, o3, e3 := cur[3].i, cur[3].off, cur[3].end
	for i0 < e0 && i1 < e1 && i2 < e2 && i3 < e3 {
		v0 := *(*int32)(unsafe.Add(tp, (o0-1+int(*(*byte)(unsafe.Add(dp, i0))))*4))
		v1 := *(*int32)(unsafe.Add(tp, (o1-1+int(*(*byte)(unsafe.Add(dp, i1))))*4))
		v2 := *(*int32)(unsafe.Add(tp, (o2-1+int(*(*byte)(unsafe.Add(dp, i2))))*4))
		v3 := *(*int32)(unsafe.Add(tp, (o3-1+int(*(*byte)(unsafe.Add(dp, i3))))*4))
		if v0 <= 0 || v1 <= 0 || v2 <= 0 || v3 <= 0 {
			break
		}
		o0, o1, o2, o3 = int(v0), int(v1), int(v2), int(v3)
		i0++
		i1++
		i2++
		i3++
	}
	cur[0].i, cur[0].off = i0, o0
	cur[1].i, cur[1].off = i1, o1
	cur[2].i, cur[2].off = i2, o2
	cur[3].i, cur[3].off = i3, o3
}

// run walks cur to the end of its region, then decides the region's last
// line when it has no '\n'.
func (c *dfaCache) run(data []byte, cur *dfaCursor, spans *[]int) bool {
	d := data[:cur.end]
	for cur.i < len(d) {
		trans, i, off := c.trans, cur.i, cur.off
		for i < len(d) {
			v := trans[off-1+int(d[i])]
			if v <= 0 {
				break
			}
			off = int(v)
			i++
		}
		cur.i, cur.off = i, off
		if i < len(d) && !c.slowStep(data, cur, spans) {
			return false
		}
	}
	if cur.done || cur.end == cur.start || data[cur.end-1] == '\n' {
		return true
	}
	if c.full && c.trans[cur.off-1+eolCol] == tUnknown {
		return false
	}
	if c.endLine(cur.off) {
		*spans = append(*spans, lineStart(data, cur.start, cur.end), cur.end)
	}
	return true
}

// lineStart returns the start of the line holding position i of data,
// looking back no further than from.
func lineStart(data []byte, from, i int) int {
	return from + bytes.LastIndexByte(data[from:i], '\n') + 1
}

// slowStep advances cur by one rune the table does not answer directly: a
// '\n' in a state not yet known to fail at the end of a line, a
// transition not computed yet, or a non-ASCII rune. It records a matching
// line's bounds in spans. When a line ends without a match, the state's
// '\n' entry is set to the start state, so that later lines ending in it
// stay in the table.
func (c *dfaCache) slowStep(data []byte, cur *dfaCursor, spans *[]int) bool {
	x := data[cur.i]
	w := 1
	var v int32
	switch {
	case x == '\n':
		if c.full && c.trans[cur.off-1+eolCol] == tUnknown {
			return false
		}
		if c.endLine(cur.off) {
			*spans = append(*spans, lineStart(data, cur.start, cur.i), cur.i)
		} else {
			c.trans[cur.off-1+'\n'] = c.start
		}
		cur.i++
		cur.off = int(c.start)
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
		r, w = utf8.DecodeRune(data[cur.i:cur.end])
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
		*spans = append(*spans, lineStart(data, cur.start, cur.i), end)
		cur.i = end + 1
		cur.off = int(c.start)
		if cur.i > cur.end { // the region's last line had no '\n'
			cur.i, cur.done = cur.end, true
		}
		return true
	}
	cur.off = int(v)
	cur.i += w
	return true
}
