package schedule

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Sink is how a firing acts; a server implements it over its session host.
type Sink interface {
	// StartTask creates a task-mode session (session.json mode "task",
	// purpose "schedule", scheduleId) whose first turn's message is
	// prompt, and returns its id once the session exists; the turn runs in
	// the background.
	StartTask(ctx context.Context, scheduleID, prompt string) (sessionID string, err error)
	// Wake sends text into the existing session as a new turn (queued
	// behind a running one); data is merged into message.received's data
	// ({"reminderId": …, "fireCount": …}). An error wrapping
	// ErrSessionGone says the session no longer exists: the reminder is
	// disarmed at once instead of retried.
	Wake(ctx context.Context, sessionID, text string, data map[string]any) error
}

// ErrSessionGone is what a Sink's Wake wraps when the session does not
// exist (any more).
var ErrSessionGone = errors.New("session does not exist")

// ErrUnknownSchedule is returned by Dispatch for an id no schedule has.
var ErrUnknownSchedule = errors.New("unknown schedule")

// Options configure a Scheduler and a Reminders.
type Options struct {
	// StateRoot is the agent's state root (.july in the agent directory):
	// last fires persist under StateRoot/schedules/, reminders under
	// StateRoot/reminders/. Required unless Store is set.
	StateRoot string
	// Store keeps the last fires and the reminders (default
	// DiskStore(StateRoot)).
	Store Store
	// Clock is the time source (default RealClock()).
	Clock Clock
	// Sink starts the sessions of schedules and wakes those of
	// reminders. Required.
	Sink Sink
	// Auto arms the timers. False (july serve --dev, or --no-schedules
	// for the scheduler) fires only through Dispatch and Reminders.Fire.
	Auto bool
	// Logf, when set, receives one line per firing and per problem.
	Logf func(format string, args ...any)

	// MaxRemindersPerSession bounds the armed reminders of one session
	// (default DefaultMaxRemindersPerSession).
	MaxRemindersPerSession int
	// MaxPromptBytes bounds a reminder's prompt and until, each (default
	// DefaultMaxPromptBytes).
	MaxPromptBytes int
	// MaxWakeFailures is how many consecutive failed wakes (or run
	// handler errors) disarm a reminder (default DefaultMaxWakeFailures).
	MaxWakeFailures int
}

