package grepscan

import (
	"context"
	"slices"
	"unicode/utf8"
)

// maxKeptBuffer is the largest scratch buffer a worker keeps between files.
const maxKeptBuffer = 8 << 20

// A grepWorker is one worker's scratch, reused from file to file: the
// buffer files are loaded into, and the hits of the file being scanned.
type grepWorker struct {
	maxLine int // Limits.MaxLineBytes: hits' lines are cut to it (0: whole)
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
func (w *grepWorker) grepOne(ctx context.Context, m *Matcher, f File, max int, hits []Hit) ([]Hit, error) {
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

// keep keeps buf as the worker's buffer unless it grew too large.
func (w *grepWorker) keep(buf []byte) {
	if cap(buf) <= maxKeptBuffer {
		w.buf = buf[:0]
	} else {
		w.buf = nil
	}
}

// room is how many hits a file may add to hits under max (0: no limit).
func room(max int, hits []Hit) int {
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
func (w *grepWorker) scan(m *Matcher, data []byte, base, room int) bool {
	more := true
	m.eachLine(data, func(n int, line []byte) bool {
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
func (w *grepWorker) flush(path string, hits []Hit) []Hit {
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
		hits = append(hits, Hit{Path: path, LineNumber: n, Line: s[start:w.ends[i]], LineBytes: w.fulls[i]})
		start = w.ends[i]
	}
	return hits
}
