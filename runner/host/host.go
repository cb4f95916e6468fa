// Package host runs one agent's durable sessions in the background for a
// server: a message starts a turn at once, further messages to a busy
// session wait in its queue, a running turn can be cancelled, and a
// session's events can be followed live. july serve puts an HTTP API
// (package runner/httpapi) over it, and the schedule engine (package
// runner/schedule) fires through it ([Host.StartTask], [Host.Wake]).
//
// # Sessions and holding
//
// Sessions live in a sessions.Store, the same STATE/sessions/<id>/ that
// july run, july sessions and july show read. The host holds a session
// (its flock) only while it works on it: from the message that starts a
// turn until its queue is empty, when the tree is released and the lock
// dropped. Between turns another process (july run --session) may
// continue the session; while it does, a message here fails with
// sessions.ErrInUse, and the other way round. Each held session has its
// own bound tree (runner.Agent.OpenLoop): a temp: root's files are kept
// with the session and put back when it is held again. An agent with a
// search index holds the index exclusively while a tree is bound, so
// its sessions are worked on one at a time.
//
// # Queue and cancellation
//
// A session runs one turn at a time. A message to a session with a turn
// under way waits in the session's FIFO queue (at most
// Options.QueueLimit; one more is [ErrQueueFull]); turns run in the
// order their messages arrived, never interleaved. [Host.Cancel] ends the
// running turn as turn.failed "turn interrupted"; queued messages then
// run, and the session stays usable.
//
// # Following events
//
// [Host.Subscribe] returns a [Subscription] from an event index: the
// events already in the log, then each event once it is durable, with no
// gap and no repeat. Appending an event never waits for a subscriber: a
// subscriber that reads slowly just finds more events when it next polls.
// Events are held in memory only while the session is held or followed;
// an idle, unfollowed session is read from the store on demand. Events
// another process appends while it holds the session (july run --session,
// or another server on a shared PostgreSQL store) reach subscribers within
// Options.PollInterval: a followed session this host does not hold is
// checked that often while the store says a turn is under way.
//
// # Shutdown and recovery
//
// [Host.Shutdown] refuses new messages ([ErrClosed]), lets running and
// queued turns finish until its context ends, then cancels what is left
// (recorded as interrupted; messages still queued are dropped and
// logged) and ends every subscription. [Host.Recover] closes, as
// interrupted, the turns of sessions whose process died mid-turn.
//
// # Concurrency
//
// A Host is safe for concurrent use. Errors are sessions.ErrUnknown (no
// such session, or a malformed id), sessions.ErrInUse, [ErrQueueFull],
// [ErrNotRunning], [ErrClosed], [ErrEmptyMessage], or what binding the
// tree or writing the log returned.
package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
)

// DefaultQueueLimit is Options.QueueLimit's default.
const DefaultQueueLimit = 16

// Session states reported by Get and List.
const (
	StateIdle    = "idle"
	StateRunning = "running"
)

// PurposeSchedule is the purpose of a session a schedule started.
const PurposeSchedule = "schedule"

var (
	// ErrQueueFull is a message to a session whose queue is full.
	ErrQueueFull = errors.New("queue full")
	// ErrNotRunning is a cancel with no turn running.
	ErrNotRunning = errors.New("no turn running")
	// ErrClosed is a message after Shutdown began.
	ErrClosed = errors.New("server shutting down")
	// ErrEmptyMessage is a message with no text.
	ErrEmptyMessage = errors.New("empty message")
)

// Options configure a Host.
type Options struct {
	// Agent is the agent whose sessions the host runs. Required.
	Agent *runner.Agent
	// Store holds the sessions. Required.
	Store *sessions.Store
	// Model answers every session's turns. Required.
	Model model.Model
	// Session configures binding each session's tree (its SessionID is
	// set per session).
	Session runner.SessionOptions
	// MaxSteps bounds the model calls of a turn (0: runner.DefaultMaxSteps).
	MaxSteps int
	// QueueLimit bounds the messages waiting behind a running turn, per
	// session (0: DefaultQueueLimit).
	QueueLimit int
	// Commit, when set, is the end-of-turn result hook (the spec's
	// result.md): it runs on each turn's final text before the turn
	// completes, and an error fails the turn.
	Commit func(ctx context.Context, meta sessions.Meta, text string) error
	// Logf, when set, reports what happens off any caller's path (a
	// turn's log write failing, messages dropped at shutdown).
	Logf func(format string, args ...any)
	// PollInterval is how often a followed session that this host does
	// not hold is checked for events another process appended (0:
	// DefaultPollInterval; negative: never).
	PollInterval time.Duration

	// Layer, when set, is the runner.OpenOptions.Layer of every resumed
	// session, and of new ones with NewLayer (july serve's copy-on-write
	// sessions, package runner/cowsession).
	Layer    func(ctx context.Context, log *sessions.Log, sopts *runner.SessionOptions, lopts *runner.LoopOptions) (func(), error)
	NewLayer bool
}

