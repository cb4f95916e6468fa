package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/fsnotify/fsnotify"

	"github.com/julyfs/julyfs/vfs"
)

// Host changes: FS.WatchHost follows every change made under the root
// directory, by any process (editors, compilers, git, this process
// itself), with inotify: one watch per directory, added for the whole
// tree when the watch starts and for each directory created or moved in
// afterwards. On Linux the watch reads the inotify descriptor itself
// (inotify_linux.go: whatever queued in one read, each event handled on
// the reading goroutine, bursts read 2 ms apart), elsewhere through
// fsnotify. It is a capability of its own, not part of [vfs.Notifier]: Notifier reports the changes made through the tree,
// synchronously and in order, and every wrapper (unions, overlays, the
// index) relies on that; host changes arrive asynchronously, a moment
// after they happened, and may be lost (the kernel's event queue
// overflows) or not covered (more directories than inotify watches
// allowed), which the subscriber must be told of. A FUSE mount uses it to
// cache a local: tree's names and attributes long and drop them when the
// host changes (fusemount); a search index follows the tree with it
// (vfs/index, through WatchHostWith: skipped directories, and Barrier to
// know every change made before a question has been reported).

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
	// Op says what the kernel reported of an Entry change: the name was
	// made or moved in (HostCreated), removed (HostRemoved), or moved
	// away (HostRenamed); 0 for a change of the data or metadata, and
	// for a Lost change of "/".
	Op HostOp
}

// HostOp is what happened to a name, as inotify reported it (see
// HostChange.Op). inotify reports the changes of one directory's names
// in the order they happened, so of two reports of one name the later
// one is the later change.
type HostOp uint8

const (
	// HostCreated: the name was made, or something was moved to it
	// (IN_CREATE, IN_MOVED_TO).
	HostCreated HostOp = iota + 1
	// HostRemoved: the name was unlinked or its directory removed
	// (IN_DELETE, IN_DELETE_SELF).
	HostRemoved
	// HostRenamed: what was at the name was moved away (IN_MOVED_FROM,
	// IN_MOVE_SELF).
	HostRenamed
)

// hostEvent is one event of the kernel watch, as fsnotify gives it, and
// whether the kernel said the name is not a directory (inotify's
// IN_ISDIR unset; fsnotify does not say, so notDir is false there).
type hostEvent struct {
	fsnotify.Event
	notDir bool
}

// HostWatch follows the changes to a tree's host directory; see
// FS.WatchHost. Its methods are safe for concurrent use.
type HostWatch struct {
	fsys *FS
	root string // the root's real host path
	w    hostWatcher
	fn   func(HostChange)

	skip func(string) bool // HostWatchOptions.SkipDir, nil: none

	mu   sync.Mutex
	dirs map[string]uint64 // host directories watched -> inode (0: unknown)
	made map[string]uint64 // directories WatchMade watched, their creation not yet reported -> inode
	// walking holds the directories whose creation event is watching
	// them (and will report them Lost): WatchMade leaves them alone.
	walking map[string]int

	barrierDir string                   // HostWatchOptions.BarrierDir, "" if not watched
	barriers   map[string]chan struct{} // barrier file -> its waiter (under mu)

	complete atomic.Bool
	stop     chan struct{}
	done     chan struct{}
	closeMu  sync.Once
}

// beforeWalkForTest, when set, is called with a directory whose creation
// the watch is about to walk (tests: WatchMade racing the report).
var beforeWalkForTest atomic.Pointer[func(dir string)]

// maxWatchesForTest, when above zero, bounds the directories a HostWatch
// watches, as fs.inotify.max_user_watches does (tests).
var maxWatchesForTest atomic.Int64

// HostQueueEvents is at most how many events can wait for a HostWatch's
// subscriber before some are lost: the kernel's queue
// (fs.inotify.max_queued_events) and what the watch read from it at
// once (hostBufferedEvents). A subscriber held up while more
// changes than that happen is told with a Lost change of "/".
func HostQueueEvents() (int, error) {
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("local: fs.inotify.max_queued_events: %w", err)
	}
	return n + hostBufferedEvents, nil
}

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
	return fsys.WatchHostWith(HostWatchOptions{}, fn)
}

