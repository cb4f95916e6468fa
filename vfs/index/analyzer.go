package index

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// Names under which the code analyzer and its parts are registered in
// bleve's registry. An index's mapping refers to AnalyzerName, so these
// names are part of the on-disk format.
const (
	// TokenizerName splits text into words: runs of letters, digits and
	// underscores. Everything else (spaces, punctuation, '/', '.') separates.
	TokenizerName = "julyfs_code_words"
	// PartsFilterName lowercases each word and adds its parts: the pieces
	// of a camelCase, PascalCase or snake_case identifier.
	PartsFilterName = "julyfs_code_parts"
	// AnalyzerName is TokenizerName followed by PartsFilterName.
	AnalyzerName = "julyfs_code"
)

// Term length bounds: shorter terms (single letters) match too much to be
// useful, longer ones are hashes and encoded blobs, not words.
const (
	minTermLen = 2
	maxTermLen = 64
)

func init() {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(registry.RegisterTokenizer(TokenizerName,
		func(map[string]any, *registry.Cache) (analysis.Tokenizer, error) { return wordTokenizer{}, nil }))
	must(registry.RegisterTokenFilter(PartsFilterName,
		func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) { return partsFilter{}, nil }))
	must(registry.RegisterAnalyzer(AnalyzerName,
		func(map[string]any, *registry.Cache) (analysis.Analyzer, error) { return newCodeAnalyzer(), nil }))
}

// newCodeAnalyzer returns the analyzer for code and prose: words split on
// punctuation and paths, lowercased, each identifier kept whole and in its
// parts ("parseHTTPHeader" is parsehttpheader, parse, http, header).
func newCodeAnalyzer() analysis.Analyzer {
	return codeAnalyzer{}
}

// codeAnalyzer is wordTokenizer followed by partsFilter in one pass: the
// same tokens (TestCodeAnalyzerFused), without the tokenizer's
// intermediate tokens (analysis is a fifth of a build's CPU).
type codeAnalyzer struct{}

// Analyze splits input into words, and each identifier into its parts.
func (codeAnalyzer) Analyze(input []byte) analysis.TokenStream {
	var (
		out   = make(analysis.TokenStream, 0, len(input)/6)
		slab  []analysis.Token
		arena []byte
	)
	codeTokens(input, func(start, end, pos int) {
		term := input[start:end]
		if len(arena)+len(term) > cap(arena) {
			arena = make([]byte, 0, max(4096, len(term)))
		}
		n := len(arena)
		arena = appendLower(arena, term)
		if len(slab) == cap(slab) {
			slab = make([]analysis.Token, 0, 256)
		}
		slab = append(slab, analysis.Token{
			Start: start, End: end,
			Term: arena[n:len(arena):len(arena)], Position: pos, Type: analysis.AlphaNumeric,
		})
		out = append(out, &slab[len(slab)-1])
	})
	return out
}

// codeTokens calls fn with the bounds and position of each token the code
// analyzer makes of input, in order: each word (leading and trailing
// underscores dropped), then, for an identifier of several parts, each
// part at the word's position. Terms are lowercased by the caller; those
// shorter than minTermLen or longer than maxTermLen bytes (before
// lowercasing) are not emitted. The one scan of codeAnalyzer and codeField.
func codeTokens(input []byte, fn func(start, end, pos int)) {
	var parts [][2]int
	pos := 0
	wordRuns(input, func(start, end int) {
		for start < end && input[start] == '_' {
			start++
		}
		for end > start && input[end-1] == '_' {
			end--
		}
		if end-start < minTermLen || end-start > maxTermLen {
			return
		}
		pos++
		fn(start, end, pos)
		w := input[start:end]
		parts = splitParts(w, parts[:0])
		if len(parts) < 2 {
			return
		}
		for _, p := range parts {
			if n := p[1] - p[0]; n >= minTermLen && n <= maxTermLen {
				fn(start+p[0], start+p[1], pos)
			}
		}
	})
}

// wordTokenizer emits the runs of word characters (letters, digits, '_') of
// its input. Terms alias the input.
type wordTokenizer struct{}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// wordByte[c] is isWordByte(c) for ASCII c; false for the bytes of a
// multi-byte rune, which wordRuns decodes.
var wordByte = func() (t [256]bool) {
	for c := range utf8.RuneSelf {
		t[c] = isWordByte(byte(c))
	}
	return t
}()

// Tokenize splits input into words.
func (wordTokenizer) Tokenize(input []byte) analysis.TokenStream {
	var (
		out  = make(analysis.TokenStream, 0, len(input)/8)
		slab []analysis.Token
		pos  = 0
	)
	emit := func(start, end int) {
		if len(slab) == cap(slab) {
			slab = make([]analysis.Token, 0, 256)
		}
		pos++
		slab = append(slab, analysis.Token{Start: start, End: end, Term: input[start:end:end], Position: pos, Type: analysis.AlphaNumeric})
		out = append(out, &slab[len(slab)-1])
	}
	wordRuns(input, emit)
	return out
}

