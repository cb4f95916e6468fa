package local

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// hostWatcher is the kernel watch under a HostWatch: on Linux an inotify
// instance read by the watch's own goroutine (inotifyWatcher); elsewhere
// fsnotify's watcher (watch_other.go).
type hostWatcher = *inotifyWatcher

// hostBufferedEvents is how many events wait in the process (beyond the
// kernel's queue) for a HostWatch's subscriber: what one read of
// inotifyWatcher takes (inotifyBuf bytes, at least 16 per event).
const hostBufferedEvents = inotifyBuf / unix.SizeofInotifyEvent

// inotifyBuf is the size of one read of the inotify descriptor.
const inotifyBuf = 64 << 10

// hostBurstPause is how long the reader waits after a read that found
// events before it reads again (see inotifyWatcher). While events come
// (a build, an rm -rf, a FUSE mount's own creates) the watch then wakes
// at most a few hundred times a second instead of once or twice per file,
// which on a mount's host directory left less CPU for the requests that
// made the events; a change is reported at most this much later. The
// kernel's queue (fs.inotify.max_queued_events, 16,384 by default) holds
// what comes meanwhile.
const hostBurstPause = 2 * time.Millisecond

// inotifyMask is what each directory watch asks for: what fsnotify asks
// for (names made, moved in or out, removed; data and metadata written;
// the directory itself removed or moved).
const inotifyMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_MODIFY | unix.IN_ATTRIB

// inotifyWatcher is one inotify instance with a watch per directory. Its
// events are read in batches by run, on the HostWatch's goroutine, which
// handles each at once: where fsnotify's reader hands every event to
// another goroutine through a channel, and is woken through the Go poller
// for nearly every event of a burst (a FUSE mount's rm -rf or creates:
// a wake-up and a hand-off per file), this reads whatever the kernel
// queued meanwhile in one read and hands nothing off. After a read that
// found events it waits hostBurstPause before the next, so that a burst
// is read a few milliseconds' worth at a time rather than an event or two
// per wake-up; the first event after a quiet spell is read at once.
// Events are the fsnotify.Event values fsnotify would give (same names
// and ops), so the HostWatch handles both alike, with what the kernel
// said of the name's kind (IN_ISDIR); a directory's own events (its
// removal, its move) are named by the directory.
type inotifyWatcher struct {
	fd int
	f  *os.File // fd, nonblocking, read through the Go poller: Close ends a read

	mu    sync.Mutex
	paths map[int]string // watch descriptor -> directory watched
	wds   map[string]int // directory watched -> watch descriptor
}

func newHostWatcher() (*inotifyWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	return &inotifyWatcher{fd: fd, f: os.NewFile(uintptr(fd), "inotify"),
		paths: map[int]string{}, wds: map[string]int{}}, nil
}

// Add watches the directory dir (not following a link at it).
func (w *inotifyWatcher) Add(dir string) error {
	dir = filepath.Clean(dir)
	wd, err := unix.InotifyAddWatch(w.fd, dir, inotifyMask|unix.IN_DONT_FOLLOW|unix.IN_ONLYDIR)
	if err != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: dir, Err: err}
	}
	w.mu.Lock()
	if old, ok := w.wds[dir]; ok && old != wd {
		delete(w.paths, old)
	}
	w.paths[wd] = dir
	w.wds[dir] = wd
	w.mu.Unlock()
	return nil
}

// Remove stops watching dir. A directory already gone lost its watch
// with it: an error, which callers may ignore.
func (w *inotifyWatcher) Remove(dir string) error {
	dir = filepath.Clean(dir)
	w.mu.Lock()
	wd, ok := w.wds[dir]
	if ok {
		delete(w.wds, dir)
		delete(w.paths, wd)
	}
	w.mu.Unlock()
	if !ok {
		return &os.PathError{Op: "inotify_rm_watch", Path: dir, Err: unix.EINVAL}
	}
	if _, err := unix.InotifyRmWatch(w.fd, uint32(wd)); err != nil {
		return &os.PathError{Op: "inotify_rm_watch", Path: dir, Err: err}
	}
	return nil
}

// Close ends the instance; a run in progress returns.
func (w *inotifyWatcher) Close() error { return w.f.Close() }

// run reads events until Close (nil) or a read fails (the error),
// calling event for each and overflow when the kernel's queue overflowed
// (events were lost).
func (w *inotifyWatcher) run(event func(hostEvent), overflow func()) error {
	buf := make([]byte, inotifyBuf)
	for first := true; ; first = false {
		if !first {
			time.Sleep(hostBurstPause)
		}
		n, err := w.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return nil
			}
			return err
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			mask := raw.Mask
			nameLen := int(raw.Len)
			var name string
			if nameLen > 0 && off+unix.SizeofInotifyEvent+nameLen <= n {
				b := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+nameLen]
				for i, c := range b { // NUL-padded
					if c == 0 {
						b = b[:i]
						break
					}
				}
				name = string(b)
			}
			off += unix.SizeofInotifyEvent + nameLen
			if mask&unix.IN_Q_OVERFLOW != 0 {
				overflow()
				continue
			}
			wd := int(raw.Wd)
			w.mu.Lock()
			dir, ok := w.paths[wd]
			gone := mask&(unix.IN_IGNORED|unix.IN_UNMOUNT|unix.IN_DELETE_SELF|unix.IN_MOVE_SELF) != 0
			if gone && ok {
				// The watch is gone, or no longer names its directory
				// (removed, moved away: as fsnotify, the watch of a
				// directory moved is dropped; its new place is watched
				// when its parent reports it).
				delete(w.paths, wd)
				if w.wds[dir] == wd {
					delete(w.wds, dir)
				}
			}
			_, parentWatched := w.wds[filepath.Dir(dir)]
			w.mu.Unlock()
			if !ok || mask&(unix.IN_IGNORED|unix.IN_UNMOUNT) != 0 {
				continue
			}
			if mask&unix.IN_MOVE_SELF != 0 {
				unix.InotifyRmWatch(w.fd, uint32(wd))
			}
			if mask&unix.IN_DELETE_SELF != 0 && parentWatched {
				continue // as fsnotify: the parent reports the removal
			}
			ev := hostEvent{Event: fsnotify.Event{Name: dir}, notDir: mask&unix.IN_ISDIR == 0}
			if name != "" {
				ev.Name = dir + "/" + name
			}
			if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
				ev.Op |= fsnotify.Create
			}
			if mask&(unix.IN_DELETE|unix.IN_DELETE_SELF) != 0 {
				ev.Op |= fsnotify.Remove
			}
			if mask&unix.IN_MODIFY != 0 {
				ev.Op |= fsnotify.Write
			}
			if mask&(unix.IN_MOVED_FROM|unix.IN_MOVE_SELF) != 0 {
				ev.Op |= fsnotify.Rename
			}
			if mask&unix.IN_ATTRIB != 0 {
				ev.Op |= fsnotify.Chmod
			}
			if ev.Op != 0 {
				event(ev)
			}
		}
	}
}
