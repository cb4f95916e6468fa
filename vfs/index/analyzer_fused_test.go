package index

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCodeAnalyzerFused: the one-pass analyzer gives exactly the tokens of
// wordTokenizer followed by partsFilter (what indexes were built with), on
// tricky input and on a few hundred files of GOROOT/src.
func TestCodeAnalyzerFused(t *testing.T) {
	ref := &analysis.DefaultAnalyzer{Tokenizer: wordTokenizer{}, TokenFilters: []analysis.TokenFilter{partsFilter{}}}
	inputs := []string{
		"", "a", "__", "_x_", "parseHTTPHeader snake_case_name __init__ ÉtéCafé naïveΣίσυφος 日本語テキスト",
		"x := foo.BarBaz(qux_1, QUUX2x) // HTTPServer2Go\n\tµs_µs ÀÉÎ",
		string(make([]byte, 70)) + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_bB",
		"\xff\xfeabc\xc3(déf_GhI", "a_b_c", "ABCdefGHI_jk", "x1Y2z3",
	}
	for _, data := range goSrcFiles(t, 300, "strings") {
		inputs = append(inputs, string(data))
	}
	for _, in := range inputs {
		want, got := ref.Analyze([]byte(in)), codeAnalyzer{}.Analyze([]byte(in))
		require.Equal(t, len(want), len(got), "%.60q", in)
		for i := range want {
			require.Equal(t, *want[i], *got[i], "%.60q: token %d", in, i)
		}
	}
}

// BenchmarkAnalyze compares the two-pass and the one-pass analyzer over
// GOROOT/src/net/http's files.
func BenchmarkAnalyze(b *testing.B) {
	files := goSrcFiles(b, 0, "net", "http")
	var size int64
	for _, data := range files {
		size += int64(len(data))
	}
	for _, a := range []struct {
		name string
		a    analysis.Analyzer
	}{
		{"two-pass", &analysis.DefaultAnalyzer{Tokenizer: wordTokenizer{}, TokenFilters: []analysis.TokenFilter{partsFilter{}}}},
		{"fused", codeAnalyzer{}},
	} {
		b.Run(a.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, f := range files {
					a.a.Analyze(f)
				}
			}
		})
	}
}

// TestCodeFieldSame: codeField gives the index what bleve's TextField with
// the code analyzer gives it: the same terms, frequencies and length, with
// and without frequencies (SkipFreqNorm).
func TestCodeFieldSame(t *testing.T) {
	inputs := []string{
		"", "a", "__", "parseHTTPHeader parse_http_header ParseHTTPHeader parse", "ÉtéCafé étécafé ÉTÉ",
		"x := foo.BarBaz(qux_1, QUUX2x) // HTTPServer2Go\n\tµs_µs ÀÉÎ İstanbul",
		"\xff\xfeabc\xc3(déf_GhI", "a_b_c aa_bb_cc", strings.Repeat("word Word WORD ", 500),
	}
	for _, data := range goSrcFiles(t, 100, "net", "http") {
		inputs = append(inputs, string(data))
	}
	for _, opts := range []bleveindex.FieldIndexingOptions{bleveindex.IndexField, bleveindex.IndexField | bleveindex.SkipFreqNorm} {
		for _, in := range inputs {
			want := document.NewTextFieldCustom("content", nil, []byte(in), opts, codeAnalyzer{})
			got := newCodeField("content", []byte(in), opts)
			want.Analyze()
			got.Analyze()
			require.Equal(t, want.AnalyzedLength(), got.AnalyzedLength(), "%.60q", in)
			wf, gf := want.AnalyzedTokenFrequencies(), got.AnalyzedTokenFrequencies()
			require.Equal(t, len(wf), len(gf), "%.60q", in)
			for term, w := range wf {
				g, ok := gf[term]
				require.True(t, ok, "%.60q: term %q missing", in, term)
				assert.Equal(t, string(w.Term), string(g.Term), "%.60q", in)
				assert.Equal(t, w.Frequency(), g.Frequency(), "%.60q: term %q", in, term)
				assert.Empty(t, g.Locations)
			}
		}
	}
}

