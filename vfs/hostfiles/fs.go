package hostfiles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/grepscan"
)

// maxCachedETags bounds the per-FS etag cache. Past it an arbitrary entry
// is dropped, and the next write of that path is unconditional, as if it
// had never been read.
const maxCachedETags = 1 << 16

// FS is a [Store] scope as a vfs.FileSystem: the contract's hostFs(files,
// scope). See the package doc for its caching and CAS rule.
type FS struct {
	store Store
	scope Scope

	mu    sync.Mutex
	etags map[string]string // path -> etag of the last read or write

	// paths orders this FS's own verbs on one path (striped by hash): a
	// write holds its stripe across reading the cached etag, the store's
	// CAS and caching the new etag, reads hold it shared. So concurrent
	// writes of one FS follow each other instead of conflicting, and only
	// a change made elsewhere fails a CAS.
	paths [64]sync.RWMutex

	watchers    vfs.Watchers
	wmu         sync.Mutex
	nwatch      int
	cancelStore func()
}

var (
	_ vfs.FileSystem        = (*FS)(nil)
	_ vfs.ConditionalWriter = (*FS)(nil)
	_ vfs.Notifier          = (*FS)(nil)
)

// New returns scope of store as a tree. It fails when the scope name is
// invalid (see [Scope.Validate]). The FS does not own store: closing the
// store is the caller's business, after the last FS over it is done.
func New(store Store, scope Scope) (*FS, error) {
	if err := scope.Validate(); err != nil {
		return nil, err
	}
	return &FS{store: store, scope: scope, etags: map[string]string{}}, nil
}

// Store returns the store behind the tree.
func (f *FS) Store() Store { return f.store }

// Scope returns the tree's scope.
func (f *FS) Scope() Scope { return f.scope }

func (f *FS) stripe(p string) *sync.RWMutex {
	h := uint32(2166136261)
	for i := 0; i < len(p); i++ {
		h = (h ^ uint32(p[i])) * 16777619
	}
	return &f.paths[h%uint32(len(f.paths))]
}

func (f *FS) cached(p string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.etags[p]
}

func (f *FS) remember(p, etag string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if etag == "" {
		delete(f.etags, p)
		return
	}
	if _, ok := f.etags[p]; !ok && len(f.etags) >= maxCachedETags {
		for k := range f.etags {
			delete(f.etags, k)
			break
		}
	}
	f.etags[p] = etag
}

// pathError turns a store error about clean p into the contract's error.
func pathError(p string, err error) error {
	var ce *ConflictError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return &vfs.PathError{Kind: vfs.KindConflict, Path: p, Err: ce}
	case errors.Is(err, ErrNotFound):
		return vfs.NotFound(p)
	case errors.Is(err, ErrIsDir):
		return vfs.IsDir(p)
	case errors.Is(err, ErrNotDir):
		return vfs.WriteFailed(p, err)
	}
	var pe *vfs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	return &vfs.PathError{Kind: vfs.KindOther, Path: p, Err: err}
}

// isDir reports whether some file is under the directory key p.
func (f *FS) isDir(ctx context.Context, p string) (bool, error) {
	if p == "/" {
		return true, nil
	}
	lo, _ := DirRange(p)
	for _, err := range f.store.List(ctx, f.scope, lo, lo) {
		return err == nil, err
	}
	return false, nil
}

// List yields the children of the directory at prefix. It reads the
// store's key-ordered listing, skipping each subdirectory's keys with one
// new listing from just past them, so it costs one store row per child
// plus one listing per subdirectory, and holds back only entries a later
// directory could sort before (see listOrder).
func (f *FS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		p := vfs.Clean(prefix)
		lo, _ := DirRange(p)
		var pend listOrder
		start := lo
		for {
			next := ""
			for m, err := range f.store.List(ctx, f.scope, lo, start) {
				if err != nil {
					yield(vfs.DirEntry{}, pathError(p, err))
					return
				}
				rest := m.Key[len(lo):]
				name, _, sub := strings.Cut(rest, "/")
				if sub {
					pend.add(name, vfs.DirEntry{Path: vfs.Join(p, name), Kind: vfs.KindDir})
					next = lo + name + "0"
					if !pend.flush(name+"/", yield) {
						return
					}
					break
				}
				pend.add(name, vfs.DirEntry{Path: m.Key, Kind: vfs.KindFile})
				if !pend.flush(name, yield) {
					return
				}
			}
			if next == "" {
				break
			}
			start = next
		}
		if err := ctx.Err(); err != nil {
			yield(vfs.DirEntry{}, err)
			return
		}
		pend.flush("", yield)
	}
}

