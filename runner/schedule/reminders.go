package schedule

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/julyfs/julyfs/runner/sessions"
)

// RemindersDir is where reminders are kept under the state root, one
// file per reminder: StateRoot/reminders/<id>.json.
const RemindersDir = "reminders"

// The reminders' defaults and fixed bounds.
const (
	// DefaultMaxRemindersPerSession is Options.MaxRemindersPerSession's
	// default.
	DefaultMaxRemindersPerSession = 100
	// DefaultMaxPromptBytes is Options.MaxPromptBytes's default.
	DefaultMaxPromptBytes = 16 << 10
	// DefaultMaxWakeFailures is Options.MaxWakeFailures's default.
	DefaultMaxWakeFailures = 8
	// MinInterval and MaxInterval bound delay and every.
	MinInterval = time.Second
	MaxInterval = 365 * 24 * time.Hour
	// MaxPurposeBytes bounds purpose.
	MaxPurposeBytes = 200
)

// The reasons a reminder is disarmed (Reminder.Disarmed).
const (
	// DisarmedHandlerLost: a run-form reminder found on disk by a new
	// process, whose Go handler lived in the old one.
	DisarmedHandlerLost = "handler_lost_on_restart"
	// DisarmedSessionGone: Wake said the session does not exist.
	DisarmedSessionGone = "session_gone"
	// DisarmedWakeFailed: MaxWakeFailures wakes (or run handler calls)
	// in a row failed.
	DisarmedWakeFailed = "wake_failed"
)

// The kinds of reminder (Reminder.Kind): when it fires.
const (
	KindDelay = "delay" // once, Delay after creation
	KindEvery = "every" // every Every, from creation
	KindCron  = "cron"  // on a cron expression, UTC
)

// The forms of reminder (Reminder.Form): what a firing does.
const (
	FormPrompt = "prompt" // Sink.Wake with the prompt (and until)
	FormRun    = "run"    // the Go handler ReminderSpec.Run
)

// ErrUnknownReminder is returned (wrapped) for an id no reminder has.
var ErrUnknownReminder = errors.New("unknown reminder")

// Action is what a run-form handler did with a tick.
type Action string

// The actions a run handler returns.
const (
	// ActionStop ends the reminder (it is removed).
	ActionStop Action = "stop"
	// ActionSkip lets the tick pass without delivering anything.
	ActionSkip Action = "skip"
	// ActionDelivered says the handler delivered (typically through
	// Tick.Followup).
	ActionDelivered Action = "delivered"
)

// Tick is what a run-form handler is given for one firing.
type Tick struct {
	ReminderID string
	SessionID  string
	// FireCount is the number of earlier firings (0 on the first).
	FireCount int
	// Due is when the firing was due.
	Due time.Time

	wake func(ctx context.Context, text string) error
}

// Followup wakes the reminder's session with message, through Sink.Wake
// (with the reminder's id and fire count in the data).
func (t Tick) Followup(ctx context.Context, message string) error { return t.wake(ctx, message) }

// ReminderSpec is what Create is given.
type ReminderSpec struct {
	// SessionID is the session the reminder wakes. Required.
	SessionID string `json:"sessionId"`
	// Delay ("2h", "90s", "3d"), Every ("30m") or Cron ("0 9 * * 1-5",
	// UTC): exactly one. Delay and Every are Go durations, or whole days
	// with a d suffix, between MinInterval and MaxInterval.
	Delay string `json:"delay,omitempty"`
	Every string `json:"every,omitempty"`
	Cron  string `json:"cron,omitempty"`
	// Prompt is the prompt form: what the session is told on each firing.
	Prompt string `json:"prompt,omitempty"`
	// Until is the standing cancellation condition, given to the model
	// with the prompt (prompt form only).
	Until string `json:"until,omitempty"`
	// Purpose is a short label ("ci_recheck") listed with the reminder.
	Purpose string `json:"purpose,omitempty"`
	// Run is the run form (Go API only; exclusive with Prompt): called on
	// each firing, it returns stop, skip or delivered. It lives in memory:
	// a new process finds the reminder disarmed (handler_lost_on_restart).
	Run func(ctx context.Context, t Tick) (Action, error) `json:"-"`
}