// Message is one message to a session.
type Message struct {
	// Text is the message. Required.
	Text string
	// Data is merged into message.received's data (see runner.TurnInput).
	Data map[string]any
}

// CreateOptions describe a new session.
type CreateOptions struct {
	// Mode, Purpose and ScheduleID go to session.json (sessions.Meta).
	Mode, Purpose, ScheduleID string
}

// Started is a message accepted: its session and the id its turn has
// (or will have, once it leaves the queue).
type Started struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
}

// Info is a session as Get and List report it.
type Info struct {
	sessions.Meta
	// State is StateRunning while a turn runs or waits (here, or in
	// another process), else StateIdle.
	State string `json:"state"`
	// Queued counts the messages waiting behind the running turn.
	Queued int `json:"queued"`
}

// Host runs one agent's sessions; see the package doc.
type Host struct {
	opts  Options
	limit int
	// tree serializes bound trees when the agent has an index (nil: no
	// limit).
	tree chan struct{}

	pollEvery time.Duration

	mu     sync.Mutex
	active map[string]*active
	hubs   map[string]*hub
	closed bool
	done   chan struct{} // closed when Shutdown ends the subscriptions
	work   sync.WaitGroup
}

// active is a session the host holds.
type active struct {
	id    string
	ready chan struct{} // closed once sl is set, or opening failed
	err   error         // why opening failed
	sl    *runner.SessionLoop
	hub   *hub

	queue   []runner.TurnInput
	running string             // the running turn's id
	cancel  context.CancelFunc // of the running turn
	closing bool               // the worker is releasing the session
	closed  chan struct{}      // closed once released
	views   int                // Views under way (view.go)
	viewed  chan struct{}      // closed when views drops to 0, if waited on

	// stop cancels the running turn saying why (Cancel, Shutdown), for a
	// call waiting for approval to record.
	stop context.CancelCauseFunc
}

// New returns a host for opts.
func New(opts Options) (*Host, error) {
	switch {
	case opts.Agent == nil:
		return nil, errors.New("host: Options.Agent is required")
	case opts.Store == nil:
		return nil, errors.New("host: Options.Store is required")
	case opts.Model == nil:
		return nil, errors.New("host: Options.Model is required")
	}
	h := &Host{opts: opts, limit: opts.QueueLimit, active: map[string]*active{}, hubs: map[string]*hub{}, done: make(chan struct{})}
	if h.limit <= 0 {
		h.limit = DefaultQueueLimit
	}
	switch h.pollEvery = opts.PollInterval; {
	case h.pollEvery == 0:
		h.pollEvery = DefaultPollInterval
	case h.pollEvery < 0:
		h.pollEvery = 0
	}
	if (opts.Agent.IndexDir != "" || opts.Session.IndexDir != "") && !opts.Session.NoIndex {
		h.tree = make(chan struct{}, 1)
	}
	return h, nil
}

// Agent returns the host's agent.
func (h *Host) Agent() *runner.Agent { return h.opts.Agent }

// Model returns the model the host's turns run.
func (h *Host) Model() model.Model { return h.opts.Model }

// Store returns the host's session store.
func (h *Host) Store() *sessions.Store { return h.opts.Store }

// Result reports whether turns end with a commit (Options.Commit).
func (h *Host) Result() bool { return h.opts.Commit != nil }

func (h *Host) logf(format string, args ...any) {
	if h.opts.Logf != nil {
		h.opts.Logf(format, args...)
	}
}

