package index

import (
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
	value  []byte
	opts   bleveindex.FieldIndexingOptions
	length int
	freqs  bleveindex.TokenFrequencies
}

var _ document.Field = (*codeField)(nil)

func newCodeField(name string, value []byte, opts bleveindex.FieldIndexingOptions) *codeField {
	if opts.IncludeTermVectors() {
		panic("index: codeField has no term vectors")
	}
	return &codeField{name: name, value: value, opts: opts}
}

func (f *codeField) Name() string                                          { return f.name }
func (f *codeField) ArrayPositions() []uint64                              { return nil }
func (f *codeField) Options() bleveindex.FieldIndexingOptions              { return f.opts }
func (f *codeField) Value() []byte                                         { return f.value }
func (f *codeField) NumPlainTextBytes() uint64                             { return uint64(len(f.value)) }
func (f *codeField) EncodedFieldType() byte                                { return 't' }
func (f *codeField) AnalyzedLength() int                                   { return f.length }
func (f *codeField) AnalyzedTokenFrequencies() bleveindex.TokenFrequencies { return f.freqs }

// Size estimates the memory the field holds (scorch's accounting).
func (f *codeField) Size() int {
	n := int(unsafe.Sizeof(*f)) + len(f.name) + len(f.value)
	if f.freqs != nil {
		n += f.freqs.Size()
	}
	return n
}

// Analyze counts the field's terms. A term's bytes and its map key share
// one arena that is only appended to, so neither is copied again.
func (f *codeField) Analyze() {
	in := f.value
	freqs := make(bleveindex.TokenFrequencies, min(len(in)/16+8, 1<<14))
	var (
		arena []byte
		slab  []bleveindex.TokenFreq
		lower []byte
		n     int
	)
	count := !f.opts.SkipFreqNorm()
	codeTokens(in, func(start, end, _ int) {
		n++
		lower = appendLower(lower[:0], in[start:end])
		if tf, ok := freqs[string(lower)]; ok {
			if count {
				tf.SetFrequency(tf.Frequency() + 1)
			}
			return
		}
		if len(arena)+len(lower) > cap(arena) {
			arena = make([]byte, 0, max(8192, len(lower)))
		}
		k := len(arena)
		arena = append(arena, lower...)
		term := arena[k:len(arena):len(arena)]
		if len(slab) == cap(slab) {
			slab = make([]bleveindex.TokenFreq, 0, 256)
		}
		slab = append(slab, bleveindex.TokenFreq{Term: term})
		tf := &slab[len(slab)-1]
		if count {
			tf.SetFrequency(1)
		}
		freqs[unsafe.String(&term[0], len(term))] = tf
	})
	f.length = n
	f.freqs = freqs
}
