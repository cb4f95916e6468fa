package grepscan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refCut is where a hit's line of more than max bytes is cut, found the
// slow way: walk the line's runes (an invalid byte is a rune of one byte)
// and stop before the first valid multi-byte rune that max would split.
func refCut(line string, max int) int {
	for pos := 0; pos < max; {
		_, n := utf8.DecodeRuneInString(line[pos:])
		if pos+n > max {
			return pos // n > 1: a valid rune max would split
		}
		pos += n
	}
	return max
}

// wantLong is what a grep with lines cut to maxLine yields for text,
// matched line by line with the regexp.
func wantLong(re *regexp.Regexp, path, text string, maxLine int) []string {
	var out []string
	lines := strings.Split(text, "\n")
	if strings.HasSuffix(text, "\n") {
		lines = lines[:len(lines)-1]
	}
	for i, line := range lines {
		if !re.MatchString(line) {
			continue
		}
		full := 0
		if maxLine > 0 && len(line) > maxLine {
			line, full = line[:refCut(line, maxLine)], len(line)
		}
		out = append(out, fmt.Sprintf("%s:%d:%q:%d", path, i+1, line, full))
	}
	return out
}

// streamFiles serves texts (file i at /f%03d) through Open, step bytes per
// Read, counting opens and closes.
func streamFiles(texts []string, step int, opened, closed *atomic.Int32) func(yield func(File, error) bool) {
	return func(yield func(File, error) bool) {
		for i, text := range texts {
			f := File{Path: fmt.Sprintf("/f%03d", i), Open: func(context.Context) (io.ReadCloser, int64, error) {
				opened.Add(1)
				return &countClose{Reader: strings.NewReader(text), step: step, n: closed}, int64(len(text)), nil
			}}
			if !yield(f, nil) {
				return
			}
		}
	}
}

type countClose struct {
	*strings.Reader
	step int
	n    *atomic.Int32
}

func (c *countClose) Read(p []byte) (int, error) { return c.Reader.Read(p[:min(len(p), c.step)]) }
func (c *countClose) Close() error               { c.n.Add(1); return nil }

func grepLong(t *testing.T, m *Matcher, files func(yield func(File, error) bool), lim Limits) []string {
	t.Helper()
	var got []string
	for h, err := range Scan(t.Context(), m, files, lim) {
		require.NoError(t, err)
		got = append(got, fmt.Sprintf("%s:%d:%q:%d", h.Path, h.LineNumber, h.Line, h.LineBytes))
	}
	return got
}

// longText is lines of random lengths (some far longer than the window)
// made of grep-relevant tokens, multi-byte runes and invalid bytes.
func longText(r *rand.Rand, lines, maxLen int) string {
	tokens := []string{"a", "b", "ab", "x", "k", "K", "s", "S", " ", ".", ":", "(", "_", "0", "12", "2024.01",
		"TODO", "FIXME", "func main", "é", "ß", "日本", "\u212a", "ſ", "α", "\xff", "\xe2\x82", "\r", "straße", "unsafe", "kiss"}
	var b strings.Builder
	for range lines {
		n := r.IntN(maxLen)
		if r.IntN(4) == 0 {
			n = r.IntN(4) // many short and empty lines too
		}
		for l := 0; l < n; {
			tok := tokens[r.IntN(len(tokens))]
			b.WriteString(tok)
			l += len(tok)
		}
		b.WriteByte('\n')
	}
	s := b.String()
	if r.IntN(2) == 0 {
		s = strings.TrimSuffix(s, "\n") // a last line without its '\n'
	}
	return s
}