// HostWatchOptions are the options of WatchHostWith.
type HostWatchOptions struct {
	// SkipDir reports whether the directory at tree path p (clean, never
	// "/") is left unwatched with everything under it: changes under it
	// are not reported (its own appearing, going or being renamed is, as
	// an Entry change that is not Lost). nil watches every directory.
	SkipDir func(p string) bool
	// BarrierDir is a host directory, outside the tree or inside it, that
	// the watch follows too, for Barrier: Barrier makes and removes its
	// files there, named julyfs-barrier.*, which are never reported. ""
	// (or a directory that cannot be watched) leaves Barrier without one.
	BarrierDir string
}

// WatchHostWith is WatchHost with options: directories left out
// (a search index skips .git), and a directory for Barrier.
func (fsys *FS) WatchHostWith(opts HostWatchOptions, fn func(HostChange)) (*HostWatch, error) {
	if fsys.real == "" {
		return nil, ErrNoHostRoot
	}
	w, err := newHostWatcher()
	if err != nil {
		return nil, fmt.Errorf("local: watching %s: %w", fsys.real, err)
	}
	hw := &HostWatch{fsys: fsys, root: fsys.real, w: w, fn: fn, skip: opts.SkipDir, dirs: map[string]uint64{}, made: map[string]uint64{}, walking: map[string]int{},
		barriers: map[string]chan struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	if err := hw.watchTree(fsys.real); err != nil {
		w.Close()
		return nil, err
	}
	if opts.BarrierDir != "" {
		if dir, err := filepath.Abs(opts.BarrierDir); err == nil && w.Add(dir) == nil {
			hw.barrierDir = dir
		}
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

// WatchMade watches the directory at tree path p, which the caller has
// just made and told nobody of yet, at once (and whatever another
// program made in it meanwhile), rather than when the report of its
// creation is handled; that report is then a plain Entry change of p
// with Op HostCreated, not Lost. A FUSE mount calls it before it answers
// a mkdir: every change in the directory after the kernel first hears of
// it is then reported one by one, and nothing under it was cached
// before, so nothing needs dropping. It reports false, and the creation
// is reported Lost as for any directory, when the directory was watched
// already (the report was handled first), is not there, is left out
// (HostWatchOptions.SkipDir), or is not under a watched directory by
// that name (a link on the way). An error is the watch's (the inotify
// watch limit: Complete is false from then on).
func (hw *HostWatch) WatchMade(p string) (bool, error) {
	p = vfs.Clean(p)
	if p == "/" {
		return false, nil
	}
	host := filepath.Join(hw.root, filepath.FromSlash(p))
	if hw.skipped(host) {
		return false, nil
	}
	fi, err := os.Lstat(host)
	if err != nil || !fi.IsDir() {
		return false, nil
	}
	ino := inode(fi)
	hw.mu.Lock()
	_, parent := hw.dirs[filepath.Dir(host)]
	_, watched := hw.dirs[host]
	if !parent || watched || hw.walking[host] > 0 {
		hw.mu.Unlock()
		return false, nil
	}
	// Under mu, so that the report of the creation (event) finds the
	// directory either not watched yet (it then watches it itself and
	// reports Lost, and this returns false above) or watched and made.
	if gone, err := hw.addWatch(host, len(hw.dirs), false); gone || err != nil {
		hw.mu.Unlock()
		if err != nil {
			hw.complete.Store(false)
		}
		return false, err // gone or replaced meanwhile: reported so
	}
	hw.dirs[host] = ino
	hw.made[host] = ino
	hw.mu.Unlock()
	// What another program made in it before the watch: its directories
	// are watched too (none is known to anyone who caches). Should that
	// fail, the creation is reported Lost, if it was not yet, and the
	// subscriber learns there that the watch is no longer complete.
	entries, err := os.ReadDir(host)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		err = nil // gone meanwhile: its removal is reported
	case err != nil:
		err = fmt.Errorf("local: watching %s: %w", host, err)
	}
	for _, e := range entries {
		if sub := filepath.Join(host, e.Name()); err == nil && e.IsDir() && !hw.skipped(sub) {
			err = hw.watchTree(sub)
		}
	}
	if err != nil {
		hw.complete.Store(false)
		hw.mu.Lock()
		delete(hw.made, host)
		hw.mu.Unlock()
		return false, err
	}
	return true, nil
}

// addWatch has inotify watch host directory p, which is known when the
// watch holds it already and would be the n-th watched otherwise (the
// limit tests set, maxWatchesForTest). gone says p vanished or is no
// directory any more: not an error, its removal is reported.
func (hw *HostWatch) addWatch(p string, n int, known bool) (gone bool, err error) {
	if max := maxWatchesForTest.Load(); max > 0 && !known && int64(n) >= max {
		return false, fmt.Errorf("local: watching %s: %w (fs.inotify.max_user_watches)", p, syscall.ENOSPC)
	}
	if err := hw.w.Add(p); err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			return true, nil
		case errors.Is(err, syscall.ENOSPC):
			return false, fmt.Errorf("local: watching %s: %w (raise fs.inotify.max_user_watches)", p, err)
		}
		return false, fmt.Errorf("local: watching %s: %w", p, err)
	}
	return false, nil
}

