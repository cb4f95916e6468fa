package grepscan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanSource is a Scan source of n files; file i holds i%3+1 lines
// "hit i.j". It counts the loads of every file, and fails file failAt
// (when >= 0) with a non-skippable error, and the source itself after
// srcErrAt files (when >= 0).
type scanSource struct {
	n, failAt, srcErrAt int
	loads               []atomic.Int32
	yielded             atomic.Int32
}

func newScanSource(n int) *scanSource {
	return &scanSource{n: n, failAt: -1, srcErrAt: -1, loads: make([]atomic.Int32, n)}
}

var errScanLoad = errors.New("load failed")
var errScanSource = errors.New("source failed")

func (s *scanSource) path(i int) string { return fmt.Sprintf("/f%05d", i) }

func (s *scanSource) files() iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		for i := range s.n {
			if i == s.srcErrAt {
				yield(File{}, errScanSource)
				return
			}
			s.yielded.Add(1)
			if !yield(File{Path: s.path(i), Load: func(ctx context.Context, buf *[]byte) ([]byte, error) {
				s.loads[i].Add(1)
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if i%7 == 0 {
					runtime.Gosched() // let other workers overtake this one
				}
				if i == s.failAt {
					return nil, errScanLoad
				}
				var b []byte
				if buf != nil {
					b = (*buf)[:0]
				}
				for j := range i%3 + 1 {
					b = fmt.Appendf(b, "hit %d.%d\n", i, j)
				}
				if buf != nil {
					*buf = b[:0]
				}
				return b, nil
			}}, nil) {
				return
			}
		}
	}
}

// checkLoads fails unless every file the source handed out was loaded
// exactly once, and no other.
func (s *scanSource) checkLoads(t *testing.T) {
	t.Helper()
	y := int(s.yielded.Load())
	for i := range s.n {
		want := int32(0)
		if i < y {
			want = 1
		}
		require.Equal(t, want, s.loads[i].Load(), "file %d (of %d handed out) loaded times", i, y)
	}
}

// wantHits is every hit of files [0, n), in order.
func (s *scanSource) wantHits(n int) []string {
	var out []string
	for i := range n {
		for j := range i%3 + 1 {
			out = append(out, fmt.Sprintf("%s:%d:hit %d.%d", s.path(i), j+1, i, j))
		}
	}
	return out
}

func TestGrepScanOrderAndLoads(t *testing.T) {
	m, err := Compile("hit", false)
	require.NoError(t, err)
	for _, n := range []int{0, 1, 5, 2000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := newScanSource(n)
			var got []string
			for r, err := range Scan(context.Background(), m, s.files(), Limits{}) {
				require.NoError(t, err)
				got = append(got, fmt.Sprintf("%s:%d:%s", r.Path, r.LineNumber, r.Line))
			}
			want := s.wantHits(n)
			require.True(t, fmt.Sprint(got) == fmt.Sprint(want), "got %d hits, want %d; first difference near %v", len(got), len(want), firstDiff(got, want))
			s.checkLoads(t)
		})
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%d: %q vs %q", i, a[i], b[i])
		}
	}
	return fmt.Sprintf("index %d", min(len(a), len(b)))
}

func TestGrepScanStopsAndReleases(t *testing.T) {
	m, err := Compile("hit", false)
	require.NoError(t, err)
	for _, stop := range []int{1, 2, 17, 300} {
		t.Run(fmt.Sprintf("break=%d", stop), func(t *testing.T) {
			s := newScanSource(3000)
			var got []string
			for r, err := range Scan(context.Background(), m, s.files(), Limits{}) {
				require.NoError(t, err)
				got = append(got, fmt.Sprintf("%s:%d:%s", r.Path, r.LineNumber, r.Line))
				if len(got) == stop {
					break
				}
			}
			require.Equal(t, s.wantHits(stop)[:stop], got)
			s.checkLoads(t)
		})
		t.Run(fmt.Sprintf("max=%d", stop), func(t *testing.T) {
			s := newScanSource(3000)
			var got []string
			for r, err := range Scan(context.Background(), m, s.files(), Limits{MaxResults: stop}) {
				require.NoError(t, err)
				got = append(got, fmt.Sprintf("%s:%d:%s", r.Path, r.LineNumber, r.Line))
			}
			require.Equal(t, s.wantHits(stop)[:stop], got)
			s.checkLoads(t)
		})
	}
}