// TestGrepScanLongLinesExact: with MaxLineBytes set, lines longer than the
// stream's window are matched a window at a time; the hits (line numbers,
// cut lines and whole lengths) must be exactly the regexp's, line by
// line, for every pattern, whatever the window and the reads' sizes, and
// the same as scanning the files loaded whole. The DFA path and the
// regexp fallback (no DFA) are both checked.
func TestGrepScanLongLinesExact(t *testing.T) {
	defer func(n int) { grepChunk = n }(grepChunk)
	r := rand.New(rand.NewPCG(16, 10))
	texts := make([]string, 6)
	for i := range texts {
		texts[i] = longText(r, 12, 400)
	}
	for _, pattern := range grepPatterns {
		if strings.Contains(pattern, `\x00`) {
			continue // the texts hold no NUL
		}
		for _, fold := range []bool{false, true} {
			m, err := Compile(pattern, fold)
			require.NoError(t, err)
			for _, noDFA := range []bool{false, true} {
				if noDFA {
					m.dfa = nil
				}
				re := m.re
				for _, maxLine := range []int{1, 7, 40} {
					var want []string
					for i, text := range texts {
						want = append(want, wantLong(re, fmt.Sprintf("/f%03d", i), text, maxLine)...)
					}
					loaded := collectLong(t, m, texts, maxLine)
					assert.Equal(t, want, loaded, "pattern %q fold %v loaded, maxLine %d", pattern, fold, maxLine)
					for _, chunk := range []int{16, 61} {
						grepChunk = chunk
						var opened, closed atomic.Int32
						got := grepLong(t, m, streamFiles(texts, 1+r.IntN(chunk), &opened, &closed), Limits{MaxLineBytes: maxLine})
						require.Equal(t, want, got, "pattern %q fold %v noDFA %v maxLine %d chunk %d", pattern, fold, noDFA, maxLine, chunk)
						require.Equal(t, opened.Load(), closed.Load())
					}
				}
			}
		}
	}
}

// collectLong greps texts loaded whole, lines cut to maxLine.
func collectLong(t *testing.T, m *Matcher, texts []string, maxLine int) []string {
	files := func(yield func(File, error) bool) {
		for i, text := range texts {
			if !yield(File{Path: fmt.Sprintf("/f%03d", i), Load: func(context.Context, *[]byte) ([]byte, error) {
				return []byte(text), nil
			}}, nil) {
				return
			}
		}
	}
	return grepLong(t, m, files, Limits{MaxLineBytes: maxLine})
}

// TestGrepLongLineWindowBoundary puts a match at every position across
// window boundaries of a line far longer than the window: each is found
// exactly once, anchors hold only at the real line ends (not at a
// window's), and a multi-byte rune split by the window is still one rune.
func TestGrepLongLineWindowBoundary(t *testing.T) {
	defer func(n int) { grepChunk = n }(grepChunk)
	grepChunk = 64
	cases := []struct {
		pattern string
		needle  string
	}{
		{"needle", "needle"},
		{`\bneedle\b`, " needle "},
		{"^needle", "needle"}, // only at the line's start
		{"needle$", "needle"}, // only at its end
		{"日本", "日本"},
		{"(?i)straße", "STRASSE"}, // no match: ß does not fold to SS
		{"(?i)straße", "STRAßE"},
		{"a[^a]{3}b", "a日b"}, // three bytes but one rune: no match
		{"a.b", "a日b"},
	}
	for _, c := range cases {
		m, err := Compile(c.pattern, false)
		require.NoError(t, err)
		re := regexp.MustCompile("(?m)" + c.pattern)
		for off := 0; off <= 300; off++ {
			line := strings.Repeat("x", off) + c.needle + strings.Repeat("x", 300-off)
			text := "first\n" + line + "\nlast\n"
			want := wantLong(re, "/f000", text, 10)
			var opened, closed atomic.Int32
			got := grepLong(t, m, streamFiles([]string{text}, 1<<20, &opened, &closed), Limits{MaxLineBytes: 10})
			require.Equal(t, want, got, "pattern %q at offset %d", c.pattern, off)
		}
	}
}