// watchTree watches host directory dir and every directory under it
// (links are not followed). A directory that vanishes meanwhile is
// skipped; any other failure (the watch limit: ENOSPC) is returned.
func (hw *HostWatch) watchTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// A directory gone meanwhile (this one, made and removed at
			// once, included) is skipped: its removal is reported.
			if (p != dir || dir != hw.root) && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				return nil
			}
			return fmt.Errorf("local: watching %s: %w", p, err)
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && hw.skipped(p) {
			return filepath.SkipDir
		}
		hw.mu.Lock()
		_, known := hw.dirs[p]
		n := len(hw.dirs)
		hw.mu.Unlock()
		var ino uint64
		if fi, err := d.Info(); err == nil {
			ino = inode(fi)
		}
		if gone, err := hw.addWatch(p, n, known); gone || err != nil {
			return err // gone or replaced meanwhile: nil
		}
		hw.mu.Lock()
		hw.dirs[p] = ino
		hw.mu.Unlock()
		return nil
	})
}

// inode is fi's inode number, 0 if unknown.
func inode(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
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
			delete(hw.made, d)
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
	// A root of "/" (the host's whole tree) holds every absolute path;
	// another root, the paths that continue it with a "/".
	if hw.root == "/" {
		return vfs.Clean(host), strings.HasPrefix(host, "/")
	}
	if len(host) <= len(hw.root) || host[len(hw.root)] != '/' || !strings.HasPrefix(host, hw.root) {
		return "", false
	}
	return vfs.Clean(host[len(hw.root):]), true
}

// skipped reports whether SkipDir leaves host directory dir out.
func (hw *HostWatch) skipped(dir string) bool {
	if hw.skip == nil {
		return false
	}
	p, ok := hw.treePath(dir)
	return ok && p != "/" && hw.skip(p)
}

// barrierPrefix starts the name of a Barrier's file.
const barrierPrefix = "julyfs-barrier."

// barrierSeq tells apart the barrier files of a process.
var barrierSeq atomic.Uint64

// ErrNoBarrier is returned by Barrier when the watch follows no
// HostWatchOptions.BarrierDir.
var ErrNoBarrier = errors.New("local: the host watch has no barrier directory")

