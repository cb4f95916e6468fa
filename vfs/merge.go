package vfs

import (
	"container/heap"
	"iter"
)

// Merge k-way merges streams that are each sorted by cmp into one sorted
// stream. With unique, of elements that compare equal only the one from the
// earliest stream is kept (how a union lets an earlier mount shadow a later
// one). Sources are never re-sorted, and only one element per source is
// held. The first error from any source is yielded as the last element.
// Breaking out of the merged loop stops every source.
func Merge[T any](sources []iter.Seq2[T, error], cmp func(a, b T) int, unique bool) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if len(sources) == 1 && !unique {
			for v, err := range sources[0] {
				if !yield(v, err) || err != nil {
					return
				}
			}
			return
		}
		h := &mergeHeap[T]{cmp: cmp}
		stops := make([]func(), 0, len(sources))
		defer func() {
			for _, stop := range stops {
				stop()
			}
		}()
		var zero T
		for i, src := range sources {
			next, stop := iter.Pull2(src)
			stops = append(stops, stop)
			v, err, ok := next()
			if !ok {
				continue
			}
			if err != nil {
				yield(zero, err)
				return
			}
			h.items = append(h.items, mergeItem[T]{v: v, src: i, next: next})
		}
		heap.Init(h)
		var last T
		haveLast := false
		for h.Len() > 0 {
			top := &h.items[0]
			v := top.v
			if !unique || !haveLast || cmp(last, v) != 0 {
				if !yield(v, nil) {
					return
				}
				last, haveLast = v, true
			}
			nv, err, ok := top.next()
			switch {
			case !ok:
				heap.Pop(h)
			case err != nil:
				yield(zero, err)
				return
			default:
				top.v = nv
				heap.Fix(h, 0)
			}
		}
	}
}

type mergeItem[T any] struct {
	v    T
	src  int
	next func() (T, error, bool)
}

type mergeHeap[T any] struct {
	items []mergeItem[T]
	cmp   func(a, b T) int
}

func (h *mergeHeap[T]) Len() int { return len(h.items) }
func (h *mergeHeap[T]) Less(i, j int) bool {
	if c := h.cmp(h.items[i].v, h.items[j].v); c != 0 {
		return c < 0
	}
	return h.items[i].src < h.items[j].src // earlier source first among equals
}
func (h *mergeHeap[T]) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap[T]) Push(x any)    { h.items = append(h.items, x.(mergeItem[T])) }
func (h *mergeHeap[T]) Pop() any {
	n := len(h.items)
	it := h.items[n-1]
	h.items = h.items[:n-1]
	return it
}

// Limit stops a stream after n elements; n <= 0 means no limit.
func Limit[T any](seq iter.Seq2[T, error], n int) iter.Seq2[T, error] {
	if n <= 0 {
		return seq
	}
	return func(yield func(T, error) bool) {
		i := 0
		for v, err := range seq {
			if !yield(v, err) || err != nil {
				return
			}
			if i++; i >= n {
				return
			}
		}
	}
}

// Empty is a stream with no elements: what Search yields without an index.
func Empty[T any]() iter.Seq2[T, error] {
	return func(func(T, error) bool) {}
}

// Fail is a stream whose only element is err.
func Fail[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}
