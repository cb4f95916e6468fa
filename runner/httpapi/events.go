package httpapi

import (
	"net/http"
	"time"

	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/sessions"
)

// events is GET /v1/sessions/{id}/events: Server-Sent Events.
func (a *agentAPI) events(w http.ResponseWriter, r *http.Request) {
	from := int64(0)
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := parseIndex("Last-Event-ID", v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		from = n + 1
	} else if v := r.URL.Query().Get("after"); v != "" {
		n, err := parseIndex("after", v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		from = n + 1
	}
	select {
	case <-a.s.closing:
		writeError(w, http.StatusServiceUnavailable, "shutting_down", "the server is stopping")
		return
	default:
	}
	sub, err := a.Host.Subscribe(r.PathValue("id"), from)
	if err != nil {
		writeErr(w, err)
		return
	}
	defer sub.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	timeout := a.s.opts.WriteTimeout
	flush := func() bool {
		rc.SetWriteDeadline(time.Now().Add(timeout))
		return rc.Flush() == nil
	}
	if !flush() {
		return
	}
	heartbeat := time.NewTicker(a.s.opts.Heartbeat)
	defer heartbeat.Stop()
	write := func(evs []sessions.Event, frames [][]byte) bool {
		if len(evs) == 0 {
			return true
		}
		for i, ev := range evs {
			f := frames[i]
			if f == nil {
				f = host.Frame(ev)
			}
			rc.SetWriteDeadline(time.Now().Add(timeout))
			if _, err := w.Write(f); err != nil {
				return false
			}
		}
		return flush()
	}
	for {
		// Poll first, then wait on the channel the poll returned: an
		// event appended in between closes it, so nothing is missed.
		evs, frames, wake := sub.PollFrames()
		if !write(evs, frames) {
			return
		}
		select {
		case <-wake:
		case <-heartbeat.C:
			rc.SetWriteDeadline(time.Now().Add(timeout))
			if _, err := w.Write([]byte(": heartbeat\n\n")); err != nil || !flush() {
				return
			}
		case <-r.Context().Done():
			return
		case <-sub.Done():
			evs, frames, _ := sub.PollFrames()
			write(evs, frames)
			return
		case <-a.s.closing:
			evs, frames, _ := sub.PollFrames()
			write(evs, frames)
			return
		}
	}
}
