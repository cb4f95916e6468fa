package index

import (
	"sync"
	"unsafe"

	"github.com/blevesearch/bleve/v2/document"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// codeField is a text field analysed by the code analyzer straight into
// its term frequencies: what document.TextField with codeAnalyzer gives
// the index (the same terms, counts and length: TestCodeFieldSame),
// without a token per occurrence. bleve's TextField makes a token stream
// (a pointer and 64 bytes per occurrence) and then a map sized for every
// occurrence; building a large index spent a fifth of its CPU there and
// in collecting that garbage. It carries no term vectors, so it is only
// for fields indexed without them (the content and path fields).
type codeField struct {
	name   string
	value  []byte // nil once analysed, unless stored
	opts   bleveindex.FieldIndexingOptions
	length int
	freqs  bleveindex.TokenFrequencies
	plain  int // len(value) before Analyze dropped it
	size   int // Size's estimate once analysed
}

var _ document.Field = (*codeField)(nil)

func newCodeField(name string, value []byte, opts bleveindex.FieldIndexingOptions) *codeField {
	if opts.IncludeTermVectors() {
		panic("index: codeField has no term vectors")
	}
	return &codeField{name: name, value: value, opts: opts, plain: len(value)}
}

func (f *codeField) Name() string                                          { return f.name }
func (f *codeField) ArrayPositions() []uint64                              { return nil }
func (f *codeField) Options() bleveindex.FieldIndexingOptions              { return f.opts }
func (f *codeField) Value() []byte                                         { return f.value }
func (f *codeField) NumPlainTextBytes() uint64                             { return uint64(f.plain) }
func (f *codeField) EncodedFieldType() byte                                { return 't' }
func (f *codeField) AnalyzedLength() int                                   { return f.length }
func (f *codeField) AnalyzedTokenFrequencies() bleveindex.TokenFrequencies { return f.freqs }

// Size estimates the memory the field holds (scorch's accounting, read
// once per document of a batch): once analysed, the estimate Analyze made
// (TokenFrequencies.Size walks every term).
func (f *codeField) Size() int {
	return int(unsafe.Sizeof(*f)) + len(f.name) + len(f.value) + f.size
}

// termCounter is the scratch of codeField.Analyze, reused from one field
// to the next: the terms seen so far (their bytes in arena) and their
// counts.
type termCounter struct {
	index map[string]int // term (in arena) -> its number
	arena []byte
	spans []termSpan
	lower []byte
}

type termSpan struct {
	off, n, freq int
}

var termCounters = sync.Pool{New: func() any { return &termCounter{index: make(map[string]int, 256)} }}

// Scratch grown past these sizes (a large file's terms) is not kept for
// the next field: clearing a map costs its capacity, not its length.
const (
	maxKeptTerms = 8192
	maxKeptArena = 256 << 10
)

// Analyze counts the field's terms. They are counted in a scratch table
// reused across fields, and the field keeps only what bleve reads, sized
// to the terms found: one map, one TokenFreq per term and one array of
// term bytes. (Sizing the map and its parts from the field's length
// instead held two to three times the memory, and more for short fields
// such as the path: a build's analysed batches are a large part of its
// heap.)
func (f *codeField) Analyze() {
	if f.freqs != nil {
		return // analysed already: value may be gone
	}
	in := f.value
	c := termCounters.Get().(*termCounter)
	n := 0
	codeTokens(in, func(start, end, _ int) {
		n++
		c.lower = appendLower(c.lower[:0], in[start:end])
		if i, ok := c.index[string(c.lower)]; ok {
			c.spans[i].freq++
			return
		}
		off := len(c.arena)
		c.arena = append(c.arena, c.lower...)
		// The key points into arena; a later append that moves arena
		// leaves the bytes it points to as they are.
		c.index[unsafe.String(&c.arena[off], len(c.lower))] = len(c.spans)
		c.spans = append(c.spans, termSpan{off: off, n: len(c.lower), freq: 1})
	})
	terms := make([]byte, len(c.arena))
	copy(terms, c.arena)
	slab := make([]bleveindex.TokenFreq, len(c.spans))
	freqs := make(bleveindex.TokenFrequencies, len(c.spans))
	count := !f.opts.SkipFreqNorm()
	for i, sp := range c.spans {
		term := terms[sp.off : sp.off+sp.n : sp.off+sp.n]
		tf := &slab[i]
		tf.Term = term
		if count {
			tf.SetFrequency(sp.freq)
		}
		freqs[unsafe.String(&term[0], len(term))] = tf
	}
	if len(c.spans) > maxKeptTerms || cap(c.arena) > maxKeptArena {
		c.index = make(map[string]int, 256)
		c.arena = nil
	} else {
		clear(c.index)
		c.arena = c.arena[:0]
	}
	c.spans = c.spans[:0]
	termCounters.Put(c)
	f.length = n
	f.freqs = freqs
	f.size = len(terms) + len(slab)*int(unsafe.Sizeof(bleveindex.TokenFreq{})+unsafe.Sizeof(uintptr(0))+unsafe.Sizeof(""))
	// The text is not stored (the field has no StoreField): bleve reads
	// only the terms from here on, and the batch would hold the text of
	// every file until its segment is built.
	if !f.opts.IsStored() {
		f.value = nil
	}
}
