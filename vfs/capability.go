package vfs

import (
	"context"
	"io"
	"slices"
	"sync"
)

// RangeReader is the optional capability of reading part of a file without
// loading it whole (what a FUSE mount needs for `cat` of a large file).
type RangeReader interface {
	// ReadAt reads len(p) bytes of the file at path starting at off, with
	// io.ReaderAt semantics: fewer bytes only with an error, io.EOF at the
	// end of the file.
	ReadAt(ctx context.Context, path string, p []byte, off int64) (int, error)
}

// ReadAt reads part of a file through fsys's RangeReader, or, when fsys has
// none, by reading the file whole and copying the range.
func ReadAt(ctx context.Context, fsys FileSystem, path string, p []byte, off int64) (int, error) {
	if rr, ok := fsys.(RangeReader); ok {
		return rr.ReadAt(ctx, path, p, off)
	}
	data, err := fsys.Read(ctx, path)
	if err != nil {
		return 0, err
	}
	if off >= int64(len(data)) {
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Precondition guards a conditional write.
type Precondition struct {
	// IfMatch, when set, requires the file's current etag to equal it.
	IfMatch string
	// IfNoneMatch requires that no file exists at the path (create only).
	IfNoneMatch bool
}

// ConditionalWriter is the optional capability of compare-and-swap writes.
type ConditionalWriter interface {
	// WriteIf writes data when cond holds and returns the new etag; when
	// it does not hold it fails with KindConflict and writes nothing.
	WriteIf(ctx context.Context, path string, data []byte, cond Precondition) (etag string, err error)
}

// WriteIf writes through fsys's ConditionalWriter. A tree without one gets
// a best-effort check-then-write (Stat, compare, Write), which is not
// atomic against other writers; the returned etag is then re-read by Stat.
func WriteIf(ctx context.Context, fsys FileSystem, path string, data []byte, cond Precondition) (string, error) {
	if cw, ok := fsys.(ConditionalWriter); ok {
		return cw.WriteIf(ctx, path, data, cond)
	}
	path = Clean(path)
	info, err := fsys.Stat(ctx, path)
	if err != nil {
		return "", err
	}
	if cond.IfNoneMatch && info.Kind != KindMissing {
		return "", NewError(KindConflict, path, nil)
	}
	if cond.IfMatch != "" && (info.Kind != KindFile || info.ETag != cond.IfMatch) {
		return "", NewError(KindConflict, path, nil)
	}
	if err := fsys.Write(ctx, path, data); err != nil {
		return "", err
	}
	info, err = fsys.Stat(ctx, path)
	if err != nil {
		return "", err
	}
	return info.ETag, nil
}

// ChangeOp says what happened to a path.
type ChangeOp uint8

const (
	// ChangeWrite: the file at Path was created or replaced.
	ChangeWrite ChangeOp = iota + 1
	// ChangeDelete: the file at Path was removed.
	ChangeDelete
)

// Change is one notification from a Notifier.
type Change struct {
	Path string
	Op   ChangeOp
}

// Notifier is the optional capability of reporting changes made through
// the tree (a FUSE mount uses it to invalidate the kernel's caches when the
// API writes).
type Notifier interface {
	// Watch calls fn after each change, synchronously and in order, until
	// cancel is called. fn must not call back into the tree's write verbs.
	Watch(fn func(Change)) (cancel func())
}

// Watch subscribes to fsys's changes; ok is false (and cancel a no-op)
// when the tree cannot report them.
func Watch(fsys FileSystem, fn func(Change)) (cancel func(), ok bool) {
	if n, ok := fsys.(Notifier); ok {
		return n.Watch(fn), true
	}
	return func() {}, false
}

// Watchers is a set of change subscribers, embedded by trees that
// implement Notifier. The zero value is ready to use.
type Watchers struct {
	mu   sync.RWMutex
	next int
	// subs in the order subscribed. Watch and cancel replace the slice,
	// never change it in place, so Notify reads it with no copy.
	subs []watcher
}

type watcher struct {
	id int
	fn func(Change)
}

// Watch adds fn and returns a function that removes it.
func (w *Watchers) Watch(fn func(Change)) (cancel func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.next
	w.next++
	w.subs = append(slices.Clip(w.subs), watcher{id: id, fn: fn}) // a new array
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if i := slices.IndexFunc(w.subs, func(s watcher) bool { return s.id == id }); i >= 0 {
			w.subs = slices.Concat(w.subs[:i], w.subs[i+1:]) // a new array
		}
	}
}

// Notify calls every subscriber with c, in the order they subscribed. It
// holds no lock while a subscriber runs, so a subscriber may cancel itself
// (or subscribe another) from inside its callback; a subscriber cancelled
// while a Notify is under way may still get that one change. It allocates
// nothing: every write through a tree calls it.
func (w *Watchers) Notify(c Change) {
	w.mu.RLock()
	subs := w.subs
	w.mu.RUnlock()
	for _, s := range subs {
		s.fn(c)
	}
}
