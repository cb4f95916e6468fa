package local

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
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
// per wake-up; the first event after a quiet spell is read at once. The
// descriptor is not the Go poller's: run waits for events in poll(2) of
// its own (with an eventfd that Close writes to end it), so the kernel
// wakes nobody for the events that come while run pauses or handles a
// batch; registered with the poller (edge-triggered epoll), every event
// of a burst woke a thread parked in epoll_wait for nothing, on a machine
// whose CPUs the FUSE requests making those events were waiting for.
// Events are the fsnotify.Event values fsnotify would give (same names
// and ops), so the HostWatch handles both alike, with what the kernel
// said of the name's kind (IN_ISDIR); a directory's own events (its
// removal, its move) are named by the directory.
type inotifyWatcher struct {
	fd   int // the inotify instance, nonblocking
	wake int // an eventfd: Close writes it to end a run waiting in poll

	// runMu is held by run while it uses the descriptors, and by Close
	// to close them once no run does; closed says Close ran.
	runMu     sync.Mutex
	closed    atomic.Bool
	closeOnce sync.Once

	mu    sync.Mutex
	paths map[int]string // watch descriptor -> directory watched
	wds   map[string]int // directory watched -> watch descriptor
}

func newHostWatcher() (*inotifyWatcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	return &inotifyWatcher{fd: fd, wake: wake, paths: map[int]string{}, wds: map[string]int{}}, nil
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

// Close ends the instance; a run in progress returns, then the
// descriptors are closed.
func (w *inotifyWatcher) Close() error {
	w.closeOnce.Do(func() {
		w.closed.Store(true)
		one := [8]byte{1}
		unix.Write(w.wake, one[:]) // ends a run waiting in poll
		w.runMu.Lock()
		unix.Close(w.fd)
		unix.Close(w.wake)
		w.runMu.Unlock()
	})
	return nil
}

// wait blocks until the instance has events to read (true) or Close was
// called (false), or poll fails.
func (w *inotifyWatcher) wait() (bool, error) {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(w.wake), Events: unix.POLLIN}}
	for {
		if w.closed.Load() {
			return false, nil
		}
		_, err := unix.Poll(fds, -1)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return false, os.NewSyscallError("poll", err)
		case w.closed.Load():
			return false, nil
		case fds[0].Revents != 0:
			return true, nil
		}
	}
}

// run reads events until Close (nil) or a read fails (the error),
// calling event for each and overflow when the kernel's queue overflowed
// (events were lost).
func (w *inotifyWatcher) run(event func(hostEvent), overflow func()) error {
	w.runMu.Lock()
	defer w.runMu.Unlock()
	buf := make([]byte, inotifyBuf)
	for pause := false; ; pause = true {
		if pause {
			time.Sleep(hostBurstPause)
		}
		if w.closed.Load() {
			return nil
		}
		n, err := unix.Read(w.fd, buf)
		for err == unix.EAGAIN || err == unix.EINTR {
			// Nothing queued: wait for the next event, then read it
			// at once.
			ok, werr := w.wait()
			if !ok {
				return werr
			}
			n, err = unix.Read(w.fd, buf)
		}
		if err != nil {
			return os.NewSyscallError("read", err)
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
