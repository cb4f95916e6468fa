package host

import (
	"fmt"

	"github.com/julyfs/julyfs/runner/sessions"
)

// Hold runs fn with session id's log held, between turns: a change made
// outside a turn (july serve's rewind and apply of a copy-on-write
// session). A session with a turn running or queued here is
// sessions.ErrInUse, as is one another process holds. Messages sent
// meanwhile wait for fn to end, then start their turn; events fn appends
// reach the session's subscribers.
func (h *Host) Hold(id string, fn func(*sessions.Log) error) error {
	if _, err := h.exists(id); err != nil {
		return err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	if h.active[id] != nil {
		h.mu.Unlock()
		return fmt.Errorf("%w: session %s has a turn running or queued", sessions.ErrInUse, id)
	}
	// A placeholder: Send waits on its ready.
	a := &active{id: id, ready: make(chan struct{}), closed: make(chan struct{})}
	h.active[id] = a
	h.work.Add(1)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.active, id)
		close(a.ready)
		close(a.closed)
		h.mu.Unlock()
		h.work.Done()
	}()
	log, warns, err := h.opts.Store.Resume(id)
	if err != nil {
		return err
	}
	for _, w := range warns {
		h.logf("%s", w)
	}
	err = fn(log)
	h.mu.Lock()
	if hb := h.hubs[id]; hb != nil {
		hb.reset(log.Events())
	}
	h.mu.Unlock()
	if cerr := log.Close(); err == nil {
		err = cerr
	}
	return err
}