// Create starts a new session whose first turn runs msg, and returns
// once the session exists; the turn runs in the background.
func (h *Host) Create(ctx context.Context, msg Message, co CreateOptions) (Started, error) {
	if msg.Text == "" {
		return Started{}, ErrEmptyMessage
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return Started{}, ErrClosed
	}
	meta := sessions.Meta{Mode: co.Mode, Purpose: co.Purpose, ScheduleID: co.ScheduleID}
	a := &active{ready: make(chan struct{}), closed: make(chan struct{})}
	sl, err := h.openLoop(ctx, runner.OpenOptions{Meta: meta}, a)
	if err != nil {
		return Started{}, err
	}
	a.id, a.sl = sl.Log.ID(), sl
	in := runner.TurnInput{ID: sessions.NewTurnID(), Text: msg.Text, Data: msg.Data}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		h.release(sl)
		return Started{}, ErrClosed
	}
	a.queue = []runner.TurnInput{in}
	h.activate(a)
	return Started{SessionID: a.id, TurnID: in.ID}, nil
}

// Send runs msg as the next turn of session id: at once, or after the
// turns already queued.
func (h *Host) Send(ctx context.Context, id string, msg Message) (Started, error) {
	if msg.Text == "" {
		return Started{}, ErrEmptyMessage
	}
	if !sessions.ValidID(id) {
		_, _, _, err := h.opts.Store.Read(id) // the store's message for a malformed id
		return Started{}, err
	}
	in := runner.TurnInput{ID: sessions.NewTurnID(), Text: msg.Text, Data: msg.Data}
	for {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return Started{}, ErrClosed
		}
		a := h.active[id]
		if a != nil {
			if again, err := h.awaitSettled(ctx, a); again || err != nil {
				if err != nil {
					return Started{}, err
				}
				continue
			}
			if len(a.queue) >= h.limit {
				h.mu.Unlock()
				return Started{}, fmt.Errorf("%w: session %s already has %d messages waiting behind its running turn (the queue limit); wait for a turn to end", ErrQueueFull, id, len(a.queue))
			}
			a.queue = append(a.queue, in)
			h.mu.Unlock()
			return Started{SessionID: id, TurnID: in.ID}, nil
		}
		// Not held: hold it. Others wait on ready meanwhile.
		a, err := h.hold(ctx, id)
		if err != nil {
			return Started{}, err
		}
		a.queue = append(a.queue, in)
		h.activate(a)
		h.mu.Unlock()
		return Started{SessionID: id, TurnID: in.ID}, nil
	}
}

