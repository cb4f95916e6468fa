// Package overlay stacks trees that share one root into a read-only tree:
// the contract's overlayFs. Earlier layers win.
//
// # Precedence
//
// Stat and Read answer from the first layer that has the path. List and
// Glob merge the layers' sorted streams keeping the first of equal paths,
// so an upper layer's entry shadows a lower one's. Grep and Search report
// a file's hits only from the layer that wins for its path: a lower
// layer's stale copy of an upper file yields nothing. The overlay has no
// whiteouts, and an upper file does not hide a lower directory's contents
// from List of that directory or from Glob and Grep below it: shadowing is
// by equal path. MaxResults goes to the top layer only (all its hits are
// kept); the others run uncapped and are stopped once the overlay has
// enough.
//
// # Downed layers
//
// A layer that fails with anything but "missing" or "not found" (an
// unreachable host, a broken disk) costs only its own files: Stat, Read,
// Grep and Search fail only when no layer served the call, and List and
// Glob merge the layers that answered. An error is yielded only when every
// layer failed. Each layer is logged once per overlay, at its first
// failure, with the cause. Cancellation of the context is never a downed
// layer: it ends the call.
//
// # Writes
//
// The overlay is read-only: Write and Delete fail with "read-only mount".
//
// # Capabilities
//
// An overlay follows the rule of the vfs package doc's "Capabilities of
// wrappers". It forwards [vfs.RangeReader] and [vfs.FileOpener] to the
// winning layer (through [vfs.ReadAt] and [vfs.OpenFile], so a layer
// without them gets the fallback) and [vfs.Symlinker]'s Readlink to the
// first layer with anything at the path. It refuses [vfs.Stager],
// [vfs.Renamer], [vfs.DirMaker], [vfs.DirRemover], Symlink,
// [vfs.ModeSetter], [vfs.TimeSetter] and [vfs.LinkTimeSetter] with
// "read-only mount" for every path, as vfs/readonly does, and offers no
// [vfs.ConditionalWriter] ([vfs.WriteIf]'s fallback ends in Write, which
// refuses). It is a [vfs.Notifier] exactly when every layer is one ([New]
// returns a tree with Watch only then): it reports each change a layer
// reports, at the same path, so a FUSE mount hears of changes other writers
// make to the layers.
//
// # Concurrency
//
// An overlay is immutable after New and safe for concurrent use as long as
// its layers are. It caches nothing.
package overlay

import (
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"sync/atomic"

	"github.com/julyfs/julyfs/vfs"
)

// Options configures an overlay.
type Options struct {
	// Logger receives one warning per layer, the first time the layer
	// fails. Nil means slog.Default().
	Logger *slog.Logger
}

// FS is an overlay of layers. Create it with [New] or [NewWithOptions],
// which return an *FS, or a tree embedding one that is also a
// [vfs.Notifier].
type FS struct {
	layers []vfs.FileSystem
	logger *slog.Logger
	logged []atomic.Bool // per layer: its failure was logged
}

var (
	_ vfs.FileSystem  = (*FS)(nil)
	_ vfs.RangeReader = (*FS)(nil)
)

// New returns the overlay of layers, the first one on top: an *FS, or,
// when every layer is a vfs.Notifier, a tree embedding the *FS that is a
// vfs.Notifier too. With no layers it is an empty tree.
func New(layers ...vfs.FileSystem) vfs.FileSystem { return NewWithOptions(Options{}, layers...) }

// NewWithOptions is New with options.
func NewWithOptions(opts Options, layers ...vfs.FileSystem) vfs.FileSystem {
	o := &FS{layers: append([]vfs.FileSystem(nil), layers...), logger: opts.Logger}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	o.logged = make([]atomic.Bool, len(layers))
	for _, l := range o.layers {
		if _, ok := l.(vfs.Notifier); !ok {
			return o
		}
	}
	return notifyingFS{o}
}

// failed records that layer i failed with err, logging it the first time.
func (o *FS) failed(i int, err error) {
	if !o.logged[i].CompareAndSwap(false, true) {
		return
	}
	attrs := []any{"layer", i, "err", err}
	if cause := errors.Unwrap(err); cause != nil {
		attrs = append(attrs, "cause", cause) // a PathError's message omits it
	}
	o.logger.Warn("overlay: layer down; serving the other layers", attrs...)
}

// fatal reports whether err from a layer ends the call instead of downing
// the layer: a cancelled context, or a malformed query every layer would
// reject.
func fatal(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	switch vfs.KindOf(err) {
	case vfs.KindInvalidGlobPattern, vfs.KindInvalidGrepPattern:
		return true
	}
	return false
}

