package grepscan

import (
	"bytes"
	"context"
	"io"
	"slices"
	"unicode/utf8"
)

// grepChunk is the most a streamed file's scan holds at once (more only
// for a longer line when lines are not cut). A variable for tests.
var grepChunk = 256 << 10

// grepReader reads a file Scan opened, up to its size when known,
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
			return buf, false, &ReadError{Path: g.path, Err: err}
		case n == 0:
			return buf, true, nil // a reader that returns nothing has nothing more
		}
	}
	return buf, false, nil
}

// grepStream scans a file Scan opens, a piece of whole lines at a
// time through the worker's buffer. A line longer than the buffer grows
// it when lines are not cut, and is matched a window at a time when they
// are (see longLine).
func (w *grepWorker) grepStream(ctx context.Context, m *Matcher, f File, max int, hits []Hit) ([]Hit, error) {
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
// matcher runs over it a window at a time ([Matcher.matchWindows]),
// and only its first bytes are kept, for the hit. It records the hit when
// the line matches and there is room (room: see scan; *full is set once
// the hits are in). It returns the buffer holding the bytes read past the
// line's end, and whether the line holds a NUL byte (the file is binary).
func (w *grepWorker) longLine(m *Matcher, src *grepReader, buf []byte, lineNo, room int, full *bool) ([]byte, bool, error) {
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
// The answer is exactly the regexp's on the whole line: the
// line DFA carries its state from one part to the next (and when its
// cache fills, starts a new cache from the state it is in, as RE2's DFA
// does), and a pattern too large for the DFA is run by the regexp
// package's NFA over the line's runes (Regexp.MatchReader), which keeps
// no input either.
func (m *Matcher) matchWindows(l *lineWindows) bool {
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
