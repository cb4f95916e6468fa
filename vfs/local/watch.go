package local

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/fsnotify/fsnotify"

	"github.com/julyfs/julyfs/vfs"
)

// Host changes: FS.WatchHost follows every change made under the root
// directory, by any process (editors, compilers, git, this process
// itself), with inotify through fsnotify: one watch per directory, added
// for the whole tree when the watch starts and for each directory created
// or moved in afterwards. It is a capability of its own, not part of
// [vfs.Notifier]: Notifier reports the changes made through the tree,
// synchronously and in order, and every wrapper (unions, overlays, the
// index) relies on that; host changes arrive asynchronously, a moment
// after they happened, and may be lost (the kernel's event queue
// overflows) or not covered (more directories than inotify watches
// allowed), which the subscriber must be told of. A FUSE mount uses it to
// cache a local: tree's names and attributes long and drop them when the
// host changes (fusemount).

// HostChange is one change WatchHost reports.
type HostChange struct {
	// Path is the tree path of what changed.
	Path string
	// Entry says the name itself appeared, went or was renamed (to or
	// from Path), so the listing of its directory changed; otherwise the
	// data or metadata (mode, times) of what is at Path changed.
	Entry bool
	// Lost says changes at or under Path may have gone unreported: the
	// kernel's event queue overflowed (Path is "/"), a directory could
	// not be watched, or a directory just created or moved in was
	// watched only now (what it held before is not reported one by one).
	Lost bool
}

// HostWatch follows the changes to a tree's host directory; see
// FS.WatchHost. Its methods are safe for concurrent use.
type HostWatch struct {
	fsys *FS
	root string // the root's real host path
	w    *fsnotify.Watcher
	fn   func(HostChange)

	mu   sync.Mutex
	dirs map[string]bool // host directories watched

	complete atomic.Bool
	stop     chan struct{}
	done     chan struct{}
	closeMu  sync.Once
}

// maxWatchesForTest, when above zero, bounds the directories a HostWatch
// watches, as fs.inotify.max_user_watches does (tests).
var maxWatchesForTest atomic.Int64

// ErrNoHostRoot is returned by WatchHost for a tree whose root's host
// path could not be resolved.
var ErrNoHostRoot = errors.New("local: the root's host path is unknown")

// WatchHost starts following the changes made under the root directory
// by any process, and calls fn for each, in the order the kernel reports
// them, from a goroutine of its own (fn must return quickly and must not
// call Close). Temporary files of this package's writes are not reported
// (their rename into place is). It watches every directory of the tree
// before it returns (links are not followed, so nothing outside the root
// is watched); when a directory cannot be watched (fs.inotify.max_user_watches
// reached) it returns the error, and a directory created later that
// cannot be watched makes Complete false and is reported as Lost.
// Close stops it.
func (fsys *FS) WatchHost(fn func(HostChange)) (*HostWatch, error) {
	if fsys.real == "" {
		return nil, ErrNoHostRoot
	}
	w, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		return nil, fmt.Errorf("local: watching %s: %w", fsys.real, err)
	}
	hw := &HostWatch{fsys: fsys, root: fsys.real, w: w, fn: fn, dirs: map[string]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if err := hw.watchTree(fsys.real); err != nil {
		w.Close()
		return nil, err
	}
	hw.complete.Store(true)
	go hw.loop()
	return hw, nil
}

// Complete reports whether every directory of the tree is watched: false
// once a directory could not be (the inotify watch limit), after which
// changes under it go unreported.
func (hw *HostWatch) Complete() bool { return hw.complete.Load() }

// Dirs is the number of directories watched.
func (hw *HostWatch) Dirs() int {
	hw.mu.Lock()
	defer hw.mu.Unlock()
	return len(hw.dirs)
}

// Close stops following; fn is not called after it returns.
func (hw *HostWatch) Close() error {
	var err error
	hw.closeMu.Do(func() {
		close(hw.stop)
		err = hw.w.Close()
		<-hw.done
	})
	return err
}

