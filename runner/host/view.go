package host

import (
	"context"

	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs"
)

// View runs fn over session id's bound tree, the tree its turns see
// (without a turn's /tmp), for reading: a server's file browser. When the
// host holds the session, fn runs over the tree of the turn under way;
// otherwise the session is held for fn's duration, as a message would
// hold it (sessions.ErrInUse when another process holds it), and
// released afterwards unless a message came meanwhile. fn must not
// write, and must return promptly: the session is not released while it
// runs.
func (h *Host) View(ctx context.Context, id string, fn func(ctx context.Context, fsys vfs.FileSystem) error) error {
	if !sessions.ValidID(id) {
		_, _, _, err := h.opts.Store.Read(id) // the store's message for a malformed id
		return err
	}
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return ErrClosed
		}
		a := h.active[id]
		if a != nil {
			if again, err := h.awaitSettled(ctx, a); again || err != nil {
				if err != nil {
					return err
				}
				continue
			}
			a.views++
			h.mu.Unlock()
			defer h.endView(a)
			return fn(ctx, a.sl.Session.FS())
		}
		a, err := h.hold(ctx, id)
		if err != nil {
			return err
		}
		a.views++
		h.activate(a) // its worker waits for the view before releasing
		h.mu.Unlock()
		defer h.endView(a)
		if err := a.sl.Restore(ctx); err != nil {
			return err
		}
		return fn(ctx, a.sl.Session.FS())
	}
}

// endView ends one View of a, waking its worker when it was the last.
func (h *Host) endView(a *active) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a.views--
	if a.views == 0 && a.viewed != nil {
		close(a.viewed)
		a.viewed = nil
	}
}

// waitViews is the worker's wait, with an empty queue, for the views of
// a to end; h.mu is held, and is released while it waits. It reports
// whether it waited (the queue must then be looked at again).
func (h *Host) waitViews(a *active) bool {
	if a.views == 0 {
		return false
	}
	if a.viewed == nil {
		a.viewed = make(chan struct{})
	}
	ch := a.viewed
	h.mu.Unlock()
	<-ch
	h.mu.Lock()
	return true
}

// busy reports whether a has a turn running or waiting (a session held
// only for a View is not running).
func (a *active) busy() bool { return a.running != "" || len(a.queue) > 0 }