// openLoop holds a session and binds its tree, with the loop's events
// going to a's hub (set once a is activated).
func (h *Host) openLoop(ctx context.Context, oo runner.OpenOptions, a *active) (*runner.SessionLoop, error) {
	if h.tree != nil {
		select {
		case h.tree <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	oo.Store = h.opts.Store
	if h.opts.Layer != nil && (oo.Resume != "" || h.opts.NewLayer) {
		oo.Layer = h.opts.Layer
	}
	h.mu.Lock()
	oo.Session = h.opts.Session
	h.mu.Unlock()
	oo.Loop = runner.LoopOptions{Model: h.opts.Model, MaxSteps: h.opts.MaxSteps, OnEvent: func(ev sessions.Event) { a.hub.add(ev) }}
	var sl *runner.SessionLoop
	if h.opts.Commit != nil {
		oo.Loop.Commit = func(ctx context.Context, text string) error { return h.opts.Commit(ctx, sl.Log.Meta(), text) }
	}
	sl, err := h.opts.Agent.OpenLoop(context.WithoutCancel(ctx), oo)
	if err != nil && h.tree != nil {
		<-h.tree
	}
	return sl, err
}

// release closes a session loop that was never activated.
func (h *Host) release(sl *runner.SessionLoop) {
	if err := sl.Close(); err != nil {
		h.logf("session %s: releasing: %v", sl.Log.ID(), err)
	}
	if h.tree != nil {
		<-h.tree
	}
}

// activate registers a (held, with its first message queued), attaches
// its hub and starts its worker. h.mu is held.
func (h *Host) activate(a *active) {
	h.active[a.id] = a
	hb := h.hubs[a.id]
	if hb == nil {
		hb = newHub()
		h.hubs[a.id] = hb
	}
	hb.held = true
	hb.reset(a.sl.Log.Events())
	a.hub = hb
	close(a.ready)
	h.work.Add(1)
	go h.worker(a)
}

// worker runs a's queued turns, then releases the session.
func (h *Host) worker(a *active) {
	defer h.work.Done()
	for {
		h.mu.Lock()
		for h.waitViews(a) && len(a.queue) == 0 {
		}
		if len(a.queue) == 0 {
			a.closing = true
			h.mu.Unlock()
			h.release(a.sl)
			h.mu.Lock()
			delete(h.active, a.id)
			a.hub.held = false
			h.dropHub(a.id, a.hub)
			close(a.closed)
			h.mu.Unlock()
			return
		}
		in := a.queue[0]
		a.queue = slices.Delete(a.queue, 0, 1)
		ctx, cancel := context.WithCancelCause(context.Background())
		a.running, a.cancel, a.stop = in.ID, func() { cancel(nil) }, cancel
		h.mu.Unlock()
		_, err := a.sl.RunTurn(ctx, in)
		cancel(nil)
		h.mu.Lock()
		a.running, a.cancel, a.stop = "", nil, nil
		h.mu.Unlock()
		var te *runner.TurnError
		if err != nil && !errors.As(err, &te) {
			h.logf("session %s: turn %s: %v", a.id, in.ID, err)
		}
	}
}

// The causes of a running turn's cancellation, which a call waiting for
// approval records as the reason it was denied.
var (
	errCancelled = errors.New("the turn was cancelled")
	errStopping  = errors.New("the server is stopping")
)

// Cancel ends the running turn of session id as interrupted, and returns
// its id. Queued messages run after it.
func (h *Host) Cancel(id string) (string, error) {
	h.mu.Lock()
	a := h.active[id]
	if a != nil && a.cancel != nil {
		a.stop(errCancelled)
		turn := a.running
		h.mu.Unlock()
		return turn, nil
	}
	h.mu.Unlock()
	if err := h.opts.Store.Exists(id); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%w in session %s (this server runs none for it)", ErrNotRunning, id)
}

// Get returns session id's metadata (its totals as of its last event)
// and state.
func (h *Host) Get(id string) (Info, error) {
	h.mu.Lock()
	if a := h.active[id]; a != nil && a.sl != nil && !a.closing && a.busy() {
		info := Info{Meta: a.sl.Log.Meta(), State: StateRunning, Queued: len(a.queue)}
		h.mu.Unlock()
		return info, nil
	}
	h.mu.Unlock()
	meta, events, _, err := h.opts.Store.Read(id)
	if err != nil {
		return Info{}, err
	}
	info := Info{Meta: meta, State: StateIdle}
	if sessions.OpenTurn(events) != "" {
		info.State = StateRunning
	}
	return info, nil
}

// List returns every session, oldest first, with its state.
func (h *Host) List() ([]Info, error) {
	metas, err := h.opts.Store.List()
	if err != nil {
		return nil, err
	}
	out := make([]Info, len(metas))
	for i, m := range metas {
		out[i] = Info{Meta: m, State: StateIdle}
		h.mu.Lock()
		a := h.active[m.ID]
		if a != nil && a.sl != nil && !a.closing && a.busy() {
			out[i] = Info{Meta: a.sl.Log.Meta(), State: StateRunning, Queued: len(a.queue)}
		}
		h.mu.Unlock()
		if a == nil && h.opts.Store.Stale(m.ID) {
			// session.json is rewritten when a turn ends: older than the
			// events, a turn may be under way in another process.
			if _, events, _, err := h.opts.Store.Read(m.ID); err == nil && sessions.OpenTurn(events) != "" {
				out[i].State = StateRunning
			}
		}
	}
	return out, nil
}

// Recover closes, as interrupted, the open turn of every session whose
// process ended mid-turn (killed), by holding it once (sessions'
// Resume). Sessions another process holds are left alone. It returns
// what it recovered.
func (h *Host) Recover() ([]sessions.Warning, error) {
	metas, err := h.opts.Store.List()
	if err != nil {
		return nil, err
	}
	var warns []sessions.Warning
	for _, m := range metas {
		if !h.opts.Store.Stale(m.ID) {
			continue
		}
		h.mu.Lock()
		busy := h.active[m.ID] != nil
		h.mu.Unlock()
		if busy {
			continue
		}
		_, events, _, err := h.opts.Store.Read(m.ID)
		if err != nil || sessions.OpenTurn(events) == "" {
			continue
		}
		log, ws, err := h.opts.Store.Resume(m.ID)
		if errors.Is(err, sessions.ErrInUse) {
			continue
		}
		if err != nil {
			warns = append(warns, sessions.Warning{Message: err.Error()})
			continue
		}
		warns = append(warns, ws...)
		log.Close()
	}
	return warns, nil
}

// Shutdown refuses new messages, waits for running and queued turns
// until ctx ends, then cancels the running turns (interrupted), drops
// the queued messages (each logged) and waits at most grace for the
// turns to end. Every subscription then ends. It returns an error if a
// turn did not end within grace.
func (h *Host) Shutdown(ctx context.Context, grace time.Duration) error {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	idle := make(chan struct{})
	go func() { h.work.Wait(); close(idle) }()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		h.mu.Lock()
		for _, a := range h.active {
			for _, in := range a.queue {
				h.logf("session %s: dropping queued turn %s (%d bytes of message): the server is stopping", a.id, in.ID, len(in.Text))
			}
			a.queue = nil
			if a.cancel != nil {
				a.stop(errStopping)
			}
		}
		h.mu.Unlock()
		select {
		case <-idle:
		case <-time.After(grace):
			err = fmt.Errorf("host: turns still running %s after they were cancelled", grace)
		}
	}
	h.mu.Lock()
	select {
	case <-h.done:
	default:
		close(h.done)
	}
	h.mu.Unlock()
	return err
}

// Closed reports whether Shutdown has begun.
func (h *Host) Closed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// StartTask creates a task-mode session (mode "task", purpose
// "schedule", scheduleId) whose first turn runs prompt, and returns its
// id: the schedule engine's Sink.
func (h *Host) StartTask(ctx context.Context, scheduleID, prompt string) (string, error) {
	st, err := h.Create(ctx, Message{Text: prompt}, CreateOptions{Mode: sessions.ModeTask, Purpose: PurposeSchedule, ScheduleID: scheduleID})
	return st.SessionID, err
}

// Wake sends text into session id as a new turn, with data merged into
// message.received's data: the schedule engine's Sink.
// A session that no longer exists is schedule.ErrSessionGone.
func (h *Host) Wake(ctx context.Context, sessionID, text string, data map[string]any) error {
	_, err := h.Send(ctx, sessionID, Message{Text: text, Data: data})
	if errors.Is(err, sessions.ErrUnknown) {
		return fmt.Errorf("%w: %w", schedule.ErrSessionGone, err)
	}
	return err
}

// UseReminders gives the sessions held from now on the reminders tool
// over r (when the agent's plan grants it). The reminder service is made
// with the host as its Sink, so it comes after New.
func (h *Host) UseReminders(r *schedule.Reminders) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.opts.Session.Harness.Reminders = r
}