// watchTree watches host directory dir and every directory under it
// (links are not followed). A directory that vanishes meanwhile is
// skipped; any other failure (the watch limit: ENOSPC) is returned.
func (hw *HostWatch) watchTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != dir && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("local: watching %s: %w", p, err)
		}
		if !d.IsDir() {
			return nil
		}
		hw.mu.Lock()
		n := len(hw.dirs)
		hw.mu.Unlock()
		if max := maxWatchesForTest.Load(); max > 0 && int64(n) >= max {
			return fmt.Errorf("local: watching %s: %w (fs.inotify.max_user_watches)", p, syscall.ENOSPC)
		}
		if err := hw.w.Add(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil // gone or replaced meanwhile
			}
			if errors.Is(err, syscall.ENOSPC) {
				return fmt.Errorf("local: watching %s: %w (raise fs.inotify.max_user_watches)", p, err)
			}
			return fmt.Errorf("local: watching %s: %w", p, err)
		}
		hw.mu.Lock()
		hw.dirs[p] = true
		hw.mu.Unlock()
		return nil
	})
}

// unwatchTree stops watching host directory dir and the directories
// under it (dir was removed or moved: its watches would report the old
// names).
func (hw *HostWatch) unwatchTree(dir string) {
	hw.mu.Lock()
	var gone []string
	for d := range hw.dirs {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			gone = append(gone, d)
			delete(hw.dirs, d)
		}
	}
	hw.mu.Unlock()
	for _, d := range gone {
		hw.w.Remove(d) // already gone with its directory: an error, ignored
	}
}

// treePath maps a host path under the root to the tree's path.
func (hw *HostWatch) treePath(host string) (string, bool) {
	if host == hw.root {
		return "/", true
	}
	rel, ok := strings.CutPrefix(host, hw.root+"/")
	if !ok {
		return "", false
	}
	return vfs.Clean("/" + rel), true
}

func (hw *HostWatch) loop() {
	defer close(hw.done)
	for {
		select {
		case <-hw.stop:
			return
		case ev, ok := <-hw.w.Events:
			if !ok {
				return
			}
			hw.event(ev)
		case err, ok := <-hw.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				hw.report(HostChange{Path: "/", Lost: true})
			}
		}
	}
}

// report calls fn unless the watch was closed.
func (hw *HostWatch) report(c HostChange) {
	select {
	case <-hw.stop:
	default:
		hw.fn(c)
	}
}

func (hw *HostWatch) event(ev fsnotify.Event) {
	p, ok := hw.treePath(ev.Name)
	if !ok || strings.HasPrefix(filepath.Base(ev.Name), tempPrefix) {
		return
	}
	switch {
	case ev.Has(fsnotify.Create):
		c := HostChange{Path: p, Entry: true}
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			// A directory made or moved in: watch it and what it
			// holds already, then report it Lost, since what was made
			// in it before the watch is not reported one by one.
			hw.mu.Lock()
			stale := hw.dirs[ev.Name]
			hw.mu.Unlock()
			if stale { // a watch left under this name
				hw.unwatchTree(ev.Name)
			}
			if err := hw.watchTree(ev.Name); err != nil {
				hw.complete.Store(false)
			}
			c.Lost = true
		}
		hw.report(c)
	case ev.Has(fsnotify.Remove):
		// A directory removed was empty: the directories under it were
		// removed (and unwatched) before it, and the kernel dropped its
		// own watch.
		hw.mu.Lock()
		dir := hw.dirs[ev.Name]
		delete(hw.dirs, ev.Name)
		hw.mu.Unlock()
		hw.report(HostChange{Path: p, Entry: true, Lost: dir && p != "/"})
	case ev.Has(fsnotify.Rename):
		hw.mu.Lock()
		dir := hw.dirs[ev.Name]
		hw.mu.Unlock()
		c := HostChange{Path: p, Entry: true}
		if dir && p != "/" {
			hw.unwatchTree(ev.Name)
			c.Lost = true
		}
		hw.report(c)
	case ev.Has(fsnotify.Write), ev.Has(fsnotify.Chmod):
		hw.report(HostChange{Path: p})
	}
}
