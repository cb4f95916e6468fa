package diskstore

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// scope is the per-scope state of a store: the in-process write mutex,
// the subscribers and, while there are any, the inotify watcher.
type scope struct {
	store *Store
	name  hostfiles.Scope

	// mu serializes this process's writes to the scope (the lock file
	// serializes processes) and the watcher's comparisons with them.
	mu    sync.Mutex
	known map[string]string // key -> etag last reported ("" deleted); nil when not watching
	dirs  map[string]bool   // directory keys being watched

	smu  sync.RWMutex // held for reading while delivering
	subs map[int]func(hostfiles.Event)
	next int

	wmu  sync.Mutex // guards fsw, stop, done and poll
	fsw  *fsnotify.Watcher
	stop chan struct{}
	done chan struct{}
	// poll is set when inotify is unavailable or refused a directory (the
	// per-user watch limit): the scope is then rescanned every second.
	poll bool
}

// pollInterval is how often a scope inotify cannot fully watch is
// rescanned.
const pollInterval = time.Second

// noteKnown records key's etag after this process wrote it, so the
// watcher does not report the echo. Callers hold mu.
func (st *scope) noteKnown(key, etag string) {
	if st.known != nil {
		st.known[key] = etag
	}
}

// publish delivers e to every subscriber, in the caller's goroutine.
func (st *scope) publish(e hostfiles.Event) {
	st.smu.RLock()
	defer st.smu.RUnlock()
	for _, fn := range st.subs {
		fn(e)
	}
}

// Watch subscribes fn to the changes of scope sc. cancel must not be
// called from inside fn.
func (s *Store) Watch(sc hostfiles.Scope, fn func(hostfiles.Event)) (cancel func()) {
	st, err := s.scope(sc)
	if err != nil {
		return func() {}
	}
	st.smu.Lock()
	if st.subs == nil {
		st.subs = map[int]func(hostfiles.Event){}
	}
	id := st.next
	st.next++
	st.subs[id] = fn
	first := len(st.subs) == 1
	st.smu.Unlock()
	if first {
		st.startWatching()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			st.smu.Lock()
			delete(st.subs, id)
			last := len(st.subs) == 0
			st.smu.Unlock()
			if last {
				st.stopWatching()
			}
		})
	}
}

// hostDir is the scope's directory on the host.
func (st *scope) hostDir() string { return filepath.Join(st.store.dir, string(st.name)) }

func (st *scope) startWatching() {
	st.wmu.Lock()
	defer st.wmu.Unlock()
	if st.done != nil {
		return
	}
	st.store.root.MkdirAll(string(st.name), 0o755)
	var w *fsnotify.Watcher
	if !st.store.opts.Poll {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			w = nil
		}
	}
	st.poll = w == nil
	st.mu.Lock()
	st.known = map[string]string{}
	st.dirs = map[string]bool{}
	st.mu.Unlock()
	st.fsw = w
	st.stop = make(chan struct{})
	st.done = make(chan struct{})
	if w != nil {
		st.addTree("")
	}
	st.mu.Lock()
	st.snapshot()
	st.mu.Unlock()
	go st.loop(w, st.stop, st.done)
}

func (st *scope) stopWatching() {
	st.wmu.Lock()
	w, stop, done := st.fsw, st.stop, st.done
	st.fsw, st.stop, st.done = nil, nil, nil
	st.wmu.Unlock()
	if done == nil {
		return
	}
	close(stop)
	if w != nil {
		w.Close()
	}
	<-done
	st.mu.Lock()
	st.known = nil
	st.dirs = nil
	st.mu.Unlock()
}

// addTree watches the directory key d and every directory under it; a
// directory inotify refuses turns on polling. Callers hold wmu.
func (st *scope) addTree(d string) {
	base := st.hostDir()
	filepath.WalkDir(filepath.Join(base, d), func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return nil
		}
		if aerr := st.fsw.Add(p); aerr != nil {
			st.poll = true
		} else {
			if r, err := filepath.Rel(base, p); err == nil && r != "." {
				st.mu.Lock()
				if st.dirs != nil {
					st.dirs["/"+filepath.ToSlash(r)] = true
				}
				st.mu.Unlock()
			}
		}
		return nil
	})
}