func (o *Options) check() error {
	if o.Store == nil && o.StateRoot == "" {
		return errors.New("schedule: Options.StateRoot is required (or Options.Store)")
	}
	if o.Store == nil {
		o.Store = DiskStore(o.StateRoot)
	}
	if o.Sink == nil {
		return errors.New("schedule: Options.Sink is required")
	}
	if o.Clock == nil {
		o.Clock = RealClock()
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.MaxRemindersPerSession <= 0 {
		o.MaxRemindersPerSession = DefaultMaxRemindersPerSession
	}
	if o.MaxPromptBytes <= 0 {
		o.MaxPromptBytes = DefaultMaxPromptBytes
	}
	if o.MaxWakeFailures <= 0 {
		o.MaxWakeFailures = DefaultMaxWakeFailures
	}
	return nil
}

// SchedulesDir is where the scheduler keeps one state file per schedule,
// under the state root.
const SchedulesDir = "schedules"

// ScheduleState is what the Store keeps of one schedule
// (StateRoot/schedules/<id>.json on disk).
type ScheduleState struct {
	ScheduleID string `json:"scheduleId"`
	Cron       string `json:"cron"`
	// ArmedAt is when a scheduler firing automatically first saw the
	// schedule: ticks after it count as missed when no tick has fired.
	ArmedAt time.Time `json:"armedAt,omitzero"`
	// LastTick is the last cron tick fired, persisted before its session
	// starts: no tick at or before it fires again.
	LastTick time.Time `json:"lastTick,omitzero"`
	// LastFire is when the last firing (tick or dispatch) happened.
	LastFire    time.Time `json:"lastFire,omitzero"`
	LastSession string    `json:"lastSessionId,omitempty"`
	LastError   string    `json:"lastError,omitempty"`
}

// ScheduleInfo is what Schedules reports of one schedule.
type ScheduleInfo struct {
	ID   string `json:"id"`
	File string `json:"file"`
	Cron string `json:"cron"`
	// Next is the next tick after now (when Auto is off, the tick it
	// would fire at).
	Next     time.Time `json:"next,omitzero"`
	LastTick time.Time `json:"lastTick,omitzero"`
	LastFire time.Time `json:"lastFire,omitzero"`
	// LastSessionID is the session the last firing started.
	LastSessionID string `json:"lastSessionId,omitempty"`
	// LastError is why the last firing failed to start its session.
	LastError string `json:"lastError,omitempty"`
}

// Scheduler fires an agent's schedules: each tick starts a task session
// through Sink.StartTask, exactly once per tick across restarts. Its
// methods are safe for concurrent use.
type Scheduler struct {
	opts    Options
	order   []string
	entries map[string]*entry
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu      sync.Mutex
	started bool
	stopped bool
	unlock  func() // the Store's schedules lock while firing, or nil
}

type entry struct {
	s Schedule

	mu   sync.Mutex // serializes the firings of one schedule; guards st
	st   ScheduleState
	stop func() bool // the armed timer (guarded by Scheduler.mu)
}

// NewScheduler returns a scheduler for scheds (as Load returns them),
// reading their state under opts.StateRoot. It fails on a missing
// StateRoot or Sink, two schedules with one id, and a state file that
// does not parse (the error names it: remove it to forget the schedule's
// last fire).
func NewScheduler(scheds []Schedule, opts Options) (*Scheduler, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{opts: opts, entries: map[string]*entry{}, ctx: ctx, cancel: cancel}
	for _, sc := range scheds {
		if _, dup := s.entries[sc.ID]; dup {
			cancel()
			return nil, fmt.Errorf("schedule: two schedules with id %q", sc.ID)
		}
		if sc.spec == nil {
			sp, err := ParseCron(sc.Cron)
			if err != nil {
				cancel()
				return nil, fmt.Errorf("schedule %s: bad cron %q: %w", sc.ID, sc.Cron, err)
			}
			sc.spec = sp
		}
		e := &entry{s: sc}
		if err := e.load(opts.Store); err != nil {
			cancel()
			return nil, err
		}
		s.entries[sc.ID] = e
		s.order = append(s.order, sc.ID)
	}
	return s, nil
}

// load reads e's state from store (none: a schedule never armed).
func (e *entry) load(store Store) error {
	st, err := store.Schedule(e.s.ID)
	if err != nil {
		return err
	}
	st.ScheduleID, st.Cron = e.s.ID, e.s.Cron
	e.st = st
	return nil
}

// Start starts firing. With Auto off it does nothing (only Dispatch
// fires). With Auto on, it takes the state root's schedules lock
// (StateRoot/schedules/.lock, an flock: one process fires an agent's
// schedules) — held by another process, Start fires nothing and returns
// an error wrapping ErrFiredElsewhere — then, for each schedule, fires
// once the latest tick missed since the last one fired (or since the
// schedule was first armed) — synchronously, so Start returns after those
// sessions have been started — and arms a timer for the next tick. Start
// after Stop, or after a successful Start, does nothing.
func (s *Scheduler) Start() error {
	s.mu.Lock()
	if s.started || s.stopped || !s.opts.Auto {
		s.started = true
		s.mu.Unlock()
		return nil
	}
	unlock, err := s.opts.Store.Lock(SchedulesDir)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	// What another process fired before it let go is in the store.
	for _, id := range s.order {
		e := s.entries[id]
		e.mu.Lock()
		err := e.load(s.opts.Store)
		e.mu.Unlock()
		if err != nil {
			if unlock != nil {
				unlock()
			}
			s.mu.Unlock()
			return err
		}
	}
	s.started, s.unlock = true, unlock
	s.mu.Unlock()
	now := s.opts.Clock.Now()
	for _, id := range s.order {
		e := s.entries[id]
		e.mu.Lock()
		if e.st.ArmedAt.IsZero() && e.st.LastTick.IsZero() {
			e.st.ArmedAt = now.UTC()
			if err := s.opts.Store.SaveSchedule(e.st); err != nil {
				s.opts.Logf("schedule %s: %v", id, err)
			}
		}
		since := e.st.LastTick
		if e.st.ArmedAt.After(since) {
			since = e.st.ArmedAt
		}
		e.mu.Unlock()
		if t := latestTick(e.s, since, now); !t.IsZero() {
			s.opts.Logf("schedule %s: firing the tick %s missed while not running", id, t.Format(time.RFC3339))
			s.fireTick(e, t)
		}
		s.arm(e)
	}
	return nil
}

// Stop disarms the timers, waits for the firings under way to return and
// releases the schedules lock. It is safe to call more than once.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	s.stopped = true
	for _, e := range s.entries {
		if e.stop != nil {
			e.stop()
			e.stop = nil
		}
	}
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	if s.unlock != nil {
		s.unlock()
		s.unlock = nil
	}
	s.mu.Unlock()
}

// arm sets e's timer for its next tick after now.
func (s *Scheduler) arm(e *entry) {
	now := s.opts.Clock.Now()
	next := e.s.next(now)
	if next.IsZero() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if e.stop != nil {
		e.stop()
	}
	e.stop = s.opts.Clock.AfterFunc(next.Sub(now), func() { s.onTimer(e, next) })
}

