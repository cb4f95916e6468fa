package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/julyfs/julyfs/runner/sessions"
)

// DefaultTimeout is how long a Queue waits for an answer by default.
const DefaultTimeout = 10 * time.Minute

// maxDecided bounds the decided calls a Queue remembers (to answer a
// second decision with ErrDecided rather than ErrUnknownCall).
const maxDecided = 4096

var (
	// ErrUnknownCall is a decision on a call that is not waiting (and was
	// not decided recently).
	ErrUnknownCall = errors.New("no such approval")
	// ErrDecided is a decision on a call already decided.
	ErrDecided = errors.New("approval already decided")
)

// Pending is a call waiting in a Queue.
type Pending struct {
	SessionID string `json:"sessionId"`
	CallID    string `json:"callId"`
	ToolName  string `json:"toolName"`
	// Args are the call's arguments; Summary the question; Rule the
	// approvals: entry that asks.
	Args    json.RawMessage `json:"args,omitempty"`
	Summary string          `json:"summary"`
	Rule    string          `json:"rule"`
	Since   time.Time       `json:"since"`
	// Deadline is when the call is denied if nobody answers.
	Deadline time.Time `json:"deadline"`
}

type waiting struct {
	p   Pending
	ans chan Answer // buffered, one answer
}

type key struct{ session, call string }

// Queue is the Asker of a server: a call waits until Decide answers it,
// or its timeout denies it (by "timeout"), or its turn ends.
type Queue struct {
	timeout time.Duration
	now     func() time.Time

	mu      sync.Mutex
	pending map[key]*waiting
	decided map[key]bool
	order   []key // decided, oldest first
}

// NewQueue returns a queue whose calls wait at most timeout (0:
// DefaultTimeout).
func NewQueue(timeout time.Duration) *Queue {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Queue{timeout: timeout, now: time.Now, pending: map[key]*waiting{}, decided: map[key]bool{}}
}

// Timeout returns how long a call waits.
func (q *Queue) Timeout() time.Duration { return q.timeout }

// Ask parks req until it is decided. It calls req.Waiting once the call
// is listed by Pending and can be decided.
func (q *Queue) Ask(ctx context.Context, req Request) (Answer, error) {
	k := key{req.SessionID, req.CallID}
	now := q.now()
	w := &waiting{ans: make(chan Answer, 1), p: Pending{SessionID: req.SessionID, CallID: req.CallID, ToolName: req.ToolName,
		Args: req.Args, Summary: req.Summary, Rule: req.Rule.String(), Since: now, Deadline: now.Add(q.timeout)}}
	q.mu.Lock()
	q.pending[k] = w
	delete(q.decided, k)
	q.mu.Unlock()
	if req.Waiting != nil {
		if err := req.Waiting(); err != nil {
			if q.settle(k, w) {
				return Answer{}, err
			}
			return <-w.ans, nil
		}
	}
	timer := time.NewTimer(q.timeout)
	defer timer.Stop()
	select {
	case a := <-w.ans:
		return a, nil
	case <-timer.C:
		if q.settle(k, w) {
			return Answer{By: sessions.DecidedByTimeout, Reason: fmt.Sprintf("nobody approved it within %s (the server's --approval-timeout), so it was denied", q.timeout)}, nil
		}
		return <-w.ans, nil // decided as the timer fired
	case <-ctx.Done():
		if q.settle(k, w) {
			return Answer{}, ctx.Err()
		}
		return <-w.ans, nil
	}
}

// settle takes w out of the pending calls, if it is still there, and
// records k as decided. It reports whether it took it.
func (q *Queue) settle(k key, w *waiting) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending[k] != w {
		return false
	}
	delete(q.pending, k)
	q.markDecided(k)
	return true
}

// markDecided remembers k (q.mu held), dropping the oldest past
// maxDecided.
func (q *Queue) markDecided(k key) {
	if q.decided[k] {
		return
	}
	q.decided[k] = true
	q.order = append(q.order, k)
	if len(q.order) > maxDecided {
		delete(q.decided, q.order[0])
		q.order = slices.Delete(q.order, 0, 1)
	}
}

// Decide answers the call callID of session sessionID: allow runs it,
// always also allows its tool for the rest of the session. A call that
// is not waiting is ErrUnknownCall, one decided already ErrDecided.
func (q *Queue) Decide(sessionID, callID string, allow, always bool) error {
	k := key{sessionID, callID}
	q.mu.Lock()
	defer q.mu.Unlock()
	w := q.pending[k]
	if w == nil {
		if q.decided[k] {
			return fmt.Errorf("%w: call %s of session %s", ErrDecided, callID, sessionID)
		}
		return fmt.Errorf("%w: call %s of session %s is not waiting for approval", ErrUnknownCall, callID, sessionID)
	}
	delete(q.pending, k)
	q.markDecided(k)
	a := Answer{Allow: allow, Always: allow && always, By: sessions.DecidedByUser}
	if !allow {
		a.Reason = "the user denied it"
	}
	w.ans <- a
	return nil
}

// Pending returns the calls of session sessionID waiting for an answer
// ("": of every session), oldest first.
func (q *Queue) Pending(sessionID string) []Pending {
	q.mu.Lock()
	out := make([]Pending, 0, len(q.pending))
	for k, w := range q.pending {
		if sessionID == "" || k.session == sessionID {
			out = append(out, w.p)
		}
	}
	q.mu.Unlock()
	slices.SortFunc(out, func(a, b Pending) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.CallID, b.CallID)
	})
	return out
}