// listOrder holds the children of a directory between the store's key
// order and the contract's path order. They differ only where a name has
// a byte below '/' after a prefix that is also a directory: "a.txt" comes
// before "a/x" in key order but the directory "a" sorts before "a.txt".
// An entry is held while such a directory could still appear.
type listOrder struct {
	names []string
	ents  []vfs.DirEntry
}

func (o *listOrder) add(name string, e vfs.DirEntry) {
	i, _ := slices.BinarySearch(o.names, name)
	o.names = slices.Insert(o.names, i, name)
	o.ents = slices.Insert(o.ents, i, e)
}

// flush yields the held entries no later key can precede; cur is the
// key (relative to the directory) the listing has reached, "" at the end.
func (o *listOrder) flush(cur string, yield func(vfs.DirEntry, error) bool) bool {
	n := 0
	for ; n < len(o.names); n++ {
		if cur != "" && blocked(o.names[n], cur) {
			break
		}
		if !yield(o.ents[n], nil) {
			return false
		}
	}
	o.names = o.names[n:]
	o.ents = o.ents[n:]
	return true
}

// blocked reports whether a directory whose name is a proper prefix of
// name, followed in name by a byte below '/', could still be listed at a
// key after cur.
func blocked(name, cur string) bool {
	for i := 1; i < len(name); i++ {
		if name[i] < '/' && name[:i]+"/" > cur {
			return true
		}
	}
	return false
}

// Stat describes path.
func (f *FS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return vfs.FileInfo{}, err
	}
	if p == "/" {
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
	}
	m, err := f.store.Stat(ctx, f.scope, p)
	switch {
	case err == nil:
		return vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: m.Size, ModTime: m.ModTime, ETag: m.ETag}, nil
	case !errors.Is(err, ErrNotFound):
		return vfs.FileInfo{}, pathError(p, err)
	}
	dir, err := f.isDir(ctx, p)
	switch {
	case err != nil:
		return vfs.FileInfo{}, pathError(p, err)
	case dir:
		return vfs.FileInfo{Path: p, Kind: vfs.KindDir}, nil
	}
	return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
}

// Glob yields the entries under dir matching pattern.
func (f *FS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Glob(ctx, f, pattern, dir)
}

// Read returns the contents of the file at path and remembers its etag:
// the next Write of path through this FS is a CAS on it.
func (f *FS) Read(ctx context.Context, path string) ([]byte, error) {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, vfs.IsDir(p)
	}
	l := f.stripe(p)
	l.RLock()
	data, m, err := f.store.Get(ctx, f.scope, p)
	if err == nil {
		f.remember(p, m.ETag)
	}
	l.RUnlock()
	if err == nil {
		return data, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, pathError(p, err)
	}
	if dir, derr := f.isDir(ctx, p); derr != nil {
		return nil, pathError(p, derr)
	} else if dir {
		return nil, vfs.IsDir(p)
	}
	return nil, vfs.NotFound(p)
}

// Grep yields the lines matching q. It walks the files under q.Path and
// streams each through the grep engine ([vfs.GrepTree]) from the store's
// [Opener] (a piece of whole lines at a time, and with q.MaxLineBytes a
// window of a longer line), so memory stays bounded whatever the size of
// a file; a store without Opener is read whole with Get. A file removed
// between the walk and its read is skipped. Grep is not a read for the
// CAS rule: it caches no etag.
func (f *FS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return vfs.GrepTree(ctx, q, vfs.GrepSource{
		Stat: f.Stat,
		File: f.grepFile,
		Dir: func(ctx context.Context, dir string, filter *vfs.GrepFilter) iter.Seq2[grepscan.File, error] {
			return func(yield func(grepscan.File, error) bool) {
				for p, err := range vfs.WalkFiles(ctx, f, dir) {
					if err != nil {
						yield(grepscan.File{}, err)
						return
					}
					if filter.Match(p) && !yield(f.grepFile(p), nil) {
						return
					}
				}
			}
		},
	})
}

// grepFile is the file at clean p for the grep engine.
func (f *FS) grepFile(p string) grepscan.File {
	return grepscan.File{Path: p, Open: func(ctx context.Context) (io.ReadCloser, int64, error) {
		r, size, err := f.open(ctx, p)
		if errors.Is(err, vfs.ErrNotFound) {
			err = fmt.Errorf("%w: %w", grepscan.SkipFile, err)
		}
		return r, size, err
	}}
}

