package grepscan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// scanNaive is the reference Scan: the regexp on every line.
func scanNaive(re *regexp.Regexp, data []byte) []string {
	var out []string
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(data, []byte{'\n'})
	if data[len(data)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if re.Match(l) {
			out = append(out, fmt.Sprintf("%d:%s", i+1, l))
		}
	}
	return out
}

func scanAll(m *Matcher, data []byte) []string {
	var out []string
	m.eachLine(data, func(n int, line []byte) bool {
		out = append(out, fmt.Sprintf("%d:%s", n, line))
		return true
	})
	return out
}

// grepPatterns exercise the literal prefilter (exact, folded, alternated,
// with k and s and non-ASCII under folding), the DFA (classes, repeats,
// anchors, word boundaries, non-ASCII), and their combination.
var grepPatterns = []string{
	"", "a", "ab", "TODO", "TODO|FIXME|XXX", "func main", "kiss", "KS", "s", "ſ", "K",
	"[0-9]{2,}", "[0-9]{4}[.:][0-9]{2}", "^$", "^", "$", "^a", "b$", "^ab$", `^\s*$`, `\bab\b`,
	`\Bb`, `\ba`, `a\b`, `(?i)\bK`, "a.*b", "a.b", "[^a-z]+", "^[^a-z]*$", "x*", "(ab)+c", "a|b|c",
	"é", "ß|é|日本", "[α-ω]+", `\pL+\d`, `\w+\(`, "(?i)straße", "é$", "(a|ab)(c|bcd)", `\Aab`, `ab\z`,
	"k.*s", "[kK]", `\x00`, "\t", "a{3}", "(?s)a.b", "kiss|sack", "(?i)Kelvin", "unsafe", "ask(s)?k",
}

func randomText(r *rand.Rand, n int) []byte {
	alphabet := []string{"a", "b", "c", "k", "K", "s", "S", "ſ", "\u212a", "é", "É", "ß", "日本", "α", "0", "1", "9",
		".", ":", " ", "\t", "\n", "\n", "\n", "(", "_", "TODO", "FIXME", "func main", "\r", "\xff", "straße", "STRASSE"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return []byte(b.String())
}

// TestScanAgreesWithRegexp checks Scan (prefilter, DFA) against the regexp
// run line by line, on random texts, case-sensitive and not.
func TestScanAgreesWithRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var texts [][]byte
	for i := range 60 {
		texts = append(texts, randomText(r, 1+i*37))
	}
	for i := range 30 { // without the Kelvin sign and the long s: the ASCII-folding path
		t := randomText(r, 1+i*53)
		t = bytes.ReplaceAll(t, []byte("\u212a"), []byte("K"))
		texts = append(texts, bytes.ReplaceAll(t, []byte("\u017f"), []byte("s")))
	}
	texts = append(texts, []byte(""), []byte("\n"), []byte("\n\n"), []byte("ab"), []byte("ab\n"), []byte("\nab"))
	defer func(n int) { dfaSplitMin = n }(dfaSplitMin)
	for _, split := range []int{1 << 30, 1} { // one walk, then four interleaved regions
		dfaSplitMin = split
		checkScanAgrees(t, texts)
	}
}

func checkScanAgrees(t *testing.T, texts [][]byte) {
	for _, p := range grepPatterns {
		for _, fold := range []bool{false, true} {
			m, err := Compile(p, fold)
			require.NoError(t, err, "Compile(%q)", p)
			flags := ""
			if fold {
				flags = "(?i)"
			}
			re := regexp.MustCompile(flags + p)
			for _, text := range texts {
				got, want := scanAll(m, text), scanNaive(re, text)
				require.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "Scan(%q, fold=%v) on %q", p, fold, text)
			}
		}
	}
}

// TestDFAFallback fills a DFA cache past its bound: Scan must still agree
// with the regexp, switching to it midway.
func TestDFAFallback(t *testing.T) {
	// (a|b)*a(a|b){12} needs 2^13 states, more than maxDFAStates.
	p := "[ab]*a[ab]{12}x"
	m, err := Compile(p, false)
	require.NoError(t, err)
	require.NotNil(t, m.dfa, "no DFA built")
	r := rand.New(rand.NewPCG(3, 4))
	var b bytes.Buffer
	for range 3000 {
		for range 20 {
			b.WriteByte("ab"[r.IntN(2)])
		}
		if r.IntN(3) == 0 {
			b.WriteByte('x')
		}
		b.WriteByte('\n')
	}
	got, want := scanAll(m, b.Bytes()), scanNaive(regexp.MustCompile(p), b.Bytes())
	// Compared as one string so a failure prints two counts, not 3000 lines.
	require.True(t, strings.Join(got, "\n") == strings.Join(want, "\n"), "Scan disagrees with the regexp after the DFA filled: %d vs %d hits", len(got), len(want))
}

func FuzzScan(f *testing.F) {
	for _, p := range grepPatterns {
		f.Add(p, "ab\nKelvin \u212a\nstraße\n0000.12\n", false)
	}
	f.Fuzz(func(t *testing.T, p, text string, fold bool) {
		m, err := Compile(p, fold)
		if err != nil {
			return
		}
		flags := ""
		if fold {
			flags = "(?i)"
		}
		re, err := regexp.Compile(flags + p)
		require.NoError(t, err, "CompileGrep accepted %q, regexp did not", p)
		want := scanNaive(re, []byte(text))
		defer func(n int) { dfaSplitMin = n }(dfaSplitMin)
		for _, split := range []int{1 << 30, 1} {
			dfaSplitMin = split
			got := scanAll(m, []byte(text))
			require.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "Scan(%q, fold=%v, split=%d) on %q", p, fold, split, text)
		}
	})
}

// benchCorpus is a few MiB of Go source from GOROOT, read once.
var benchCorpus = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	filepath.WalkDir(filepath.Join(runtime.GOROOT(), "src", "net"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".go") && buf.Len() < 8<<20 {
			data, _ := os.ReadFile(p)
			buf.Write(data)
		}
		return nil
	})
	return buf.Bytes()
})

// BenchmarkScan measures Scan alone over Go source, per kind of pattern.
func BenchmarkScan(b *testing.B) {
	data := benchCorpus()
	for _, bc := range []struct {
		name, pattern string
		fold          bool
	}{
		{"literal", "func main", false},
		{"foldWord", "unsafe", true},
		{"alternation", "TODO|FIXME|XXX", false},
		{"literalFree", "[0-9]{4}[.:][0-9]{2}", false},
		{"classAndLiteral", `func [A-Z][a-zA-Z]*Error`, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m, err := Compile(bc.pattern, bc.fold)
			require.NoError(b, err)

			b.SetBytes(int64(len(data)))
			n := 0
			cpu0 := cpuTime()
			for b.Loop() {
				n = 0
				m.eachLine(data, func(int, []byte) bool { n++; return true })
			}
			// CPU time per byte is steadier than wall time on a shared machine.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(len(data)), "cpu-ns/B")
			b.ReportMetric(float64(n), "hits")
		})
	}
}

// cpuTime returns the process's user plus system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