// TestGrepLongLineStops: a long line holding a NUL byte in a late window
// makes the file binary (no hits, not even earlier ones); a failed read in
// the middle of a long line ends the stream with the error; once
// MaxResults hits are in, a later long line is not matched but still read
// for NUL bytes.
func TestGrepLongLineStops(t *testing.T) {
	defer func(n int) { grepChunk = n }(grepChunk)
	grepChunk = 32
	m, err := Compile("hit", false)
	require.NoError(t, err)
	long := strings.Repeat("y", 500)
	bin := "hit one\n" + long + "hit\x00" + long + "\nhit two\n"
	ok := "hit one\n" + long + "hit" + long + "\nhit two\n"
	var opened, closed atomic.Int32
	got := grepLong(t, m, streamFiles([]string{bin, ok}, 7, &opened, &closed), Limits{MaxLineBytes: 5})
	assert.Equal(t, []string{`/f001:1:"hit o":7`, `/f001:2:"yyyyy":1003`, `/f001:3:"hit t":7`}, got)
	assert.Equal(t, int32(2), closed.Load())

	got = grepLong(t, m, streamFiles([]string{"hit\n" + long + "hit\x00\n", ok}, 7, &opened, &closed), Limits{MaxResults: 1, MaxLineBytes: 5})
	assert.Equal(t, []string{`/f001:1:"hit o":7`}, got, "the first file is binary even though its hit was in")

	boom := errors.New("boom")
	files := func(yield func(File, error) bool) {
		yield(File{Path: "/bad", Open: func(context.Context) (io.ReadCloser, int64, error) {
			return io.NopCloser(io.MultiReader(strings.NewReader("hit\n"+long), iotest(boom))), -1, nil
		}}, nil)
	}
	var last error
	for _, err := range Scan(t.Context(), m, files, Limits{MaxLineBytes: 5}) {
		last = err
	}
	require.Error(t, last)
	assert.ErrorIs(t, last, boom)
	assert.Contains(t, last.Error(), "/bad")
}

// TestGrepLongLineCancel: a cancelled context stops the scan of a long
// line between two windows, and the stream ends with the context's error.
func TestGrepLongLineCancel(t *testing.T) {
	defer func(n int) { grepChunk = n }(grepChunk)
	grepChunk = 32
	m, err := Compile("needle", false)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var reads atomic.Int32
	files := func(yield func(File, error) bool) {
		yield(File{Path: "/long", Open: func(context.Context) (io.ReadCloser, int64, error) {
			r := strings.NewReader(strings.Repeat("x", 1<<20) + "needle\n")
			return io.NopCloser(readFunc(func(p []byte) (int, error) {
				if reads.Add(1) == 3 {
					cancel()
				}
				return r.Read(p)
			})), -1, nil
		}}, nil)
	}
	var last error
	hits := 0
	for _, err := range Scan(ctx, m, files, Limits{MaxLineBytes: 5}) {
		if err == nil {
			hits++
		}
		last = err
	}
	assert.ErrorIs(t, last, context.Canceled)
	assert.Zero(t, hits)
	assert.Less(t, reads.Load(), int32(10), "the scan went on after the cancel")
}

type readFunc func([]byte) (int, error)

func (f readFunc) Read(p []byte) (int, error) { return f(p) }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func iotest(err error) io.Reader { return errReader{err} }

