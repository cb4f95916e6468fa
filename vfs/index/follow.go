package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
	"github.com/fsnotify/fsnotify"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/union"
)

// Following the tree (Options.Follow): the FS subscribes to the tree's
// vfs.Notifier (changes made through the tree by others than this FS) and,
// for every directory of a local tree (a tree with a host root, alone or
// mounted in a union), to inotify through fsnotify (changes made behind
// julyfs's back by editors, compilers, git). An event names a path, never
// content: the path is stat'ed and read through the tree, so what the
// index holds is what the tree serves. Events are gathered for
// followDelay and applied together, so a change is searchable within
// about followDelay plus the time to read and index the files it touched.

// followDelay is how long events are gathered before they are applied.
const followDelay = 100 * time.Millisecond

// hostRoot is a local tree's host directory and where it appears.
type hostRoot struct {
	prefix string // clean vfs path
	host   string // absolute host path
}

// hostRoots returns the host directories of the local trees that make up
// fsys: fsys itself when it has a host root (vfs/local's Root), its
// mounts when it is a union, the tree it wraps when it has an Unwrap
// (vfs/readonly).
func hostRoots(fsys vfs.FileSystem, prefix string) []hostRoot {
	switch t := fsys.(type) {
	case interface{ Root() string }:
		host, err := filepath.Abs(t.Root())
		if err != nil {
			return nil
		}
		if real, err := filepath.EvalSymlinks(host); err == nil {
			host = real
		}
		return []hostRoot{{prefix: prefix, host: host}}
	case interface{ Mounts() []union.Mount }:
		var out []hostRoot
		for _, m := range t.Mounts() {
			out = append(out, hostRoots(m.FS, vfs.Join(prefix, m.Prefix))...)
		}
		return out
	case interface{ Unwrap() vfs.FileSystem }: // a wrapper such as vfs/readonly
		return hostRoots(t.Unwrap(), prefix)
	}
	return nil
}

// follower applies the tree's changes to the index.
type follower struct {
	f     *FS
	roots []hostRoot
	w     *fsnotify.Watcher // nil without local trees

	mu       sync.Mutex
	pending  map[string]bool // path -> created (walk it when a directory)
	resync   bool            // events were lost: walk the whole tree
	wake     chan struct{}   // buffered 1
	stop     chan struct{}
	done     sync.WaitGroup
	cancelFn func()
	watched  int    // directories watched
	onApply  func() // tests: called after each apply

	// applyMu is held from taking the pending paths to the end of
	// applying them, so applyPending returns after every earlier round.
	applyMu sync.Mutex
	// cookieDir is the index directory, watched for barrier cookies
	// (see barrier); cookies maps a cookie file to its waiter.
	cookieDir string
	cookieSeq atomic.Uint64
	cookies   map[string]chan struct{}
}

// startFollow starts following the tree; it is called by Open before the
// open-time sync, so no change slips between the sync and the watch.
func (f *FS) startFollow() error {
	fl := &follower{f: f, pending: map[string]bool{}, wake: make(chan struct{}, 1), stop: make(chan struct{}),
		cookies: map[string]chan struct{}{}}
	fl.roots = hostRoots(f.inner, "/")
	if len(fl.roots) > 0 {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return fmt.Errorf("index: follow: %w", err)
		}
		fl.w = w
		if dir, err := filepath.Abs(f.dir); err == nil && w.Add(dir) == nil {
			fl.cookieDir = dir
		}
		for _, r := range fl.roots {
			if err := fl.watchTree(r, r.host); err != nil {
				w.Close()
				return fmt.Errorf("index: follow %s: %w (raise fs.inotify.max_user_watches, or open the index without following)", r.host, err)
			}
		}
		fl.done.Add(1)
		go fl.watchLoop()
	}
	fl.cancelFn, _ = vfs.Watch(f.inner, func(c vfs.Change) { fl.add(c.Path, false) })
	fl.done.Add(1)
	go fl.applyLoop()
	f.follower = fl
	return nil
}