func TestGrepScanErrors(t *testing.T) {
	m, err := Compile("hit", false)
	require.NoError(t, err)
	for _, at := range []int{0, 3, 40, 999} {
		for _, load := range []bool{true, false} {
			t.Run(fmt.Sprintf("at=%d/load=%v", at, load), func(t *testing.T) {
				s := newScanSource(1000)
				want := errScanSource
				if load {
					s.failAt, want = at, errScanLoad
				} else {
					s.srcErrAt = at
				}
				var got []string
				var last error
				for r, err := range Scan(context.Background(), m, s.files(), Limits{}) {
					require.NoError(t, last, "%v after the error", r)
					if err != nil {
						last = err
						continue
					}
					got = append(got, fmt.Sprintf("%s:%d:%s", r.Path, r.LineNumber, r.Line))
				}
				require.ErrorIs(t, last, want, "stream ended with")
				require.Equal(t, s.wantHits(at), got, "hits before the error")
				s.checkLoads(t)
			})
		}
	}
}

// TestPairIndex checks the pair search of a literal (folded or not: AVX2
// 32 and 64 starts at a time, SWAR eight and sixteen) against
// strings.Index, with the literal, its other-case spelling and near misses
// at every position of texts of every length up to a few words, then of
// lengths spread up to a few AVX2 rounds.
func TestPairIndex(t *testing.T) {
	for _, fold := range []bool{true, false} {
		for _, lit := range []string{"unsafe", "qz", "a_b", "x{", "func main", "Func Main", "ne"} {
			f, whole := newLitFinder(reqLit{lit, fold}, func(r rune) bool { return r >= 0x80 })
			require.NotNil(t, f, "newLitFinder(%q)", lit)
			require.True(t, whole, "newLitFinder(%q) whole", lit)
			norm := func(s string) string { return s }
			if fold {
				norm = strings.ToLower
			}
			for size := 0; size < 300; size += 1 + size/70 {
				for at := -1; at < size; at++ {
					text := []byte(strings.Repeat("x"+strings.ToUpper(lit[1:])+lit[:len(lit)-1], size)[:size])
					if at >= 0 {
						ins := []byte(lit)
						if fold {
							ins = []byte(strings.ToUpper(lit))
							ins[0] = lit[0]
						}
						copy(text[at:], ins)
					}
					for from := 0; from <= size; from += 7 {
						want := strings.Index(norm(string(text[from:])), norm(lit))
						if want >= 0 {
							want += from
						} else {
							want = none
						}
						var st [2]int
						require.Equal(t, want, f.index(text, from, &st), "lit %q (fold %v) in %q from %d", lit, fold, text, from)
					}
				}
			}
		}
	}
}

// readCloser is a file opened by a streaming File: it reads at most
// step bytes per call, and counts its closes.
type readCloser struct {
	r      *strings.Reader
	step   int
	closed *atomic.Int32
}

func (r *readCloser) Read(p []byte) (int, error) { return r.r.Read(p[:min(len(p), r.step)]) }
func (r *readCloser) Close() error               { r.closed.Add(1); return nil }

// TestGrepScanStreams checks files read through Open, in pieces of whole
// lines, against the same files loaded whole: line numbers across pieces,
// lines longer than a piece, a NUL after the first piece (the file is
// binary and skipped whole), max inside a file, sizes known and not, short
// reads; and that every opened file is closed.
func TestGrepScanStreams(t *testing.T) {
	defer func(n int) { grepChunk = n }(grepChunk)
	r := rand.New(rand.NewPCG(5, 6))
	var texts []string
	for i := range 40 {
		texts = append(texts, string(randomText(r, i*23)))
	}
	texts = append(texts, strings.Repeat("kiss ", 100), "a\x00b\nkiss\n", strings.Repeat("kiss\n", 50)+"\x00",
		strings.Repeat("x", 300)+"kiss\n"+strings.Repeat("y", 70), "", "\n", "kiss")
	for _, pattern := range []string{"kiss", "s", "^$", "[0-9]{2,}", "K|é"} {
		m, err := Compile(pattern, true)
		require.NoError(t, err)
		for _, max := range []int{0, 1, 7} {
			grepChunk = 1 << 20
			want := collectScan(t, m, texts, max)
			for _, chunk := range []int{1, 2, 7, 64} {
				for _, step := range []int{1, 5, 1 << 20} {
					grepChunk = chunk
					var opened, closed atomic.Int32
					files := func(yield func(File, error) bool) {
						for i, text := range texts {
							size := int64(len(text))
							if i%2 == 1 {
								size = -1
							}
							if !yield(File{Path: fmt.Sprintf("/f%03d", i), Open: func(ctx context.Context) (io.ReadCloser, int64, error) {
								if err := ctx.Err(); err != nil {
									return nil, 0, err
								}
								opened.Add(1)
								return &readCloser{strings.NewReader(text), step, &closed}, size, nil
							}}, nil) {
								return
							}
						}
					}
					var got []string
					for h, err := range Scan(t.Context(), m, files, Limits{MaxResults: max}) {
						require.NoError(t, err)
						got = append(got, fmt.Sprintf("%s:%d:%s", h.Path, h.LineNumber, h.Line))
					}
					require.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "pattern %q max %d chunk %d step %d", pattern, max, chunk, step)
					require.Equal(t, opened.Load(), closed.Load(), "files opened vs closed")
				}
			}
		}
	}
}