// BenchmarkCodeField compares bleve's TextField with the code analyzer and
// codeField over GOROOT/src/net/http's files.
func BenchmarkCodeField(b *testing.B) {
	files := goSrcFiles(b, 0, "net", "http")
	var size int64
	for _, data := range files {
		size += int64(len(data))
	}
	b.Run("TextField", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, data := range files {
				document.NewTextFieldCustom("content", nil, data, bleveindex.IndexField, codeAnalyzer{}).Analyze()
			}
		}
	})
	b.Run("codeField", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, data := range files {
				newCodeField("content", data, bleveindex.IndexField).Analyze()
			}
		}
	})
}

// TestAppendLower: appendLower lowers as unicode.ToLower over the runes
// of the text (invalid bytes as U+FFFD), whatever the mix of ASCII,
// other runes and invalid bytes and wherever blocks of eight start.
func TestAppendLower(t *testing.T) {
	want := func(s []byte) []byte {
		var out []byte
		for _, r := range string(s) {
			out = utf8.AppendRune(out, unicode.ToLower(r))
		}
		return out
	}
	alphabet := []string{"A", "Z", "a", "z", "@", "[", "`", "{", "0", " ", "\n", "\x7f", "\x00", "É", "ǅ", "İ", "Ω", "\xff", "\xc3", "ß", "Σ", "日"}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		var s []byte
		for range rnd.IntN(40) {
			s = append(s, alphabet[rnd.IntN(len(alphabet))]...)
		}
		prefix := []byte("pre")
		got := appendLower(slices.Clone(prefix), s)
		require.Equal(t, string(append(prefix, want(s)...)), string(got), "case %d: appendLower(%q)", i, s)
	}
	for _, s := range []string{"", "HELLO, WORLD! ABCDEFGHIJKLMNOPQRSTUVWXYZ @[`{", "func ParseHTTPHeader() // Ünïcödé ÄÖÜ then ASCII AGAIN"} {
		assert.Equal(t, string(want([]byte(s))), string(appendLower(nil, []byte(s))), "appendLower(%q)", s)
	}
}

// wordRunsRef is wordRuns as it was before its ASCII fast path: one rune
// at a time.
func wordRunsRef(input []byte, fn func(start, end int)) {
	start := -1
	for i := 0; i < len(input); {
		c := input[i]
		isWord, size := false, 1
		if c < utf8.RuneSelf {
			isWord = isWordByte(c)
		} else {
			var r rune
			r, size = utf8.DecodeRune(input[i:])
			isWord = unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		}
		switch {
		case isWord && start < 0:
			start = i
		case !isWord && start >= 0:
			fn(start, i)
			start = -1
		}
		i += size
	}
	if start >= 0 {
		fn(start, len(input))
	}
}

// TestWordRuns: wordRuns finds the runs the rune-at-a-time scan finds, on
// runs that start, end or continue with non-ASCII runes, invalid bytes,
// random bytes and a few hundred files of GOROOT/src.
func TestWordRuns(t *testing.T) {
	inputs := []string{
		"", "a", " ", "a b", "ab ", " ab", "é", "aé", "éa", "a é b", "aé-b", "-é-", "日本語 text", "a\xffb", "\xff", "ab\xc3",
		"x := foo.BarBaz(qux_1, QUUX2x) // HTTPServer2Go\n\tµs_µs ÀÉÎ", "naïveΣίσυφος, ÉtéCafé; e\u0301t\u0301e\u0301",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", "_", "9", " ", ".", "\n", "é", "日", "\u0301", "\xff", "\xc3", "€", "-"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(20) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	for _, data := range goSrcFiles(t, 300, "unicode") {
		inputs = append(inputs, string(data))
	}
	runs := func(scan func([]byte, func(int, int)), in string) (out [][2]int) {
		scan([]byte(in), func(s, e int) { out = append(out, [2]int{s, e}) })
		return out
	}
	for _, in := range inputs {
		require.Equal(t, runs(wordRunsRef, in), runs(wordRuns, in), "%.60q", in)
	}
}

// goSrcFiles reads up to max files (every file with max 0) under the
// directory of GOROOT/src named by elems, in walk order.
func goSrcFiles(tb testing.TB, max int, elems ...string) [][]byte {
	tb.Helper()
	var files [][]byte
	dir := filepath.Join(append([]string{runtime.GOROOT(), "src"}, elems...)...)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (max > 0 && len(files) >= max) {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil {
			files = append(files, data)
		}
		return nil
	})
	return files
}