var _ schedule.Sink = (*Host)(nil)

// Tools returns the names of the tools a turn's model gets from the
// tree (binding it once, without its index), followed by the harness
// builtins the plan grants (allowlist names), for /v1/info.
func (h *Host) Tools(ctx context.Context) ([]string, error) {
	a := h.opts.Agent
	so := h.opts.Session
	so.NoIndex = true
	if a.Live() {
		so.SessionID = sessions.NewID()
	}
	s, err := a.Open(ctx, so)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	t, err := s.Turn()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, tl := range t.Tools() {
		out = append(out, tl.Name)
	}
	unserved := a.Plan.Unserved()
	for _, n := range a.Plan.Harness {
		if !slices.Contains(unserved, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// awaitSettled is called with h.mu held for a session's active entry a.
// While a is still opening or is closing, it unlocks h.mu, waits for that
// to end (or ctx), and reports again: the caller looks the session up
// anew. Otherwise it returns at once with h.mu still held.
func (h *Host) awaitSettled(ctx context.Context, a *active) (again bool, err error) {
	var wait chan struct{}
	select {
	case <-a.ready:
		if a.closing {
			wait = a.closed
		}
	default:
		wait = a.ready
	}
	if wait == nil {
		return false, nil
	}
	h.mu.Unlock()
	select {
	case <-wait:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// hold is called with h.mu held for a session no one holds: it enters a
// placeholder that others wait on (its ready), opens the session's loop
// with h.mu released, and returns the entry with its loop set and h.mu
// held again. On failure the placeholder is gone, its waiters see the
// error, and h.mu is not held.
func (h *Host) hold(ctx context.Context, id string) (*active, error) {
	a := &active{id: id, ready: make(chan struct{}), closed: make(chan struct{})}
	h.active[id] = a
	h.mu.Unlock()
	sl, err := h.openLoop(ctx, runner.OpenOptions{Resume: id}, a)
	h.mu.Lock()
	if err == nil && h.closed {
		h.release(sl)
		err = ErrClosed
	}
	if err != nil {
		delete(h.active, id)
		a.err = err
		close(a.ready)
		h.mu.Unlock()
		return nil, err
	}
	for _, w := range sl.Warnings {
		h.logf("%s", w)
	}
	a.sl = sl
	return a, nil
}