// collectScan greps texts (file i at /f%03d) loaded whole.
func collectScan(t *testing.T, m *Matcher, texts []string, max int) []string {
	t.Helper()
	files := func(yield func(File, error) bool) {
		for i, text := range texts {
			if !yield(File{Path: fmt.Sprintf("/f%03d", i), Load: func(context.Context, *[]byte) ([]byte, error) {
				return []byte(text), nil
			}}, nil) {
				return
			}
		}
	}
	var out []string
	for h, err := range Scan(t.Context(), m, files, Limits{MaxResults: max}) {
		require.NoError(t, err)
		out = append(out, fmt.Sprintf("%s:%d:%s", h.Path, h.LineNumber, h.Line))
	}
	return out
}

// TestHasOddFold finds the Kelvin sign and the long s at every position of
// texts long enough for the AVX2 scan, among near misses (the same lead
// bytes in other runes: ’ — ſ's neighbours).
func TestHasOddFold(t *testing.T) {
	filler := "a’b—cŁdő\u2129\u212b"
	for size := 0; size < 200; size += 7 {
		base := strings.Repeat(filler, size/len(filler)+1)[:size]
		base = strings.ToValidUTF8(base, "")
		require.False(t, hasOddFold([]byte(base)), "hasOddFold(%q)", base)
		for _, odd := range []string{"\u212a", "\u017f"} {
			for at := 0; at <= len(base); at += 3 {
				text := base[:at] + odd + base[at:]
				require.True(t, hasOddFold([]byte(text)), "hasOddFold(%q) holds %q at %d", text, odd, at)
			}
		}
	}
}

// BenchmarkHasOddFold scans prose dense in the lead bytes of the Kelvin
// sign and the long s (’ — Ł), where a search by the lead byte stops often.
func BenchmarkHasOddFold(b *testing.B) {
	data := []byte(strings.Repeat("It’s a test — of Łódź’s prose, isn’t it? ", 50000))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if hasOddFold(data) {
			b.Fatal("found")
		}
	}
}

// TestScanSkipFile checks the skip signal: a loader that returns
// SkipFile, or an error wrapping it, has its file skipped and the scan go
// on; a reader that fails part-way ends the stream with a *ReadError.
func TestScanSkipFile(t *testing.T) {
	m, err := Compile("hit", false)
	require.NoError(t, err)
	load := func(data string, err error) func(context.Context, *[]byte) ([]byte, error) {
		return func(context.Context, *[]byte) ([]byte, error) { return []byte(data), err }
	}
	files := []File{
		{Path: "/a", Load: load("hit a\n", nil)},
		{Path: "/b", Load: load("", SkipFile)},
		{Path: "/c", Load: load("", fmt.Errorf("open /c: %w", SkipFile))},
		{Path: "/d", Open: func(context.Context) (io.ReadCloser, int64, error) { return nil, 0, SkipFile }},
		{Path: "/e", Load: load("hit e\n", nil)},
		{Path: "/f", Open: func(context.Context) (io.ReadCloser, int64, error) {
			return io.NopCloser(io.MultiReader(strings.NewReader("hit f\n"), iotest(errScanLoad))), -1, nil
		}},
	}
	var got []string
	var last error
	for h, err := range Scan(context.Background(), m, indexed(files), Limits{}) {
		if err != nil {
			last = err
			break
		}
		got = append(got, h.Path+":"+h.Line)
	}
	assert.Equal(t, []string{"/a:hit a", "/e:hit e"}, got)
	var re *ReadError
	require.ErrorAs(t, last, &re)
	assert.Equal(t, "/f", re.Path)
	assert.ErrorIs(t, last, errScanLoad)
}

// indexed yields files with no error, in order.
func indexed(files []File) iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		for _, f := range files {
			if !yield(f, nil) {
				return
			}
		}
	}
}