func (s *Scheduler) onTimer(e *entry, due time.Time) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	now := s.opts.Clock.Now()
	if now.Before(due) { // the wall clock was set back: wait on
		s.arm(e)
		return
	}
	// The latest tick due: after a suspended process, one firing, not one
	// per tick slept through.
	e.mu.Lock()
	since := e.st.LastTick
	e.mu.Unlock()
	if t := latestTick(e.s, since, now); !t.IsZero() {
		s.fireTick(e, t)
	}
	s.arm(e)
}

// fireTick fires tick unless a tick at or after it has fired: the tick is
// persisted (fsynced) before the session starts, so a crash or restart
// never fires it again. A session that fails to start is logged and
// recorded in the state file, and the tick stays consumed.
func (s *Scheduler) fireTick(e *entry, tick time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.st.LastTick.Before(tick) {
		return
	}
	prev := e.st
	e.st.LastTick, e.st.LastFire, e.st.LastSession, e.st.LastError = tick.UTC(), s.opts.Clock.Now().UTC(), "", ""
	claimed, err := s.opts.Store.ClaimTick(e.st)
	if err != nil {
		e.st = prev
		s.opts.Logf("schedule %s: not firing the tick %s: recording it failed: %v", e.s.ID, tick.Format(time.RFC3339), err)
		return
	}
	if !claimed {
		// Another process sharing the store fired it (or a later one).
		e.st = prev
		s.opts.Logf("schedule %s: tick %s: fired by another server sharing the state root", e.s.ID, tick.Format(time.RFC3339))
		if err := e.load(s.opts.Store); err != nil {
			s.opts.Logf("schedule %s: %v", e.s.ID, err)
		}
		return
	}
	id, err := s.opts.Sink.StartTask(s.ctx, e.s.ID, e.s.Prompt)
	s.record(e, id, err)
	if err != nil {
		s.opts.Logf("schedule %s: tick %s: starting the session failed: %v", e.s.ID, tick.Format(time.RFC3339), err)
		return
	}
	s.opts.Logf("schedule %s: tick %s: started session %s", e.s.ID, tick.Format(time.RFC3339), id)
}

// record keeps the outcome of a firing in e's state file (e.mu held).
func (s *Scheduler) record(e *entry, sessionID string, err error) {
	e.st.LastSession = sessionID
	if err != nil {
		e.st.LastError = err.Error()
	}
	if werr := s.opts.Store.SaveSchedule(e.st); werr != nil {
		s.opts.Logf("schedule %s: %v", e.s.ID, werr)
	}
}

// Dispatch fires schedule id now, once, through the same path a tick
// takes (dev mode's only way to fire), whether or not Auto is on. It does
// not consume a tick. It returns the ids of the sessions started (one),
// ErrUnknownSchedule (wrapped, naming the known ids) for an unknown id, and
// StartTask's error.
func (s *Scheduler) Dispatch(ctx context.Context, id string) ([]string, error) {
	e, ok := s.entries[id]
	if !ok {
		return nil, fmt.Errorf("%w %q (the schedules are %v)", ErrUnknownSchedule, id, s.order)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.LastFire, e.st.LastSession, e.st.LastError = s.opts.Clock.Now().UTC(), "", ""
	sid, err := s.opts.Sink.StartTask(ctx, id, e.s.Prompt)
	s.record(e, sid, err)
	if err != nil {
		return nil, fmt.Errorf("schedule %s: starting the session: %w", id, err)
	}
	s.opts.Logf("schedule %s: dispatched: started session %s", id, sid)
	return []string{sid}, nil
}

// Schedules reports each schedule, in id order.
func (s *Scheduler) Schedules() []ScheduleInfo {
	now := s.opts.Clock.Now()
	out := make([]ScheduleInfo, 0, len(s.order))
	for _, id := range s.order {
		e := s.entries[id]
		e.mu.Lock()
		out = append(out, ScheduleInfo{ID: id, File: e.s.File, Cron: e.s.Cron, Next: e.s.next(now),
			LastTick: e.st.LastTick, LastFire: e.st.LastFire, LastSessionID: e.st.LastSession, LastError: e.st.LastError})
		e.mu.Unlock()
	}
	return out
}

// latestTick returns the latest tick of s in (since, now], or zero when
// there is none. It probes back from now in growing windows so a long
// downtime does not walk every tick since.
func latestTick(s Schedule, since, now time.Time) time.Time {
	t := s.next(since)
	if t.IsZero() || t.After(now) {
		return time.Time{}
	}
	for _, w := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 367 * 24 * time.Hour} {
		start := now.Add(-w)
		if !start.After(t) {
			break
		}
		if p := s.next(start); !p.IsZero() && !p.After(now) {
			t = p
			break
		}
	}
	for {
		n := s.next(t)
		if n.IsZero() || n.After(now) {
			return t
		}
		t = n
	}
}