// TestDFAFeedResets: a line fed in parts through a pattern whose DFA
// needs more states than a cache holds is still decided exactly: the
// cache starts afresh from the current state when it fills, so it never
// holds more than maxDFAStates+1 states. The matches checked end just
// after such a fresh start, so they depend on what came before it.
func TestDFAFeedResets(t *testing.T) {
	p := "[ab]*a[ab]{12}x" // needs 2^13 states
	re := regexp.MustCompile(p)
	r := rand.New(rand.NewPCG(5, 6))
	// feed runs a fresh cache over line, fed in parts of n bytes, and
	// returns its answer, the most states it held and where it started
	// afresh (the end of the part that did).
	feed := func(line []byte, n int) (bool, int, []int) {
		m, err := Compile(p, false)
		require.NoError(t, err)
		require.NotNil(t, m.dfa)
		dc := m.dfa.get()
		off, most, at := int(dc.start), 0, []int(nil)
		pos := 0
		for part := range parts(line, n) {
			before := len(dc.states)
			pos += len(part)
			if off = dc.feed(off, part); off == tMatch {
				return true, most, at
			}
			if len(dc.states) < before {
				at = append(at, pos)
			}
			most = max(most, len(dc.states))
		}
		return dc.finish(off), most, at
	}
	var b bytes.Buffer
	for range 16_000 {
		b.WriteByte("ab"[r.IntN(2)])
	}
	line := b.Bytes()
	got, most, resets := feed(line, 1)
	assert.Equal(t, re.Match(line), got)
	assert.LessOrEqual(t, most, maxDFAStates+1)
	require.GreaterOrEqual(t, len(resets), 2, "the cache did not start afresh twice")
	matches := 0
	for _, at := range resets[:2] {
		for k := range 14 {
			l := append(slices.Clone(line[:at+k]), 'x')
			want := re.Match(l)
			if want {
				matches++
			}
			for _, n := range []int{1, 1000} {
				got, most, _ := feed(l, n)
				require.Equal(t, want, got, "x %d bytes after a fresh start, parts of %d", k, n)
				require.LessOrEqual(t, most, maxDFAStates+1)
			}
		}
	}
	assert.Positive(t, matches)
}

// parts yields data in parts of n bytes.
func parts(data []byte, n int) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(data) > 0 {
			k := min(n, len(data))
			if !yield(data[:k]) {
				return
			}
			data = data[k:]
		}
	}
}

func TestLineCut(t *testing.T) {
	for _, c := range []struct {
		line string
		max  int
		want int
	}{
		{"abcdef", 3, 3},
		{"ab日本", 3, 2}, // 日 is bytes 2-4
		{"ab日本", 5, 5}, // between the runes
		{"ab日本", 4, 2}, //
		{"\U0001F600x", 3, 0},
		{"\xe2\x82xyz", 1, 1}, // an invalid sequence is cut anywhere
		{"\x80\x80\x80\x80\x80", 2, 2},
		{"é\x80\x80\x80", 3, 3},
	} {
		assert.Equal(t, c.want, lineCut([]byte(c.line), c.max), "%q at %d", c.line, c.max)
		assert.Equal(t, c.want, refCut(c.line, c.max), "ref %q at %d", c.line, c.max)
	}
	for _, c := range []struct {
		b    string
		want int
	}{
		{"abc", 3}, {"ab\xe6\x97", 2}, {"ab\xe6", 2}, {"ab\xe6\x97\xa5", 5}, {"\xf0\x9f\x98", 0}, {"a\x80\x80\x80", 4}, {"", 0},
	} {
		assert.Equal(t, c.want, runeCut([]byte(c.b)), "%q", c.b)
	}
}

// BenchmarkGrepLongLine greps one 16 MiB line streamed in windows, with
// the line cut (matched a window at a time) and whole (the buffer grows
// to the line), for a literal and a DFA pattern, the match at the end.
func BenchmarkGrepLongLine(b *testing.B) {
	text := strings.Repeat("x", 16<<20) + " needle\n"
	for _, p := range []string{"needle", `ne+dle$`} {
		m, err := Compile(p, false)
		require.NoError(b, err)
		for _, maxLine := range []int{2000, 0} {
			b.Run(fmt.Sprintf("%s/max=%d", p, maxLine), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				var opened, closed atomic.Int32
				for b.Loop() {
					n := 0
					for _, err := range Scan(context.Background(), m, streamFiles([]string{text}, 1<<20, &opened, &closed), Limits{MaxLineBytes: maxLine}) {
						require.NoError(b, err)
						n++
					}
					require.Equal(b, 1, n)
				}
			})
		}
	}
}
