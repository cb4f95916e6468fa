package host

import (
	"fmt"
	"sync"

	"github.com/julyfs/julyfs/runner/sessions"
)

// hub is the in-memory copy of one session's log that subscribers read:
// append-only, so a subscriber takes a slice of it under the lock and
// reads the events after unlocking. wake is closed (and replaced) on
// every append, which never blocks.
type hub struct {
	mu     sync.Mutex
	events []sessions.Event
	wake   chan struct{}
	// held reports that the host holds the session (its events arrive
	// through add); refs counts subscriptions. Both under Host.mu.
	held bool
	refs int
}

func newHub() *hub { return &hub{wake: make(chan struct{})} }

// add appends one durable event.
func (hb *hub) add(ev sessions.Event) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if ev.Index != int64(len(hb.events)) {
		return // a repeat (or a gap, which the log cannot have)
	}
	hb.events = append(hb.events, ev)
	close(hb.wake)
	hb.wake = make(chan struct{})
}

// reset replaces the events with the session's whole log when it is
// longer (read again from disk, or from the log when the session is held).
func (hb *hub) reset(events []sessions.Event) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if len(events) <= len(hb.events) {
		return
	}
	hb.events = events
	close(hb.wake)
	hb.wake = make(chan struct{})
}

// dropHub forgets hb when nothing holds or follows its session. h.mu is
// held.
func (h *Host) dropHub(id string, hb *hub) {
	if !hb.held && hb.refs == 0 && h.hubs[id] == hb {
		delete(h.hubs, id)
	}
}

// Subscription follows one session's events; see Host.Subscribe. It is
// for one goroutine.
type Subscription struct {
	h      *Host
	id     string
	hub    *hub
	next   int64
	closed bool
}

// Subscribe follows session id's events from index from (0: the whole
// log): Poll returns the events at and after from as they come. Close it
// when done.
func (h *Host) Subscribe(id string, from int64) (*Subscription, error) {
	if from < 0 {
		return nil, fmt.Errorf("event index %d: must be at least 0", from)
	}
	h.mu.Lock()
	hb := h.hubs[id]
	if hb != nil && hb.held {
		hb.refs++
		h.mu.Unlock()
		return &Subscription{h: h, id: id, hub: hb, next: from}, nil
	}
	h.mu.Unlock()
	// Not held here: the log on disk (it may have grown in another
	// process since a subscriber last read it).
	_, events, _, err := h.opts.Store.Read(id)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	hb = h.hubs[id]
	if hb == nil {
		hb = newHub()
		h.hubs[id] = hb
	}
	if !hb.held {
		hb.reset(events)
	}
	hb.refs++
	return &Subscription{h: h, id: id, hub: hb, next: from}, nil
}

// Poll returns the events not yet returned (possibly none; the slice is
// shared: do not modify it) and a channel closed when more may have come.
func (s *Subscription) Poll() ([]sessions.Event, <-chan struct{}) {
	s.hub.mu.Lock()
	evs, wake := s.hub.events, s.hub.wake
	s.hub.mu.Unlock()
	if s.next >= int64(len(evs)) {
		return nil, wake
	}
	out := evs[s.next:len(evs):len(evs)]
	s.next = int64(len(evs))
	return out, wake
}

// Done is closed when the host has shut down: the subscription has
// nothing more to give after a last Poll.
func (s *Subscription) Done() <-chan struct{} { return s.h.done }

// Close ends the subscription.
func (s *Subscription) Close() {
	if s.closed {
		return
	}
	s.closed = true
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	s.hub.refs--
	s.h.dropHub(s.id, s.hub)
}