// Barrier returns once fn has been called for every change the kernel
// reported before Barrier was called, or ctx's error when ctx ends first
// (the caller bounds the wait: a file system may not report the event).
// It makes a file in the BarrierDir and waits for its event: inotify
// reports one watch's events in order (watchman's and git fsmonitor's
// cookie). When events are lost (an overflow), waiting barriers return
// after the Lost change of "/" was reported.
func (hw *HostWatch) Barrier(ctx context.Context) error {
	if hw.barrierDir == "" {
		return ErrNoBarrier
	}
	name := filepath.Join(hw.barrierDir, fmt.Sprintf("%s%d.%d", barrierPrefix, os.Getpid(), barrierSeq.Add(1)))
	ch := make(chan struct{})
	hw.mu.Lock()
	hw.barriers[name] = ch
	hw.mu.Unlock()
	defer func() {
		hw.mu.Lock()
		delete(hw.barriers, name)
		hw.mu.Unlock()
	}()
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("local: host watch barrier: %w", err)
	}
	f.Close()
	defer os.Remove(name)
	select {
	case <-ch:
		return nil
	case <-hw.stop:
		return errors.New("local: host watch closed")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// barrierEvent handles an event of a Barrier's file, and reports whether
// ev was one.
func (hw *HostWatch) barrierEvent(ev hostEvent) bool {
	if hw.barrierDir == "" || filepath.Dir(ev.Name) != hw.barrierDir ||
		!strings.HasPrefix(filepath.Base(ev.Name), barrierPrefix) {
		return false
	}
	if ev.Has(fsnotify.Create) {
		hw.mu.Lock()
		if ch, ok := hw.barriers[ev.Name]; ok {
			close(ch)
			delete(hw.barriers, ev.Name)
		}
		hw.mu.Unlock()
	}
	return true
}

// releaseBarriers lets every waiting Barrier return (events were lost,
// theirs perhaps too).
func (hw *HostWatch) releaseBarriers() {
	hw.mu.Lock()
	for name, ch := range hw.barriers {
		close(ch)
		delete(hw.barriers, name)
	}
	hw.mu.Unlock()
}

func (hw *HostWatch) loop() {
	defer close(hw.done)
	lost := func() {
		// What was lost may be the creation WatchMade waits for.
		hw.mu.Lock()
		clear(hw.made)
		hw.mu.Unlock()
		hw.report(HostChange{Path: "/", Lost: true})
		hw.releaseBarriers()
	}
	if err := hw.w.run(hw.event, lost); err != nil {
		// The kernel's events can no longer be read: nothing more will
		// be reported, which the subscriber is told as for a directory
		// that could not be watched.
		hw.complete.Store(false)
		lost()
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

func (hw *HostWatch) event(ev hostEvent) {
	if hw.barrierEvent(ev) {
		return
	}
	p, ok := hw.treePath(ev.Name)
	if !ok || strings.HasPrefix(filepath.Base(ev.Name), tempPrefix) {
		return
	}
	if hw.barrierDir != "" && filepath.Dir(ev.Name) == hw.barrierDir {
		hw.mu.Lock()
		_, inTree := hw.dirs[hw.barrierDir]
		hw.mu.Unlock()
		if !inTree {
			return // the barrier directory's own files, in a directory skipped
		}
	}
	switch {
	case ev.Has(fsnotify.Create):
		c := HostChange{Path: p, Entry: true, Op: HostCreated}
		// A name the kernel said is no directory needs no look: a
		// directory made at the name since is reported on its own.
		if ev.notDir {
			hw.report(c)
			return
		}
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() && !hw.skipped(ev.Name) {
			// A directory made or moved in: watch it and what it
			// holds already, then report it Lost, since what was made
			// in it before the watch is not reported one by one.
			// A watch may be here already: the directory's parent
			// was being watched when it was made, and the walk found
			// it (keep that watch: removing it would lose what
			// happens in it until it is added again), or a watch was
			// left under this name by another directory (replaced by
			// a rename): drop that one.
			hw.mu.Lock()
			ino, watched := hw.dirs[ev.Name]
			made, byMaker := hw.made[ev.Name]
			delete(hw.made, ev.Name)
			byMaker = byMaker && watched && made == ino && made == inode(fi)
			if !byMaker {
				hw.walking[ev.Name]++ // from here on, WatchMade leaves it to this report
			}
			hw.mu.Unlock()
			if byMaker {
				// Watched by its maker before anyone heard of it
				// (WatchMade): nothing in it went unreported since.
				hw.report(c)
				return
			}
			if hook := beforeWalkForTest.Load(); hook != nil {
				(*hook)(ev.Name)
			}
			defer func() {
				hw.mu.Lock()
				if hw.walking[ev.Name]--; hw.walking[ev.Name] <= 0 {
					delete(hw.walking, ev.Name)
				}
				hw.mu.Unlock()
			}()
			if watched && (ino == 0 || ino != inode(fi)) {
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
		_, dir := hw.dirs[ev.Name]
		delete(hw.dirs, ev.Name)
		delete(hw.made, ev.Name)
		hw.mu.Unlock()
		hw.report(HostChange{Path: p, Entry: true, Lost: dir && p != "/", Op: HostRemoved})
	case ev.Has(fsnotify.Rename):
		hw.mu.Lock()
		_, dir := hw.dirs[ev.Name]
		delete(hw.made, ev.Name)
		hw.mu.Unlock()
		c := HostChange{Path: p, Entry: true, Op: HostRenamed}
		if dir && p != "/" {
			hw.unwatchTree(ev.Name)
			c.Lost = true
		}
		hw.report(c)
	case ev.Has(fsnotify.Write), ev.Has(fsnotify.Chmod):
		hw.report(HostChange{Path: p})
	}
}
