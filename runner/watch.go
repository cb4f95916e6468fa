package runner

import (
	"context"
	"iter"
	"sync"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// This file is the session's tree as someone watching the agent sees it
// (july run --mount): the session's root, and, when the plan binds
// scratch, at /tmp the scratch of the latest turn (empty before the first).
// It is the same tree the agent's tools use, not a copy: a change either
// side makes is seen by the other at once, and the tree reports changes
// (vfs.Notifier) so a FUSE mount invalidates the kernel's caches.

// WatchTree returns the session's tree with the current turn's /tmp. Each
// later Turn switches /tmp to its own scratch; files of the turn before
// are reported deleted.
func (s *Session) WatchTree() (vfs.FileSystem, error) {
	if !s.agent.Plan.ScratchTmp {
		return s.fs, nil
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.watch == nil {
		empty, err := temp.New(nil)
		if err != nil {
			return nil, err
		}
		s.watch = &switchFS{cur: empty}
		s.watch.unwatch, _ = vfs.Watch(empty, s.watch.forward)
		s.watchTree, err = union.New([]union.Mount{{Prefix: "/", FS: s.fs}, {Prefix: ScratchPrefix, FS: s.watch}})
		if err != nil {
			return nil, err
		}
	}
	return s.watchTree, nil
}

// setScratch points the watch view's /tmp at a new turn's scratch.
func (s *Session) setScratch(scratch vfs.FileSystem) {
	s.hmu.Lock()
	w := s.watch
	s.hmu.Unlock()
	if w != nil {
		w.set(scratch)
	}
}

// switchFS serves whichever tree it was last set to.
type switchFS struct {
	vfs.Watchers
	mu      sync.RWMutex
	cur     vfs.FileSystem
	unwatch func()
}

var (
	_ vfs.FileSystem = (*switchFS)(nil)
	_ vfs.Notifier   = (*switchFS)(nil)
)

func (w *switchFS) forward(c vfs.Change) { w.Notify(c) }

func (w *switchFS) set(next vfs.FileSystem) {
	w.mu.Lock()
	prev := w.cur
	w.cur = next
	if w.unwatch != nil {
		w.unwatch()
	}
	w.unwatch, _ = vfs.Watch(next, w.forward)
	w.mu.Unlock()
	// The previous turn's files are gone from this view.
	for p, err := range vfs.WalkFiles(context.Background(), prev, "/") {
		if err != nil {
			break
		}
		w.Notify(vfs.Change{Path: p, Op: vfs.ChangeDelete})
	}
}

func (w *switchFS) get() vfs.FileSystem {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.cur
}

func (w *switchFS) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	return w.get().List(ctx, prefix)
}
func (w *switchFS) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	return w.get().Stat(ctx, path)
}
func (w *switchFS) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return w.get().Glob(ctx, pattern, dir)
}
func (w *switchFS) Read(ctx context.Context, path string) ([]byte, error) {
	return w.get().Read(ctx, path)
}
func (w *switchFS) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return w.get().Grep(ctx, q)
}
func (w *switchFS) Write(ctx context.Context, path string, data []byte) error {
	return w.get().Write(ctx, path, data)
}
func (w *switchFS) Delete(ctx context.Context, path string) error {
	return w.get().Delete(ctx, path)
}
func (w *switchFS) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return w.get().Search(ctx, q)
}