// open opens the file at clean p for reading, through the store's Opener
// when it has one. A missing file is "not found: p".
func (f *FS) open(ctx context.Context, p string) (io.ReadCloser, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if o, ok := f.store.(Opener); ok {
		r, m, err := o.Open(ctx, f.scope, p)
		if err != nil {
			return nil, 0, pathError(p, err)
		}
		return r, m.Size, nil
	}
	data, _, err := f.store.Get(ctx, f.scope, p)
	if err != nil {
		return nil, 0, pathError(p, err)
	}
	return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
}

// Write creates or replaces the file at path. When this FS has read or
// written path before, the write is a CAS on the etag it saw then and
// fails with "conflict: <path>" (a *ConflictError inside, carrying both
// etags) when the file changed since; otherwise it is unconditional.
func (f *FS) Write(ctx context.Context, path string, data []byte) error {
	p := vfs.Clean(path)
	_, err := f.writeIf(ctx, p, data, nil)
	return err
}

// WriteIf writes data when cond holds and returns the new etag; a refused
// write fails with "conflict: <path>" and changes nothing. An IfMatch etag
// other than the one this FS last read or wrote for path is refused the
// same way (the caller saw that version only by Stat, which is no read for
// the CAS rule). The new etag is remembered as Write's is.
func (f *FS) WriteIf(ctx context.Context, path string, data []byte, cond vfs.Precondition) (string, error) {
	return f.writeIf(ctx, vfs.Clean(path), data, &cond)
}

// writeIf writes clean p under cond, or under the cached etag when cond
// is nil.
func (f *FS) writeIf(ctx context.Context, p string, data []byte, cond *vfs.Precondition) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if p == "/" {
		return "", vfs.IsDir(p)
	}
	l := f.stripe(p)
	l.Lock()
	defer l.Unlock()
	c := vfs.Precondition{IfMatch: f.cached(p)}
	if cond != nil {
		// An explicit etag that is not the one this tree last read or
		// wrote is a version the caller only saw by Stat: the spec's rule
		// (a write is a CAS on what this tree read) is the stricter one.
		if c.IfMatch != "" && cond.IfMatch != "" && cond.IfMatch != c.IfMatch {
			return "", pathError(p, &ConflictError{Key: p, Want: c.IfMatch, Have: cond.IfMatch})
		}
		c = *cond
	}
	m, err := f.store.Put(ctx, f.scope, p, data, c)
	if err != nil {
		return "", pathError(p, err)
	}
	f.remember(p, m.ETag)
	return m.ETag, nil
}

// Delete removes the file at path. Like Write, it is a CAS on the etag
// this FS last read or wrote for path, when there is one: a delete after
// another writer changed the file fails with "conflict: <path>" (a
// *ConflictError inside) and removes nothing, so it never silently drops
// that writer's change. A path this FS has not read or written is deleted
// unconditionally. (The contract states the rule for writes; a delete is
// the same lost update, so it follows it. docs/hostfiles.md.)
func (f *FS) Delete(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == "/" {
		return vfs.IsDir(p)
	}
	l := f.stripe(p)
	l.Lock()
	err := f.store.Delete(ctx, f.scope, p, vfs.Precondition{IfMatch: f.cached(p)})
	if err == nil {
		f.remember(p, "")
	}
	l.Unlock()
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrNotFound) {
		return pathError(p, err)
	}
	if dir, derr := f.isDir(ctx, p); derr != nil {
		return pathError(p, derr)
	} else if dir {
		return vfs.IsDir(p)
	}
	return vfs.NotFound(p)
}

// Search yields nothing: host files have no index.
func (f *FS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(yield func(vfs.SearchResult, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(vfs.SearchResult{}, err)
		}
	}
}

// Watch calls fn after each change to the scope: changes made through
// this FS or any other FS over the same store value before the verb
// returns, changes made elsewhere (another process, another host) when
// the store's change feed delivers them. The FS subscribes to the store
// while it has at least one watcher.
func (f *FS) Watch(fn func(vfs.Change)) (cancel func()) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	c := f.watchers.Watch(fn)
	f.nwatch++
	if f.nwatch == 1 {
		f.cancelStore = f.store.Watch(f.scope, f.deliver)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			c()
			f.wmu.Lock()
			defer f.wmu.Unlock()
			f.nwatch--
			if f.nwatch == 0 {
				f.cancelStore()
				f.cancelStore = nil
			}
		})
	}
}

func (f *FS) deliver(e Event) {
	op := vfs.ChangeWrite
	if e.Deleted {
		op = vfs.ChangeDelete
	}
	f.watchers.Notify(vfs.Change{Path: e.Key, Op: op})
}