// Reminder is a reminder's record, as kept in its file.
type Reminder struct {
	ID        string `json:"id"`
	SessionID string `json:"sessionId"`
	// Kind is delay, every or cron; Form is prompt or run.
	Kind    string    `json:"kind"`
	Form    string    `json:"form"`
	Delay   string    `json:"delay,omitempty"`
	Every   string    `json:"every,omitempty"`
	Cron    string    `json:"cron,omitempty"`
	Prompt  string    `json:"prompt,omitempty"`
	Until   string    `json:"until,omitempty"`
	Purpose string    `json:"purpose,omitempty"`
	Created time.Time `json:"created"`
	// NextFire is when it fires next; zero once disarmed.
	NextFire time.Time `json:"nextFire,omitzero"`
	LastFire time.Time `json:"lastFire,omitzero"`
	// FireCount is how many times it has fired.
	FireCount int `json:"fireCount"`
	// Disarmed, when set, is why it will not fire again (a Disarmed*
	// reason); the record stays until cancelled.
	Disarmed string `json:"disarmed,omitempty"`
	// LastError is the last failed wake or run handler error; Failures
	// counts them in a row.
	LastError string `json:"lastError,omitempty"`
	Failures  int    `json:"failures,omitempty"`
}

// SpecError is a ReminderSpec that Create refuses; Field names the field
// at fault (sessionId, delay, every, cron, prompt, until, purpose, run).
type SpecError struct {
	Field string
	Msg   string
}

func (e *SpecError) Error() string { return "bad reminder: " + e.Msg }

func specErr(field, format string, args ...any) error {
	return &SpecError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// reminderID matches the ids Create makes.
var reminderID = regexp.MustCompile(`^rem_[0-9A-HJKMNP-TV-Z]{26}$`)

// ValidReminderID reports whether id has the shape of a reminder id.
func ValidReminderID(id string) bool { return reminderID.MatchString(id) }

// ParseInterval parses a delay or every: a Go duration ("90s", "2h30m")
// or whole days ("3d"), between MinInterval and MaxInterval.
func ParseInterval(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return 0, fmt.Errorf("%q is not a duration (want 90s, 30m, 2h or 3d)", s)
		}
		if days > 366 { // before multiplying: no overflow back into range
			return 0, fmt.Errorf("%q is over the one-year maximum (%v)", s, MaxInterval)
		}
		d = time.Duration(days) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q is not a duration (want 90s, 30m, 2h or 3d)", s)
		}
	}
	if d < MinInterval {
		return 0, fmt.Errorf("%q is under the %v minimum", s, MinInterval)
	}
	if d > MaxInterval {
		return 0, fmt.Errorf("%q is over the one-year maximum (%v)", s, MaxInterval)
	}
	return d, nil
}

// Reminders keeps an agent's reminders: durable (one file each under
// StateRoot/reminders/), fired on their timers while started with Auto,
// or by hand with Fire. Its methods are safe for concurrent use.
type Reminders struct {
	opts   Options
	shared bool // the Store is shared with other processes (no lock)
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	recs    map[string]*rem
	started bool
	stopped bool
	unlock  func()      // the Store's reminders lock while firing, or nil
	resync  func() bool // the armed resync timer of a shared Store
}

type rem struct {
	fire sync.Mutex // serializes the firings of one reminder

	// Guarded by Reminders.mu.
	r    Reminder
	run  func(ctx context.Context, t Tick) (Action, error)
	stop func() bool

	wmu       sync.Mutex // serializes writing the file against Cancel
	cancelled bool       // guarded by wmu
}