// snapshot records the etag of every file now in the scope. Callers hold
// mu.
func (st *scope) snapshot() {
	ctx := context.Background()
	for m, err := range st.store.List(ctx, st.name, "/", "") {
		if err != nil {
			return
		}
		if full, err := st.store.Stat(ctx, st.name, m.Key); err == nil {
			st.known[m.Key] = full.ETag
		}
	}
}

func (st *scope) loop(w *fsnotify.Watcher, stop, done chan struct{}) {
	defer close(done)
	base := st.hostDir()
	var events chan fsnotify.Event
	var errs chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			st.wmu.Lock()
			poll := st.poll
			st.wmu.Unlock()
			if poll {
				st.rescan()
			}
		case ev, ok := <-events:
			if !ok {
				return
			}
			rel, err := filepath.Rel(base, ev.Name)
			if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
				continue
			}
			st.check("/"+filepath.ToSlash(rel), ev.Has(fsnotify.Create))
		case err, ok := <-errs:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				st.rescan()
			}
		}
	}
}

// check compares what key names now with what was last reported and
// delivers the difference. A new directory is watched and its files
// checked, since they may have appeared before the watch was added.
func (st *scope) check(key string, created bool) {
	r := rel(st.name, key)
	if info, err := st.store.root.Lstat(r); err == nil && info.IsDir() {
		if created {
			st.wmu.Lock()
			if st.fsw != nil {
				st.addTree(key)
			}
			st.wmu.Unlock()
			lo, _ := hostfiles.DirRange(key)
			for m, err := range st.store.List(context.Background(), st.name, lo, lo) {
				if err != nil {
					break
				}
				st.check(m.Key, false)
			}
		}
		return
	}
	st.mu.Lock()
	if st.known == nil {
		st.mu.Unlock()
		return
	}
	cur, err := st.store.state(r)
	if err != nil || cur.dir || cur.empty {
		st.mu.Unlock()
		return
	}
	if !cur.exists && st.dirs[key] {
		delete(st.dirs, key) // a directory went away, not a file
		st.mu.Unlock()
		return
	}
	prev, seen := st.known[key]
	var ev hostfiles.Event
	switch {
	case cur.exists && (!seen || prev != cur.etag):
		st.known[key] = cur.etag
		ev = hostfiles.Event{Key: key, ETag: cur.etag}
	case !cur.exists && (!seen || prev != ""):
		st.known[key] = ""
		ev = hostfiles.Event{Key: key, Deleted: true}
	default:
		st.mu.Unlock()
		return
	}
	st.mu.Unlock()
	st.publish(ev)
}

// rescan compares the whole scope with what was last reported, after the
// kernel dropped events.
func (st *scope) rescan() {
	st.wmu.Lock()
	if st.fsw != nil {
		st.addTree("")
	}
	st.wmu.Unlock()
	var evs []hostfiles.Event
	st.mu.Lock()
	if st.known == nil {
		st.mu.Unlock()
		return
	}
	seen := map[string]bool{}
	ctx := context.Background()
	for m, err := range st.store.List(ctx, st.name, "/", "") {
		if err != nil {
			st.mu.Unlock()
			return
		}
		m, err := st.store.Stat(ctx, st.name, m.Key) // the etag, cached by inode
		if err != nil {
			continue
		}
		seen[m.Key] = true
		if prev, ok := st.known[m.Key]; !ok || prev != m.ETag {
			st.known[m.Key] = m.ETag
			evs = append(evs, hostfiles.Event{Key: m.Key, ETag: m.ETag})
		}
	}
	for k, etag := range st.known {
		if !seen[k] && etag != "" {
			st.known[k] = ""
			evs = append(evs, hostfiles.Event{Key: k, Deleted: true})
		}
	}
	st.mu.Unlock()
	for _, e := range evs {
		st.publish(e)
	}
}