// Stat describes path from the first layer that has it.
func (o *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	var firstErr error
	served := len(o.layers) == 0
	for i, l := range o.layers {
		info, err := l.Stat(ctx, p)
		if err != nil {
			if fatal(ctx, err) {
				return vfs.FileInfo{}, err
			}
			o.failed(i, err)
			firstErr = cmpErr(firstErr, err)
			continue
		}
		served = true
		if info.Kind != vfs.KindMissing {
			info.Path = p
			return info, nil
		}
	}
	if !served {
		return vfs.FileInfo{}, firstErr
	}
	if p == "/" {
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
	}
	return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// Read returns the file at path from the first layer that has it.
func (o *FS) Read(ctx context.Context, path string) ([]byte, error) {
	var data []byte
	err := o.first(ctx, vfs.Clean(path), func(l vfs.FileSystem, p string) error {
		var err error
		data, err = l.Read(ctx, p)
		return err
	})
	return data, err
}

// ReadAt reads part of the file at path from the first layer that has it.
func (o *FS) ReadAt(ctx context.Context, path string, buf []byte, off int64) (int, error) {
	var n int
	err := o.first(ctx, vfs.Clean(path), func(l vfs.FileSystem, p string) error {
		var err error
		n, err = vfs.ReadAt(ctx, l, p, buf, off)
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	})
	if err == nil && n < len(buf) {
		err = io.EOF
	}
	return n, err
}

// first calls read on each layer in turn until one has clean path p: it
// succeeds or fails with anything but not found (is a directory, say). A
// layer that is down is skipped; its error is returned only when no layer
// answered.
func (o *FS) first(ctx context.Context, p string, read func(vfs.FileSystem, string) error) error {
	var firstErr error
	served := len(o.layers) == 0
	for i, l := range o.layers {
		err := read(l, p)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, vfs.ErrNotFound):
			served = true
			continue
		case errors.Is(err, vfs.ErrIsDir), fatal(ctx, err):
			return err
		}
		o.failed(i, err)
		firstErr = cmpErr(firstErr, err)
	}
	if !served {
		return firstErr
	}
	return vfs.NotFound(p)
}

