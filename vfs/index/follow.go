package index

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/union"
)

// Following the tree (Options.Follow): the FS subscribes to the tree's
// vfs.Notifier (changes made through the tree by others than this FS) and,
// for every local tree it is made of (alone, mounted in a union, or
// wrapped read-only), to vfs/local's host watch (local.FS.WatchHostWith:
// inotify, for changes made behind julyfs's back by editors, compilers,
// git), which watches the directories made and moved in, stops watching
// those moved out, and reports what it lost. An event names a path,
// never content: the path is stat'ed and read through the tree, so what
// the index holds is what the tree serves. Events are gathered for
// followDelay and applied together, so a change is searchable within
// about followDelay plus the time to read and index the files it touched.

// followDelay is how long events are gathered before they are applied.
const followDelay = 100 * time.Millisecond

// barrierWait bounds a barrier's wait for its event (the index directory
// may be on a file system that does not report it).
const barrierWait = 2 * time.Second

// hostWatcher is a tree that follows the changes made to its host
// directory by any process (vfs/local).
type hostWatcher interface {
	WatchHostWith(local.HostWatchOptions, func(local.HostChange)) (*local.HostWatch, error)
}

// hostTree is a local tree and where it appears.
type hostTree struct {
	prefix string // clean vfs path
	tree   hostWatcher
}

// hostTrees returns the local trees that make up fsys (union.Leaves:
// fsys itself, a union's mounts, the tree vfs/readonly wraps).
func hostTrees(fsys vfs.FileSystem) []hostTree {
	var out []hostTree
	for _, l := range union.Leaves(fsys) {
		if w, ok := l.FS.(hostWatcher); ok {
			out = append(out, hostTree{prefix: l.Prefix, tree: w})
		}
	}
	return out
}

// follower applies the tree's changes to the index.
type follower struct {
	f *FS

	mu         sync.Mutex
	watches    []*local.HostWatch // one per local tree
	pending    map[string]bool    // path -> walk it when a directory
	resync     bool               // events were lost: walk the whole tree
	incomplete bool               // a directory could not be watched (logged)
	wake       chan struct{}      // buffered 1
	stop       chan struct{}
	done       sync.WaitGroup
	cancelFn   func()

	// applyMu is held from taking the pending paths to the end of
	// applying them, so applyPending returns after every earlier round.
	applyMu sync.Mutex
}

// startFollow starts following the tree; it is called by Open before the
// open-time sync, so no change slips between the sync and the watch.
func (f *FS) startFollow() error {
	fl := &follower{f: f, pending: map[string]bool{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	barrierDir, err := filepath.Abs(f.dir)
	if err != nil {
		barrierDir = ""
	}
	for _, t := range hostTrees(f.inner) {
		opts := local.HostWatchOptions{
			SkipDir:    func(p string) bool { return f.opts.SkipDir(vfs.Join(t.prefix, p)) },
			BarrierDir: barrierDir,
		}
		hw, err := t.tree.WatchHostWith(opts, func(c local.HostChange) { fl.hostChange(t.prefix, c) })
		if errors.Is(err, local.ErrNoHostRoot) {
			continue // followed through its Notifier only
		}
		if err != nil {
			fl.closeWatches()
			return fmt.Errorf("index: follow %s: %w; or open the index without following", t.prefix, err)
		}
		fl.mu.Lock()
		fl.watches = append(fl.watches, hw)
		fl.mu.Unlock()
	}
	fl.cancelFn, _ = vfs.Watch(f.inner, func(c vfs.Change) { fl.add(c.Path, false) })
	fl.done.Add(1)
	go fl.applyLoop()
	f.follower = fl
	return nil
}

// add makes p pending (walked when it is a directory and walk is set).
func (fl *follower) add(p string, walk bool) {
	p = vfs.Clean(p)
	fl.mu.Lock()
	fl.pending[p] = fl.pending[p] || walk
	fl.mu.Unlock()
	fl.signal()
}

// signal wakes the apply loop.
func (fl *follower) signal() {
	select {
	case fl.wake <- struct{}{}:
	default:
	}
}

// hostChange takes a change reported by the host watch of the local tree
// at prefix. A Lost change of a directory (made, moved in or out,
// removed) has it walked, or what was under it dropped; a Lost "/" (the
// kernel's queue overflowed) has the whole tree walked.
func (fl *follower) hostChange(prefix string, c local.HostChange) {
	if c.Lost && c.Path == "/" {
		fl.f.opts.Log(fmt.Sprintf("index %s: change notifications lost under %s (inotify queue overflow); walking the tree again", fl.f.dir, prefix))
		fl.mu.Lock()
		fl.resync = true
		fl.mu.Unlock()
		fl.signal()
		return
	}
	if c.Lost {
		fl.checkComplete()
	}
	fl.add(vfs.Join(prefix, c.Path), c.Lost)
}

// checkComplete logs, once, that a directory could not be watched.
func (fl *follower) checkComplete() {
	fl.mu.Lock()
	was := fl.incomplete
	for _, hw := range fl.watches {
		fl.incomplete = fl.incomplete || !hw.Complete()
	}
	now := fl.incomplete
	fl.mu.Unlock()
	if now && !was {
		fl.f.opts.Log(fmt.Sprintf("index %s: a directory could not be watched (raise fs.inotify.max_user_watches); changes under it are not followed", fl.f.dir))
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

// closeWatches stops the host watches.
func (fl *follower) closeWatches() {
	fl.mu.Lock()
	watches := fl.watches
	fl.watches = nil
	fl.mu.Unlock()
	for _, hw := range watches {
		hw.Close()
	}
}

// close stops following.
func (fl *follower) close() {
	fl.cancelFn()
	fl.closeWatches()
	close(fl.stop)
	fl.done.Wait()
}

// barrier returns once every change the follower is told of, made before
// barrier was called, is in the index. For local trees it waits for each
// host watch's barrier (a file made in the index directory, which the
// watch follows too: local.HostWatch.Barrier), at most barrierWait each,
// then answers with what is known. Then it applies what is pending at
// once.
func (fl *follower) barrier(ctx context.Context) error {
	fl.mu.Lock()
	watches := fl.watches
	fl.mu.Unlock()
	for _, hw := range watches {
		bctx, cancel := context.WithTimeout(ctx, barrierWait)
		hw.Barrier(bctx) // no barrier directory, or no event in time: what is known
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	fl.applyPending()
	return nil
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
