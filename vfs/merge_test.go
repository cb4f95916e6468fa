package vfs_test

import (
	"cmp"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

type item struct {
	key string
	src int
}

func byKey(a, b item) int { return cmp.Compare(a.key, b.key) }

// source is a sorted stream that records how far it was pulled and
// whether it was stopped, optionally failing after its elements.
type source struct {
	items   []item
	err     error
	pulled  int
	stopped bool
	done    bool
}

func (s *source) seq() iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		defer func() { s.stopped = !s.done }()
		for _, it := range s.items {
			s.pulled++
			if !yield(it, nil) {
				return
			}
		}
		if s.err != nil {
			yield(item{}, s.err)
		}
		s.done = true
	}
}

func src(i int, keys ...string) *source {
	s := &source{}
	for _, k := range keys {
		s.items = append(s.items, item{k, i})
	}
	return s
}

func drain(seq iter.Seq2[item, error]) ([]string, error) {
	var out []string
	for it, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%s@%d", it.key, it.src))
	}
	return out, nil
}

func seqs(ss ...*source) []iter.Seq2[item, error] {
	var out []iter.Seq2[item, error]
	for _, s := range ss {
		out = append(out, s.seq())
	}
	return out
}

func TestMerge(t *testing.T) {
	for _, c := range []struct {
		name   string
		srcs   []*source
		unique bool
		want   []string
	}{
		{"interleaved", []*source{src(0, "a", "c", "e"), src(1, "b", "d")}, false, []string{"a@0", "b@1", "c@0", "d@1", "e@0"}},
		{"duplicates kept, earlier source first", []*source{src(0, "a", "b"), src(1, "a", "b"), src(2, "b")}, false, []string{"a@0", "a@1", "b@0", "b@1", "b@2"}},
		{"unique: earlier source shadows", []*source{src(0, "b", "c"), src(1, "a", "b", "c"), src(2, "c", "d")}, true, []string{"a@1", "b@0", "c@0", "d@2"}},
		{"unique: repeats within a source", []*source{src(0, "a", "a", "b")}, true, []string{"a@0", "b@0"}},
		{"one source", []*source{src(0, "a", "a")}, false, []string{"a@0", "a@0"}},
		{"empty sources", []*source{src(0), src(1, "x"), src(2)}, true, []string{"x@1"}},
		{"no sources", nil, true, nil},
		{"path order, not segment order", []*source{src(0, "/a", "/a/x"), src(1, "/a-b", "/a.c")}, false, []string{"/a@0", "/a-b@1", "/a.c@1", "/a/x@0"}},
	} {
		got, err := drain(vfs.Merge(seqs(c.srcs...), byKey, c.unique))
		assert.NoError(t, err, "%s: Merge", c.name)
		assert.Equal(t, c.want, got, "%s: Merge", c.name)
		for i, s := range c.srcs {
			assert.False(t, s.stopped, "%s: source %d stopped though the merge was drained", c.name, i)
		}
	}
}

func TestMergeStops(t *testing.T) {
	a, b := src(0, "a", "c", "e", "g"), src(1, "b", "d", "f")
	for it := range vfs.Merge(seqs(a, b), byKey, false) {
		if it.key == "c" {
			break
		}
	}
	assert.True(t, a.stopped, "after a break: source a not stopped")
	assert.True(t, b.stopped, "after a break: source b not stopped")
	assert.LessOrEqual(t, a.pulled, 3, "after a break at c: elements pulled from a; a merge holds one per source")
	assert.LessOrEqual(t, b.pulled, 2, "after a break at c: elements pulled from b; a merge holds one per source")
}

func TestMergeError(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name string
		srcs []*source
		want []string
	}{
		{"error after elements", []*source{src(0, "a", "c", "e"), {items: []item{{"b", 1}}, err: boom}}, []string{"a@0", "b@1"}},
		{"error first", []*source{src(0, "a"), {err: boom}}, nil},
		{"one failing source", []*source{{items: []item{{"a", 0}}, err: boom}}, []string{"a@0"}},
	} {
		var got []string
		var gotErr error
		for it, err := range vfs.Merge(seqs(c.srcs...), byKey, true) {
			require.NoError(t, gotErr, "%s: Merge yielded %v after an error", c.name, it)
			if err != nil {
				gotErr = err
				continue
			}
			got = append(got, fmt.Sprintf("%s@%d", it.key, it.src))
		}
		assert.ErrorIs(t, gotErr, boom, "%s: Merge", c.name)
		assert.Equal(t, c.want, got, "%s: Merge", c.name)
		for i, s := range c.srcs {
			assert.True(t, s.done || s.stopped, "%s: source %d left running", c.name, i)
		}
	}
}

func TestLimit(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		n       int
		s       *source
		want    []string
		wantErr error
	}{
		{0, src(0, "a", "b", "c"), []string{"a@0", "b@0", "c@0"}, nil},
		{-1, src(0, "a", "b"), []string{"a@0", "b@0"}, nil},
		{2, src(0, "a", "b", "c"), []string{"a@0", "b@0"}, nil},
		{5, src(0, "a", "b"), []string{"a@0", "b@0"}, nil},
		{2, &source{items: []item{{"a", 0}}, err: boom}, []string{"a@0"}, boom},
		{1, &source{items: []item{{"a", 0}}, err: boom}, []string{"a@0"}, nil},
	} {
		got, err := drain(vfs.Limit(c.s.seq(), c.n))
		assert.Equal(t, c.want, got, "Limit(%d)", c.n)
		if c.wantErr == nil {
			assert.NoError(t, err, "Limit(%d)", c.n)
		} else {
			assert.ErrorIs(t, err, c.wantErr, "Limit(%d)", c.n)
		}
		if c.n > 0 && len(c.s.items) > c.n {
			assert.LessOrEqual(t, c.s.pulled, c.n, "Limit(%d) pulled too many elements", c.n)
		}
	}
}

func TestEmptyAndFail(t *testing.T) {
	got, err := drain(vfs.Empty[item]())
	assert.Nil(t, got, "Empty()")
	assert.NoError(t, err, "Empty()")
	boom := errors.New("boom")
	n := 0
	for _, err := range vfs.Fail[item](boom) {
		n++
		assert.Same(t, boom, err, "Fail(boom) yielded another error")
	}
	assert.Equal(t, 1, n, "Fail(boom) yielded elements")

}

func ExampleMerge() {
	a := slices.Values([]string{"/a", "/c"})
	b := slices.Values([]string{"/a", "/b"})
	withErr := func(s iter.Seq[string]) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			for v := range s {
				if !yield(v, nil) {
					return
				}
			}
		}
	}
	for p, err := range vfs.Merge([]iter.Seq2[string, error]{withErr(a), withErr(b)}, cmp.Compare[string], true) {
		if err != nil {
			panic(err)
		}
		fmt.Println(p)
	}
	// Output:
	// /a
	// /b
	// /c
}