// wordRuns calls fn with the bounds of each run of word characters of
// input (letters, digits, nonspacing marks, '_'), in order: the one scan
// both the tokenizer and the fused analyzer make.
func wordRuns(input []byte, fn func(start, end int)) {
	start := -1
	for i := 0; i < len(input); {
		c := input[i]
		if c < utf8.RuneSelf {
			// ASCII: the rest of a run in one loop.
			if !wordByte[c] {
				if start >= 0 {
					fn(start, i)
					start = -1
				}
				i++
				continue
			}
			if start < 0 {
				start = i
			}
			i++
			for i < len(input) && wordByte[input[i]] {
				i++
			}
			if i < len(input) && input[i] < utf8.RuneSelf {
				fn(start, i)
				start = -1
				i++
			}
			continue
		}
		r, size := utf8.DecodeRune(input[i:])
		isWord := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
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

// partsFilter lowercases each word and, for an identifier made of several
// parts, adds the parts at the same position. Leading and trailing
// underscores are dropped; terms shorter than minTermLen or longer than
// maxTermLen are dropped.
type partsFilter struct{}

// Filter expands and lowercases the words of input.
func (partsFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, len(input)+len(input)/4)
	var (
		slab  []analysis.Token
		arena []byte
	)
	add := func(tok *analysis.Token, start, end int, term []byte, pos int) {
		if len(term) < minTermLen || len(term) > maxTermLen {
			return
		}
		if len(arena)+len(term) > cap(arena) {
			arena = make([]byte, 0, max(4096, len(term)))
		}
		n := len(arena)
		arena = appendLower(arena, term)
		if len(slab) == cap(slab) {
			slab = make([]analysis.Token, 0, 256)
		}
		slab = append(slab, analysis.Token{
			Start: tok.Start + start, End: tok.Start + end,
			Term: arena[n:len(arena):len(arena)], Position: pos, Type: tok.Type,
		})
		out = append(out, &slab[len(slab)-1])
	}
	pos := 0
	var parts [][2]int
	for _, tok := range input {
		term := tok.Term
		lo, hi := 0, len(term)
		for lo < hi && term[lo] == '_' {
			lo++
		}
		for hi > lo && term[hi-1] == '_' {
			hi--
		}
		if hi-lo < minTermLen || hi-lo > maxTermLen {
			continue
		}
		pos++
		word := term[lo:hi]
		add(tok, lo, hi, word, pos)
		parts = splitParts(word, parts[:0])
		if len(parts) < 2 {
			continue
		}
		for _, p := range parts {
			add(tok, lo+p[0], lo+p[1], word[p[0]:p[1]], pos)
		}
	}
	return out
}

// splitParts appends to dst the [start, end) ranges of the parts of
// identifier w: split at underscores, at a lower-case letter or digit
// followed by an upper-case one ("parseHeader"), and before the last
// upper-case letter of a run followed by a lower-case one ("HTTPHeader").
func splitParts(w []byte, dst [][2]int) [][2]int {
	start := 0
	flush := func(end int) {
		if end > start {
			dst = append(dst, [2]int{start, end})
		}
	}
	prev := rune(0)
	for i := 0; i < len(w); {
		r, size := rune(w[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(w[i:])
		}
		switch {
		case r == '_':
			flush(i)
			start = i + size
		case unicode.IsUpper(r) && prev != 0 && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush(i)
			start = i
		case unicode.IsLower(r) && unicode.IsUpper(prev) && i-utf8.RuneLen(prev) > start:
			flush(i - utf8.RuneLen(prev))
			start = i - utf8.RuneLen(prev)
		}
		prev = r
		i += size
	}
	flush(len(w))
	return dst
}

// appendLower appends the lower-case form of s to dst: ASCII letters
// lowered, every other rune through unicode.ToLower (an invalid byte
// becomes U+FFFD, as ranging over a string gives it). ASCII text is
// lowered eight bytes at a time (snippets lower whole files).
func appendLower(dst, s []byte) []byte {
	const (
		high  = 0x8080808080808080
		geA   = 0x3f3f3f3f3f3f3f3f // + 0x80-'A': a byte's high bit is set iff it is >= 'A'
		gtZ   = 0x2525252525252525 // + 0x7f-'Z': ... iff it is > 'Z'
		block = 8
	)
	for i := 0; i < len(s); {
		if len(s)-i >= block {
			w := binary.LittleEndian.Uint64(s[i:])
			if w&high == 0 {
				// No byte over 0x7f, so the additions carry into no
				// other byte.
				upper := (w + geA) &^ (w + gtZ) & high
				dst = binary.LittleEndian.AppendUint64(dst, w|upper>>2)
				i += block
				continue
			}
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(s[i:])
			dst = utf8.AppendRune(dst, unicode.ToLower(r))
			i += n
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
		i++
	}
	return dst
}