// watchTree adds a watch on every directory under host (of root r),
// skipping those SkipDir leaves out.
func (fl *follower) watchTree(r hostRoot, host string) error {
	return filepath.WalkDir(host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != host && errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if vp, ok := r.vfsPath(p); ok && vp != "/" && fl.f.opts.SkipDir(vp) {
			return filepath.SkipDir
		}
		if err := fl.w.Add(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		return nil
	})
}

// vfsPath maps a host path under r.host to the tree's path.
func (r hostRoot) vfsPath(host string) (string, bool) {
	rel, err := filepath.Rel(r.host, host)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	if rel == "." {
		return r.prefix, true
	}
	return vfs.Join(r.prefix, filepath.ToSlash(rel)), true
}

func (fl *follower) add(p string, created bool) {
	p = vfs.Clean(p)
	fl.mu.Lock()
	fl.pending[p] = fl.pending[p] || created
	fl.mu.Unlock()
	select {
	case fl.wake <- struct{}{}:
	default:
	}
}

// watchLoop turns inotify events into pending paths, and watches the
// directories created.
func (fl *follower) watchLoop() {
	defer fl.done.Done()
	for {
		select {
		case <-fl.stop:
			return
		case ev, ok := <-fl.w.Events:
			if !ok {
				return
			}
			if filepath.Dir(ev.Name) == fl.cookieDir {
				if strings.HasPrefix(filepath.Base(ev.Name), cookiePrefix) && ev.Has(fsnotify.Create) {
					fl.mu.Lock()
					if ch, ok := fl.cookies[ev.Name]; ok {
						close(ch)
						delete(fl.cookies, ev.Name)
					}
					fl.mu.Unlock()
				}
				if _, inTree := fl.vfsPath(ev.Name); !inTree {
					continue // the index directory's own files
				}
			}
			for _, r := range fl.roots {
				vp, ok := r.vfsPath(ev.Name)
				if !ok {
					continue
				}
				created := ev.Has(fsnotify.Create)
				if created {
					// A new directory: watch it (and what it holds
					// already) before its files are walked.
					if fi, err := statHost(ev.Name); err == nil && fi.IsDir() && !fl.f.opts.SkipDir(vp) {
						if err := fl.watchTree(r, ev.Name); err != nil {
							fl.f.opts.Log(fmt.Sprintf("index %s: cannot follow %s: %v", fl.f.dir, ev.Name, err))
						}
					}
				}
				fl.add(vp, created)
				break
			}
		case err, ok := <-fl.w.Errors:
			if !ok {
				return
			}
			// The kernel's queue overflowed: events were lost.
			fl.f.opts.Log(fmt.Sprintf("index %s: change notifications lost (%v); walking the tree again", fl.f.dir, err))
			fl.mu.Lock()
			fl.resync = true
			fl.mu.Unlock()
			select {
			case fl.wake <- struct{}{}:
			default:
			}
		}
	}
}

// applyLoop applies the pending paths, followDelay after the first of a
// round arrives.
func (fl *follower) applyLoop() {
	defer fl.done.Done()
	for {
		select {
		case <-fl.stop:
			return
		case <-fl.wake:
		}
		select {
		case <-fl.stop:
			return
		case <-time.After(followDelay):
		}
		fl.applyPending()
	}
}

// applyPending applies the paths pending (or walks the tree when events
// were lost), and returns once they and every round before are applied.
func (fl *follower) applyPending() {
	fl.applyMu.Lock()
	defer fl.applyMu.Unlock()
	fl.mu.Lock()
	pending, resync := fl.pending, fl.resync
	fl.pending, fl.resync = map[string]bool{}, false
	fl.mu.Unlock()
	if resync {
		if _, err := fl.f.Sync(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
			fl.f.opts.Log(fmt.Sprintf("index %s: %v", fl.f.dir, err))
		}
	} else if len(pending) > 0 {
		if err := fl.f.applyChanges(context.Background(), pending); err != nil && !errors.Is(err, ErrClosed) {
			fl.f.opts.Log(fmt.Sprintf("index %s: following changes: %v", fl.f.dir, err))
		}
	}
}

