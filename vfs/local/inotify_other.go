//go:build !linux

package local

import (
	"errors"

	"github.com/fsnotify/fsnotify"
)

// hostWatcher is the kernel watch under a HostWatch: fsnotify's watcher
// here (on Linux, an inotify instance of this package: inotify_linux.go).
type hostWatcher = *fsnotifyWatcher

// hostChanBuffer is how many events fsnotify holds for a HostWatch.
const hostChanBuffer = 1024

// hostBufferedEvents is how many events wait in the process (beyond the
// kernel's queue) for a HostWatch's subscriber: fsnotify's read buffer
// and its channel.
const hostBufferedEvents = 4096 + hostChanBuffer

type fsnotifyWatcher struct{ *fsnotify.Watcher }

func newHostWatcher() (*fsnotifyWatcher, error) {
	w, err := fsnotify.NewBufferedWatcher(hostChanBuffer)
	if err != nil {
		return nil, err
	}
	return &fsnotifyWatcher{w}, nil
}

// run reads events until Close, calling event for each and overflow
// when events were lost; it returns nil (an error is the Linux
// reader's: a read that failed).
func (w *fsnotifyWatcher) run(event func(hostEvent), overflow func()) error {
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			event(hostEvent{Event: ev})
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				overflow()
			}
		}
	}
}
