package index

import "sync"

// HoldFollower holds f's follower up as a slow subscriber would: the
// changes its host watches report wait (and the kernel's event queue
// fills) until release is called. release may be called more than once.
func HoldFollower(f *FS) (release func()) {
	fl := f.currentFollower()
	fl.mu.Lock()
	return sync.OnceFunc(fl.mu.Unlock)
}
