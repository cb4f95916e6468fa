package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/julyfs/julyfs/runner/sessions"
)

// hub is the in-memory copy of one session's log that subscribers read:
// append-only, so a subscriber takes a slice of it under the lock and
// reads the events after unlocking. wake is closed (and replaced) on
// every append, which never blocks.
type hub struct {
	mu     sync.Mutex
	events []sessions.Event
	// frames[i], when set, is events[i] as a Server-Sent Events frame,
	// encoded once when the event arrived live and shared by every
	// subscriber (nil for events read back from the log).
	frames [][]byte
	wake   chan struct{}
	// held reports that the host holds the session (its events arrive
	// through add); refs counts subscriptions. Both under Host.mu.
	held bool
	refs int
	// polling reports the goroutine that reads the events another
	// process appends (see Host.poll), under Host.mu.
	polling bool
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
	hb.frames = append(hb.frames, Frame(ev))
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
	frames := make([][]byte, len(events))
	copy(frames, hb.frames)
	hb.events, hb.frames = events, frames
	close(hb.wake)
	hb.wake = make(chan struct{})
}

// extend appends the events that follow the ones hb has (read from the
// store), skipping those it has.
func (hb *hub) extend(evs []sessions.Event) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	grew := false
	for _, ev := range evs {
		if ev.Index != int64(len(hb.events)) {
			continue
		}
		hb.events = append(hb.events, ev)
		hb.frames = append(hb.frames, nil)
		grew = true
	}
	if grew {
		close(hb.wake)
		hb.wake = make(chan struct{})
	}
}

// DefaultPollInterval is Options.PollInterval's default.
const DefaultPollInterval = 500 * time.Millisecond

// poll follows, for hb's subscribers, the events another process
// appends to session id while this host does not hold it: every
// PollInterval it asks the store how far the log reaches (Store.LogSize:
// a stat, or one row) and, when that moved since the last read, reads the
// events after the ones hb has. Asking for the log's size rather than
// whether session.json lags behind it (Store.Stale) catches a turn that
// began and ended between two ticks. It ends when the session is held
// here, nobody follows it, or the host shuts down.
func (h *Host) poll(id string, hb *hub) {
	t := time.NewTicker(h.pollEvery)
	defer t.Stop()
	last := int64(-1) // the log's size at the last read; -1: read at the next tick
	for {
		select {
		case <-t.C:
		case <-h.done:
		}
		h.mu.Lock()
		stop := hb.held || hb.refs == 0 || h.isDone()
		if stop {
			hb.polling = false
			h.dropHub(id, hb)
		}
		h.mu.Unlock()
		if stop {
			return
		}
		// The size is taken before the read: an event appended between
		// the two moves it again, and is read at the next tick.
		size, err := h.opts.Store.LogSize(id)
		switch {
		case err != nil:
			size = -1 // not known: read, and again next time
		case size == last:
			continue
		}
		hb.mu.Lock()
		from := int64(len(hb.events))
		hb.mu.Unlock()
		evs, err := h.opts.Store.EventsFrom(id, from)
		if err != nil {
			h.logf("session %s: following events another process appends: %v", id, err)
			last = -1 // try again next time
			continue
		}
		hb.extend(evs)
		last = size
	}
}

// isDone reports whether Shutdown ended the subscriptions.
func (h *Host) isDone() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}

// dropHub forgets hb when nothing holds or follows its session. h.mu is
// held.
func (h *Host) dropHub(id string, hb *hub) {
	if !hb.held && hb.refs == 0 && !hb.polling && h.hubs[id] == hb {
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
		if !hb.polling && h.pollEvery > 0 {
			hb.polling = true
			go h.poll(id, hb)
		}
	}
	hb.refs++
	return &Subscription{h: h, id: id, hub: hb, next: from}, nil
}

// Poll returns the events not yet returned (possibly none; the slice is
// shared: do not modify it) and a channel closed when more may have come.
func (s *Subscription) Poll() ([]sessions.Event, <-chan struct{}) {
	evs, _, wake := s.PollFrames()
	return evs, wake
}

// PollFrames is Poll with each event's Server-Sent Events frame (see
// Frame), or nil where the subscriber must encode it itself; both slices
// are shared.
func (s *Subscription) PollFrames() ([]sessions.Event, [][]byte, <-chan struct{}) {
	s.hub.mu.Lock()
	evs, frames, wake := s.hub.events, s.hub.frames, s.hub.wake
	s.hub.mu.Unlock()
	if s.next >= int64(len(evs)) {
		return nil, nil, wake
	}
	n := int64(len(evs))
	out, fr := evs[s.next:n:n], frames[s.next:n:n]
	s.next = n
	return out, fr, wake
}

// Frame encodes ev as one Server-Sent Events frame: "id: <index>",
// "data: <the event as one line of JSON>" and a blank line.
func Frame(ev sessions.Event) []byte {
	var b bytes.Buffer
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(ev.Index, 10))
	b.WriteString("\ndata: ")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil { // ends the line with '\n'
		return nil
	}
	b.WriteByte('\n')
	return b.Bytes()
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