// OpenReminders reads the reminders under opts.StateRoot/reminders/. A
// run-form reminder found there is disarmed (handler_lost_on_restart, in
// its file): its handler lived in an earlier process. A file that does not
// parse is logged and left alone (not listed, never fired). Nothing fires
// before Start.
func OpenReminders(opts Options) (*Reminders, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Reminders{opts: opts, ctx: ctx, cancel: cancel, recs: map[string]*rem{}}
	// Run-form reminders are disarmed only when no other process holds
	// the reminders (and their handlers): probe the lock. A shared store
	// has none: other processes' run-form reminders are left alone.
	release, perr := opts.Store.Lock(RemindersDir)
	r.shared = perr == nil && release == nil
	err := r.load(perr == nil && !r.shared)
	if release != nil {
		release()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return r, nil
}

// load (r.mu held, or r not yet shared) reads the reminder files into
// r.recs, keeping the run handlers of the reminders made in this process:
// finished leftovers are removed, and with disarm (no other process holds
// the reminders) run-form reminders without a handler here are disarmed
// (handler_lost_on_restart).
func (r *Reminders) load(disarm bool) error {
	recs, problems, err := r.opts.Store.Reminders()
	if err != nil {
		return err
	}
	for _, p := range problems {
		r.opts.Logf("reminders: skipping %v", p)
	}
	next := map[string]*rem{}
	for _, rec := range recs {
		old := r.recs[rec.ID]
		switch {
		case rec.Disarmed == "" && rec.NextFire.IsZero():
			// Fired its last time, and the process stopped before the
			// file was removed: it is done.
			if err := r.opts.Store.RemoveReminder(rec.ID); err != nil {
				r.opts.Logf("reminders: %v", err)
			}
			continue
		case disarm && rec.Form == FormRun && rec.Disarmed == "" && (old == nil || old.run == nil):
			rec.Disarmed, rec.NextFire = DisarmedHandlerLost, time.Time{}
			if err := r.opts.Store.PutReminder(rec); err != nil {
				return fmt.Errorf("reminders: disarming %s: %w", rec.ID, err)
			}
			r.opts.Logf("reminder %s: disarmed (%s): its run handler was in an earlier process", rec.ID, DisarmedHandlerLost)
		}
		if old != nil {
			old.r = rec
			next[rec.ID] = old
			continue
		}
		next[rec.ID] = &rem{r: rec}
	}
	r.recs = next
	return nil
}

// Start starts the timers (with Auto; without it only Fire fires). It
// takes the state root's reminders lock (StateRoot/reminders/.lock, an
// flock) — held by another process, Start arms nothing and returns an
// error wrapping ErrFiredElsewhere. A reminder that fell due while no
// process ran fires once now — synchronously, so Start returns after those
// wakes — a recurring one then keeps its cadence from now. Start after
// Stop, or after a successful Start, does nothing.
func (r *Reminders) Start() error {
	r.mu.Lock()
	if r.started || r.stopped || !r.opts.Auto {
		r.started = true
		r.mu.Unlock()
		return nil
	}
	unlock, err := r.opts.Store.Lock(RemindersDir)
	if err != nil {
		r.mu.Unlock()
		return err
	}
	// What another process fired before it let go is in the store.
	if err := r.load(!r.shared); err != nil {
		if unlock != nil {
			unlock()
		}
		r.mu.Unlock()
		return err
	}
	r.started, r.unlock = true, unlock
	r.armResyncLocked()
	now := r.opts.Clock.Now()
	var armed []*rem
	for _, rm := range r.recs {
		if rm.r.Disarmed == "" && !rm.r.NextFire.IsZero() {
			armed = append(armed, rm)
		}
	}
	// In due order, so that timers due at one instant fire in a stable
	// order.
	slices.SortFunc(armed, func(a, b *rem) int {
		if c := a.r.NextFire.Compare(b.r.NextFire); c != 0 {
			return c
		}
		return strings.Compare(a.r.ID, b.r.ID)
	})
	var due []*rem
	for _, rm := range armed {
		if !rm.r.NextFire.After(now) {
			due = append(due, rm)
			continue
		}
		r.armLocked(rm)
	}
	r.mu.Unlock()
	for _, rm := range due {
		r.opts.Logf("reminder %s: firing, due at %s while not running", rm.r.ID, rm.r.NextFire.Format(time.RFC3339))
		r.fire(r.ctx, rm, false)
	}
	return nil
}

// Stop disarms the timers, waits for the firings under way and releases
// the reminders lock. It is safe to call more than once.
func (r *Reminders) Stop() {
	r.mu.Lock()
	r.stopped = true
	for _, rm := range r.recs {
		if rm.stop != nil {
			rm.stop()
			rm.stop = nil
		}
	}
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	if r.resync != nil {
		r.resync()
		r.resync = nil
	}
	if r.unlock != nil {
		r.unlock()
		r.unlock = nil
	}
	r.mu.Unlock()
}

// armLocked (r.mu held) sets rm's timer for its NextFire.
func (r *Reminders) armLocked(rm *rem) {
	if rm.stop != nil {
		rm.stop()
		rm.stop = nil
	}
	if !r.opts.Auto || !r.started || r.stopped || rm.r.Disarmed != "" || rm.r.NextFire.IsZero() {
		return
	}
	due := rm.r.NextFire
	rm.stop = r.opts.Clock.AfterFunc(due.Sub(r.opts.Clock.Now()), func() { r.onTimer(rm, due) })
}

func (r *Reminders) onTimer(rm *rem, due time.Time) {
	r.mu.Lock()
	if r.stopped || r.recs[rm.r.ID] != rm {
		r.mu.Unlock()
		return
	}
	if r.opts.Clock.Now().Before(due) { // the wall clock was set back
		r.armLocked(rm)
		r.mu.Unlock()
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	defer r.wg.Done()
	if err := r.fire(r.ctx, rm, false); err != nil {
		// The store did not answer: a shared store's next resync arms it
		// again, and it fires then.
		r.opts.Logf("reminder %s: not fired: %v", rm.r.ID, err)
	}
}

// Create validates spec, keeps the reminder (its file is written before
// Create returns) and arms it. A refused spec is a *SpecError: both or
// none of delay, every and cron; a delay or every under MinInterval or
// over MaxInterval or not a duration; a bad cron; no prompt (prompt
// form) or both prompt and run; until without prompt; a prompt or until
// over Options.MaxPromptBytes, a purpose over MaxPurposeBytes; a session
// id that is not one (ses_ and a ULID); and a session that already has
// Options.MaxRemindersPerSession armed reminders.
func (r *Reminders) Create(ctx context.Context, spec ReminderSpec) (Reminder, error) {
	now := r.opts.Clock.Now().UTC()
	rec, err := r.validate(spec, now)
	if err != nil {
		return Reminder{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return Reminder{}, errors.New("reminders: stopped")
	}
	n := 0
	for _, rm := range r.recs {
		if rm.r.SessionID == spec.SessionID && rm.r.Disarmed == "" {
			n++
		}
	}
	if n >= r.opts.MaxRemindersPerSession {
		return Reminder{}, specErr("sessionId", "session %s already has %d reminders, the most one session may have (Options.MaxRemindersPerSession): cancel one first", spec.SessionID, n)
	}
	rec.ID = "rem_" + ulid.Make().String()
	if err := r.opts.Store.PutReminder(rec); err != nil {
		return Reminder{}, fmt.Errorf("reminders: keeping the reminder: %w", err)
	}
	rm := &rem{r: rec, run: spec.Run}
	r.recs[rec.ID] = rm
	r.armLocked(rm)
	r.opts.Logf("reminder %s: created for session %s, first fire %s", rec.ID, rec.SessionID, rec.NextFire.Format(time.RFC3339))
	return rec, nil
}

func (r *Reminders) validate(spec ReminderSpec, now time.Time) (Reminder, error) {
	rec := Reminder{SessionID: spec.SessionID, Delay: spec.Delay, Every: spec.Every, Cron: spec.Cron,
		Prompt: spec.Prompt, Until: spec.Until, Purpose: spec.Purpose, Created: now, Form: FormPrompt}
	switch {
	case spec.SessionID == "":
		return rec, specErr("sessionId", "sessionId is required: the session the reminder wakes")
	case !sessions.ValidID(spec.SessionID):
		return rec, specErr("sessionId", "%q is not a session id (ses_ and 26 letters and digits)", spec.SessionID)
	}
	var given []string
	for _, f := range []struct{ name, v string }{{"delay", spec.Delay}, {"every", spec.Every}, {"cron", spec.Cron}} {
		if f.v != "" {
			given = append(given, f.name)
		}
	}
	switch len(given) {
	case 0:
		return rec, specErr("delay", "give one of delay (once: 2h), every (recurring: 30m) or cron (recurring, UTC: 0 9 * * 1-5)")
	case 1:
	default:
		return rec, specErr(given[1], "%s are exclusive: give exactly one of delay, every or cron", strings.Join(given, " and "))
	}
	switch {
	case spec.Delay != "":
		d, err := ParseInterval(spec.Delay)
		if err != nil {
			return rec, specErr("delay", "delay %v", err)
		}
		rec.Kind, rec.NextFire = KindDelay, now.Add(d)
	case spec.Every != "":
		d, err := ParseInterval(spec.Every)
		if err != nil {
			return rec, specErr("every", "every %v", err)
		}
		rec.Kind, rec.NextFire = KindEvery, now.Add(d)
	default:
		sp, err := ParseCron(spec.Cron)
		if err != nil {
			return rec, specErr("cron", "bad cron %q: %v", spec.Cron, err)
		}
		rec.Kind, rec.NextFire = KindCron, sp.Next(now)
		if rec.NextFire.IsZero() {
			return rec, specErr("cron", "cron %q never fires", spec.Cron)
		}
	}
	switch {
	case spec.Run != nil && spec.Prompt != "":
		return rec, specErr("prompt", "prompt and run are exclusive: the prompt form wakes the session with the prompt, the run form calls the handler")
	case spec.Until != "" && spec.Prompt == "":
		return rec, specErr("until", "until needs prompt: the condition is given to the model with the prompt")
	case spec.Run == nil && strings.TrimSpace(spec.Prompt) == "":
		return rec, specErr("prompt", "prompt is required: what the session is told when the reminder fires")
	case len(spec.Prompt) > r.opts.MaxPromptBytes:
		return rec, specErr("prompt", "prompt is %d bytes, over the %d-byte bound (Options.MaxPromptBytes): keep it short, the agent re-reads the live state when it wakes", len(spec.Prompt), r.opts.MaxPromptBytes)
	case len(spec.Until) > r.opts.MaxPromptBytes:
		return rec, specErr("until", "until is %d bytes, over the %d-byte bound (Options.MaxPromptBytes)", len(spec.Until), r.opts.MaxPromptBytes)
	case len(spec.Purpose) > MaxPurposeBytes || strings.ContainsAny(spec.Purpose, "\r\n"):
		return rec, specErr("purpose", "purpose is a short one-line label of at most %d bytes (MaxPurposeBytes)", MaxPurposeBytes)
	}
	if spec.Run != nil {
		rec.Form = FormRun
	}
	return rec, nil
}

// List returns the reminders of session sessionID ("" for all), by id
// (creation order).
func (r *Reminders) List(sessionID string) []Reminder {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Reminder
	for _, rm := range r.recs {
		if sessionID == "" || rm.r.SessionID == sessionID {
			out = append(out, rm.r)
		}
	}
	slices.SortFunc(out, func(a, b Reminder) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Get returns reminder id, or ErrUnknownReminder (wrapped).
func (r *Reminders) Get(id string) (Reminder, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rm, ok := r.recs[id]
	if !ok {
		return Reminder{}, unknownReminder(id)
	}
	return rm.r, nil
}

func unknownReminder(id string) error {
	if !ValidReminderID(id) {
		return fmt.Errorf("%w %q: not a reminder id (rem_ and 26 letters and digits)", ErrUnknownReminder, id)
	}
	return fmt.Errorf("%w %s (cancelled, finished, or never made)", ErrUnknownReminder, id)
}

// Cancel removes reminder id (its timer and its file), armed or
// disarmed; a firing under way completes but does not re-arm. An unknown
// id is ErrUnknownReminder (wrapped).
func (r *Reminders) Cancel(id string) error {
	r.mu.Lock()
	rm, ok := r.recs[id]
	if !ok {
		r.mu.Unlock()
		return unknownReminder(id)
	}
	delete(r.recs, id)
	if rm.stop != nil {
		rm.stop()
		rm.stop = nil
	}
	r.mu.Unlock()
	rm.wmu.Lock()
	defer rm.wmu.Unlock()
	rm.cancelled = true
	if err := r.opts.Store.RemoveReminder(id); err != nil {
		return fmt.Errorf("reminders: cancelling %s: %w", id, err)
	}
	r.opts.Logf("reminder %s: cancelled", id)
	return nil
}

// Fire fires reminder id now, once, through the path its timer takes
// (dev mode's way to fire), whether or not it is due; a recurring one
// keeps its next fire time. It returns ErrUnknownReminder (wrapped), an
// error for a disarmed reminder, and the wake's (or run handler's) error.
func (r *Reminders) Fire(ctx context.Context, id string) error {
	r.mu.Lock()
	rm, ok := r.recs[id]
	r.mu.Unlock()
	if !ok {
		return unknownReminder(id)
	}
	return r.fire(ctx, rm, true)
}

// fire fires rm once. The firing is persisted (fire count, next fire)
// before the session is woken, so a crash never fires it twice; a wake
// that fails un-counts the firing and retries with a backoff (one minute,
// doubling, at most an hour), until MaxWakeFailures in a row or a session
// that is gone disarm it.
func (r *Reminders) fire(ctx context.Context, rm *rem, manual bool) error {
	rm.fire.Lock()
	defer rm.fire.Unlock()
	r.mu.Lock()
	cur := rm.r
	if r.recs[cur.ID] != rm {
		r.mu.Unlock()
		return unknownReminder(cur.ID)
	}
	run := rm.run
	r.mu.Unlock()
	switch {
	case cur.Disarmed != "":
		return fmt.Errorf("reminder %s is disarmed (%s): cancel it, and create it again to re-arm", cur.ID, cur.Disarmed)
	case cur.NextFire.IsZero():
		return fmt.Errorf("reminder %s has nothing left to fire", cur.ID)
	case cur.Form == FormRun && run == nil:
		return fmt.Errorf("reminder %s is a run-form reminder whose handler is in another process", cur.ID)
	}
	stored, found, err := r.opts.Store.Reminder(cur.ID)
	if err != nil {
		return fmt.Errorf("reminder %s: %w", cur.ID, err)
	}
	if !found {
		// Cancelled in the store (july reminders --cancel, or another
		// server) while this process held it.
		r.forget(rm)
		return unknownReminder(cur.ID)
	}
	if !sameFiring(stored, cur) {
		// Another process sharing the store fired or changed it.
		r.adopt(rm, stored)
		if manual {
			return fmt.Errorf("reminder %s was fired by another server meanwhile: try again", cur.ID)
		}
		return nil
	}
	now := r.opts.Clock.Now().UTC()
	due := cur.NextFire
	if manual {
		due = now
	}
	count := cur.FireCount
	upd := cur
	upd.FireCount++
	upd.LastFire = now
	upd.NextFire = r.nextFire(cur, now, manual)
	switch ok, err := r.claim(rm, cur, upd); {
	case err != nil:
		return err
	case !ok:
		if manual {
			return fmt.Errorf("reminder %s was fired by another server meanwhile: try again", cur.ID)
		}
		return nil
	}
	claimed := upd

	data := map[string]any{"reminderId": cur.ID, "fireCount": count}
	action, err := ActionDelivered, error(nil)
	if run != nil {
		t := Tick{ReminderID: cur.ID, SessionID: cur.SessionID, FireCount: count, Due: due,
			wake: func(ctx context.Context, text string) error { return r.opts.Sink.Wake(ctx, cur.SessionID, text, data) }}
		action, err = safeRun(ctx, run, t)
	} else {
		err = r.opts.Sink.Wake(ctx, cur.SessionID, wakeText(cur, count), data)
	}

	if err == nil && (action == ActionStop || upd.NextFire.IsZero()) {
		r.forget(rm)
		rm.wmu.Lock()
		if !rm.cancelled {
			if rerr := r.opts.Store.RemoveReminder(cur.ID); rerr != nil {
				r.opts.Logf("reminder %s: %v", cur.ID, rerr)
			}
		}
		rm.wmu.Unlock()
		r.opts.Logf("reminder %s: fired (%s), done", cur.ID, action)
		return nil
	}
	if err == nil {
		upd.Failures, upd.LastError = 0, ""
		r.opts.Logf("reminder %s: fired (%s), next %s", cur.ID, action, upd.NextFire.Format(time.RFC3339))
	} else {
		upd.FireCount, upd.LastError = count, err.Error()
		upd.Failures++
		switch {
		case errors.Is(err, ErrSessionGone):
			upd.Disarmed, upd.NextFire = DisarmedSessionGone, time.Time{}
		case upd.Failures >= r.opts.MaxWakeFailures:
			upd.Disarmed, upd.NextFire = DisarmedWakeFailed, time.Time{}
		default:
			retry := now.Add(min(time.Minute<<(upd.Failures-1), time.Hour))
			if upd.NextFire.IsZero() || retry.Before(upd.NextFire) {
				upd.NextFire = retry
			}
		}
		if upd.Disarmed != "" {
			r.opts.Logf("reminder %s: disarmed (%s): %v", cur.ID, upd.Disarmed, err)
		} else {
			r.opts.Logf("reminder %s: firing failed (%d in a row), retrying at %s: %v", cur.ID, upd.Failures, upd.NextFire.Format(time.RFC3339), err)
		}
	}
	r.write(rm, claimed, upd)
	r.mu.Lock()
	if r.recs[cur.ID] == rm {
		r.armLocked(rm)
	}
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("reminder %s: %w", cur.ID, err)
	}
	return nil
}

// safeRun calls a run handler, turning a panic into an error and an
// unknown action into an error.
func safeRun(ctx context.Context, run func(context.Context, Tick) (Action, error), t Tick) (a Action, err error) {
	defer func() {
		if p := recover(); p != nil {
			a, err = "", fmt.Errorf("run handler panicked: %v", p)
		}
	}()
	a, err = run(ctx, t)
	if err == nil && a != ActionStop && a != ActionSkip && a != ActionDelivered {
		return "", fmt.Errorf("run handler returned action %q: want stop, skip or delivered", a)
	}
	return a, err
}

// claim keeps upd as rm's record, in memory and in the store, when the
// store still has cur: false when rm was cancelled meanwhile, or another
// process fired or changed it (rm then takes what the store has).
func (r *Reminders) claim(rm *rem, cur, upd Reminder) (bool, error) {
	rm.wmu.Lock()
	defer rm.wmu.Unlock()
	if rm.cancelled {
		return false, unknownReminder(cur.ID)
	}
	ok, err := r.opts.Store.ClaimReminder(cur, upd)
	if err != nil {
		return false, fmt.Errorf("reminder %s: not firing: keeping the firing failed: %w", cur.ID, err)
	}
	if !ok {
		stored, found, err := r.opts.Store.Reminder(cur.ID)
		switch {
		case err != nil:
			r.opts.Logf("reminder %s: %v", cur.ID, err)
		case !found:
			r.forget(rm)
		default:
			r.adopt(rm, stored)
		}
		return false, nil
	}
	r.mu.Lock()
	rm.r = upd
	r.mu.Unlock()
	return true, nil
}

// write keeps the outcome upd of rm's firing, after claim kept the firing
// as prev.
func (r *Reminders) write(rm *rem, prev, upd Reminder) {
	if ok, err := r.claim(rm, prev, upd); err != nil && !errors.Is(err, ErrUnknownReminder) {
		r.opts.Logf("reminder %s: %v", upd.ID, err)
	} else if err == nil && !ok {
		r.opts.Logf("reminder %s: another server changed it while it fired: keeping its record", upd.ID)
	}
}

// adopt makes stored (what the store has, changed by another process)
// rm's record, and arms it.
func (r *Reminders) adopt(rm *rem, stored Reminder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recs[rm.r.ID] != rm {
		return
	}
	rm.r = stored
	r.armLocked(rm)
}

// sameFiring reports whether a and b are at the same firing: what a
// claim compares.
func sameFiring(a, b Reminder) bool {
	return a.FireCount == b.FireCount && a.NextFire.Equal(b.NextFire) && a.Disarmed == b.Disarmed
}

// DefaultResync is how often Reminders on a shared Store read the store
// again, to arm the reminders other servers made and drop the ones they
// cancelled.
const DefaultResync = 30 * time.Second

// armResyncLocked (r.mu held) arms the next resync, on a shared store.
func (r *Reminders) armResyncLocked() {
	if !r.shared || !r.opts.Auto || r.stopped {
		return
	}
	r.resync = r.opts.Clock.AfterFunc(DefaultResync, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.stopped {
			return
		}
		r.resyncLocked()
		r.armResyncLocked()
	})
}

// resyncLocked (r.mu held) reads the store again and arms what it has.
func (r *Reminders) resyncLocked() {
	old := r.recs
	if err := r.load(false); err != nil {
		r.opts.Logf("reminders: reading the store again: %v", err)
		return
	}
	for id, rm := range old {
		if r.recs[id] != rm && rm.stop != nil {
			rm.stop()
			rm.stop = nil
		}
	}
	for _, rm := range r.recs {
		if rm.r.Disarmed == "" && !rm.r.NextFire.IsZero() {
			r.armLocked(rm)
		}
	}
}

func (r *Reminders) forget(rm *rem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recs[rm.r.ID] == rm {
		delete(r.recs, rm.r.ID)
	}
	if rm.stop != nil {
		rm.stop()
		rm.stop = nil
	}
}

// nextFire is rec's fire time after a firing at now: zero for a delay;
// for every, the first beat of its cadence after now; for cron, the next
// tick. A manual firing keeps a recurring reminder's next fire.
func (r *Reminders) nextFire(rec Reminder, now time.Time, manual bool) time.Time {
	if rec.Kind == KindDelay {
		return time.Time{}
	}
	if manual && rec.NextFire.After(now) {
		return rec.NextFire
	}
	switch rec.Kind {
	case KindEvery:
		d, err := ParseInterval(rec.Every)
		if err != nil {
			return time.Time{}
		}
		next := rec.NextFire
		if !next.After(now) {
			next = next.Add((now.Sub(next)/d + 1) * d)
		}
		return next
	case KindCron:
		sp, err := ParseCron(rec.Cron)
		if err != nil {
			return time.Time{}
		}
		return sp.Next(now)
	}
	return time.Time{}
}

// wakeText is what the prompt form tells the session: the prompt, and
// the until condition with how to honor it.
func wakeText(rec Reminder, count int) string {
	var b strings.Builder
	when := rec.Delay
	switch rec.Kind {
	case KindEvery:
		when = "every " + rec.Every
	case KindCron:
		when = "cron " + rec.Cron
	case KindDelay:
		when = "after " + rec.Delay
	}
	fmt.Fprintf(&b, "[Reminder %s fired (%s; earlier firings: %d)]\n\n%s", rec.ID, when, count, rec.Prompt)
	if rec.Until != "" {
		fmt.Fprintf(&b, "\n\nUntil: %s\nOnce that holds, cancel this reminder (CancelReminder with id %q) instead of acting on it.", rec.Until, rec.ID)
	}
	return b.String()
}