// vfsPath maps a host path to the tree's path, when it is in a local tree.
func (fl *follower) vfsPath(host string) (string, bool) {
	for _, r := range fl.roots {
		if vp, ok := r.vfsPath(host); ok {
			return vp, true
		}
	}
	return "", false
}

// close stops following.
func (fl *follower) close() {
	fl.cancelFn()
	close(fl.stop)
	if fl.w != nil {
		fl.w.Close()
	}
	fl.done.Wait()
}

// applyChanges brings the documents of the paths changed up to date: a
// file is read again, a directory created is walked, a path gone is
// removed with everything under it. Writes through the FS wait meanwhile.
func (f *FS) applyChanges(ctx context.Context, changed map[string]bool) error {
	f.syncMu.Lock()
	defer f.syncMu.Unlock()
	if f.isClosed() {
		return ErrClosed
	}
	var work []todo
	var gone []string
	seen := map[string]bool{}
	addFile := func(info vfs.FileInfo) {
		if !seen[info.Path] {
			seen[info.Path] = true
			work = append(work, todo{path: info.Path, info: info})
		}
	}
	for p, created := range changed {
		if p == "/" || f.skipped(p) || f.opts.SkipDir(p) {
			continue
		}
		info, err := f.inner.Stat(ctx, p)
		if err != nil {
			return err
		}
		switch info.Kind {
		case vfs.KindFile:
			addFile(info)
		case vfs.KindDir:
			if !created || info.Link {
				continue // a link to a directory is not walked into
			}
			for e, err := range vfs.Walk(ctx, f.listSkipping, p, 0) {
				if err != nil {
					return err
				}
				if e.Kind != vfs.KindFile {
					continue
				}
				fi, err := f.inner.Stat(ctx, e.Path)
				if err != nil {
					return err
				}
				if fi.Kind == vfs.KindFile {
					addFile(fi)
				}
			}
		default:
			under, err := f.pathsUnder(ctx, p)
			if err != nil {
				return err
			}
			gone = append(gone, under...)
		}
	}
	b := bleveindex.NewBatch()
	for _, p := range gone {
		if !seen[p] {
			b.Delete(p)
		}
	}
	if len(gone) > 0 {
		if err := f.idx.Batch(b); err != nil {
			return err
		}
	}
	var st Stats
	return f.index(ctx, work, newManifest(), &st)
}

// listSkipping lists dir of the tree, leaving out skipped directories.
func (f *FS) listSkipping(ctx context.Context, dir string) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		for e, err := range f.inner.List(ctx, dir) {
			if err == nil && e.Kind == vfs.KindDir && f.opts.SkipDir(e.Path) {
				continue
			}
			if !yield(e, err) {
				return
			}
		}
	}
}

func statHost(p string) (fs.FileInfo, error) { return os.Stat(p) }

// pathsUnder returns the ids of the documents of p and everything under
// it.
func (f *FS) pathsUnder(ctx context.Context, p string) ([]string, error) {
	var out []string
	err := f.idx.read(func(r bleveindex.IndexReader) error {
		n, err := r.DocCount()
		if err != nil || n == 0 {
			return err
		}
		q := query.NewTermQuery(p)
		q.SetField(fieldScope)
		s, err := q.Searcher(ctx, r, f.mapping, search.SearcherOptions{})
		if err != nil {
			return err
		}
		defer s.Close()
		hits, err := topHits(ctx, s, r, 0)
		if err != nil {
			return err
		}
		for _, h := range hits {
			id, err := r.ExternalID(h.iid)
			if err != nil {
				return err
			}
			out = append(out, id)
		}
		return nil
	})
	return out, err
}