// Write fails: an overlay is read-only.
func (o *FS) Write(_ context.Context, path string, _ []byte) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// Delete fails: an overlay is read-only.
func (o *FS) Delete(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// tagged is an element of a layer's stream with the layer it came from.
type tagged[T any] struct {
	v     T
	layer int
}

// call is one streaming call across the layers: it tracks which layers
// failed so the merged stream can fail only when all of them did.
type call struct {
	o        *FS
	ctx      context.Context
	failures atomic.Int32
	firstErr atomic.Pointer[error]
	// missing counts the layers whose stream said "not found": a host
	// tree without a grep's scope, which holds nothing there but is not
	// down.
	missing    atomic.Int32
	missingErr atomic.Pointer[error]
}

// guard wraps layer i's stream: elements are tagged with i, and an error
// that downs the layer ends the layer's stream quietly (a fatal one is
// passed on).
func guard[T any](c *call, i int, src iter.Seq2[T, error]) iter.Seq2[tagged[T], error] {
	return func(yield func(tagged[T], error) bool) {
		for v, err := range src {
			if err != nil {
				if fatal(c.ctx, err) {
					yield(tagged[T]{}, err)
					return
				}
				if vfs.KindOf(err) == vfs.KindNotFound {
					c.missing.Add(1)
					c.missingErr.CompareAndSwap(nil, &err)
					return
				}
				c.o.failed(i, err)
				c.failures.Add(1)
				c.firstErr.CompareAndSwap(nil, &err)
				return
			}
			if !yield(tagged[T]{v: v, layer: i}, nil) {
				return
			}
		}
	}
}

// merge merges the layers' streams made by open, each tagged with its
// layer, and ends with an error when every layer failed.
func merge[T any](ctx context.Context, o *FS, open func(l vfs.FileSystem, i int) iter.Seq2[T, error], cmp func(a, b T) int, unique bool) iter.Seq2[tagged[T], error] {
	return func(yield func(tagged[T], error) bool) {
		c := &call{o: o, ctx: ctx}
		sources := make([]iter.Seq2[tagged[T], error], len(o.layers))
		for i, l := range o.layers {
			sources[i] = guard(c, i, open(l, i))
		}
		tcmp := func(a, b tagged[T]) int { return cmp(a.v, b.v) }
		var merged iter.Seq2[tagged[T], error]
		switch len(sources) {
		case 0:
			return
		case 1:
			merged = sources[0]
		default:
			merged = vfs.Merge(sources, tcmp, unique)
		}
		for v, err := range merged {
			if !yield(v, err) || err != nil {
				return
			}
		}
		failures, missing := int(c.failures.Load()), int(c.missing.Load())
		switch {
		case failures > 0 && failures+missing == len(o.layers):
			yield(tagged[T]{}, *c.firstErr.Load())
		case missing == len(o.layers):
			yield(tagged[T]{}, *c.missingErr.Load()) // every layer a host tree without the scope
		}
	}
}

// List yields the children of the directory at prefix in every layer, the
// upper layer's entry for a path that several have.
func (o *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return untag(merge(ctx, o, func(l vfs.FileSystem, _ int) iter.Seq2[vfs.DirEntry, error] {
		return l.List(ctx, prefix)
	}, vfs.CompareDirEntries, true))
}

// Glob yields the entries under dir matching pattern in every layer, the
// upper layer's entry for a path that several have.
func (o *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	if _, err := vfs.CompilePattern(pattern); err != nil {
		return vfs.Fail[vfs.DirEntry](err)
	}
	return untag(merge(ctx, o, func(l vfs.FileSystem, _ int) iter.Seq2[vfs.DirEntry, error] {
		return l.Glob(ctx, pattern, dir)
	}, vfs.CompareDirEntries, true))
}

func untag[T any](src iter.Seq2[tagged[T], error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for t, err := range src {
			if !yield(t.v, err) || err != nil {
				return
			}
		}
	}
}

// wins reports whether layer j serves clean path p: no layer above it has
// p. A layer above that is down does not count.
func (o *FS) wins(ctx context.Context, p string, j int) (bool, error) {
	for i := range j {
		info, err := o.layers[i].Stat(ctx, p)
		if err != nil {
			if fatal(ctx, err) {
				return false, err
			}
			o.failed(i, err)
			continue
		}
		if info.Kind != vfs.KindMissing {
			return false, nil
		}
	}
	return true, nil
}

// Grep yields the matching lines of the files the overlay shows, by path
// then line: a file's hits come from the layer that wins for its path.
func (o *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return func(yield func(vfs.GrepResult, error) bool) {
		q, err := vfs.CompileGrepQuery(q) // compiled once, for every layer
		if err != nil {
			yield(vfs.GrepResult{}, err)
			return
		}
		hits := merge(ctx, o, func(l vfs.FileSystem, i int) iter.Seq2[vfs.GrepResult, error] {
			lq := q
			if i > 0 {
				// Some of a lower layer's hits are dropped, so it cannot
				// stop at the cap; it is stopped when the overlay has
				// enough.
				lq.MaxResults = 0
			}
			return l.Grep(ctx, lq)
		}, vfs.CompareGrepResults, false)
		n := 0
		lastPath, lastLayer, lastKeep := "", -1, false
		for h, err := range hits {
			if err != nil {
				yield(vfs.GrepResult{}, err)
				return
			}
			keep := true
			if h.layer > 0 {
				if h.v.Path != lastPath || h.layer != lastLayer {
					lastPath, lastLayer = h.v.Path, h.layer
					if lastKeep, err = o.wins(ctx, vfs.Clean(h.v.Path), h.layer); err != nil {
						yield(vfs.GrepResult{}, err)
						return
					}
				}
				keep = lastKeep
			}
			if !keep {
				continue
			}
			if !yield(h.v, nil) {
				return
			}
			if n++; q.MaxResults > 0 && n >= q.MaxResults {
				return
			}
		}
	}
}

// Search yields the ranked results of every layer, by score descending then
// path: a path's result comes from the layer that wins for it.
func (o *FS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		results := merge(ctx, o, func(l vfs.FileSystem, i int) iter.Seq2[vfs.SearchResult, error] {
			lq := q
			if i > 0 {
				lq.MaxResults = 0
			}
			return l.Search(ctx, lq)
		}, vfs.CompareSearchResults, false)
		n := 0
		for r, err := range results {
			if err != nil {
				yield(vfs.SearchResult{}, err)
				return
			}
			if r.layer > 0 {
				keep, err := o.wins(ctx, vfs.Clean(r.v.Path), r.layer)
				if err != nil {
					yield(vfs.SearchResult{}, err)
					return
				}
				if !keep {
					continue
				}
			}
			if !yield(r.v, nil) {
				return
			}
			if n++; q.MaxResults > 0 && n >= q.MaxResults {
				return
			}
		}
	}
}

// MakeDir fails: an overlay is read-only (so a mount refuses mkdir at
// once rather than holding a directory nothing can be written under).
func (o *FS) MakeDir(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}

// RemoveDir fails: an overlay is read-only.
func (o *FS) RemoveDir(_ context.Context, path string) error {
	return vfs.ReadOnly(vfs.Clean(path))
}
