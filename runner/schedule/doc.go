// Package schedule is the agent's clock: cron schedules (schedules/*.md in
// the agent directory, each firing a new task session) and durable
// reminders (runtime wakes bound to one session). The server (july serve)
// implements [Sink] over its session host and owns one [Scheduler] and
// one [Reminders] per agent.
//
// # API
//
//	Clock, RealClock(), NewFakeClock(start) *FakeClock  // .Advance(d), .Set(t), .Pending()
//	Sink{StartTask(ctx, scheduleID, prompt) (sessionID, error); Wake(ctx, sessionID, text, data) error}
//
//	Load(agentDir) ([]Schedule, error)            // errors: *FileError, "schedules/x.md:2: bad cron …"
//	Schedule.Next(after, n) []time.Time
//	NewScheduler(scheds, Options) (*Scheduler, error)
//	Scheduler.Start() error, Stop(), Dispatch(ctx, id) ([]string, error), Schedules() []ScheduleInfo
//
//	OpenReminders(Options) (*Reminders, error)
//	Reminders.Start() error, Stop()                          // Start: ErrFiredElsewhere
//	Reminders.Create(ctx, ReminderSpec) (Reminder, error)   // refusals: *SpecError
//	Reminders.List(sessionID), Get(id), Cancel(id), Fire(ctx, id)
//	ReadReminders(stateRoot), CancelStored(stateRoot, id)   // no process needed
//	Tools(*Reminders, sessionID) []*tools.Tool              // the agent's reminders tool
//
// # Schedules and exactly once
//
// A schedule file is YAML frontmatter with one field, cron: (5 fields,
// evaluated in UTC, minute granularity, parsed by robfig/cron), then the
// prompt. Each tick the scheduler first records the tick in
// StateRoot/schedules/<id>.json (written atomically and fsynced) and only
// then starts the session, so a tick fires at most once whatever crashes:
// a restart within the same minute finds the tick recorded and does not
// fire it again. On Start, the latest tick missed while no scheduler ran
// (since the last recorded tick, or since the schedule was first armed)
// fires once — not once per missed tick. A session that fails to start is
// logged and recorded (lastError) and its tick stays consumed. With
// Options.Auto false (dev mode, --no-schedules) nothing fires by itself
// and nothing is armed; Dispatch fires a schedule by hand through the same
// path, without consuming a tick. One process fires a state root's
// schedules, and one its reminders: Start takes an flock
// (StateRoot/schedules/.lock, StateRoot/reminders/.lock) and fails with
// ErrFiredElsewhere when another process holds it; it then re-reads the
// state from disk, so what an earlier holder fired is not fired again.
//
// # Reminders
//
// A reminder fires once after a delay, every interval, or on a cron
// expression, and either wakes its session with its prompt (the prompt
// form: Sink.Wake with data {reminderId, fireCount}; until, when given, is
// appended to the text with how to cancel) or calls a Go handler (the run
// form: stop, skip or delivered). fireCount counts the earlier firings (0
// on the first). Each reminder is one file, StateRoot/reminders/<id>.json,
// written atomically before Create returns and again before each firing
// acts (the firing is counted and the next fire time moved first), so a
// crash never fires one twice. A reminder due while no process ran fires
// once on Start (a recurring one then keeps its cadence). A run-form
// reminder found on disk by OpenReminders (or by Start) with no other
// process holding the reminders is disarmed with handler_lost_on_restart
// in its file; disarmed reminders stay listed until
// cancelled. A finished one-shot, and a run handler's stop, remove the
// file.
//
// A failed wake un-counts the firing, records the error (lastError,
// failures) and retries after one minute, doubling up to an hour, keeping a
// recurring reminder's own next fire when that comes sooner; after
// Options.MaxWakeFailures failures in a row it is disarmed (wake_failed).
// A wake whose error wraps ErrSessionGone disarms it at once
// (session_gone). A run handler's error or panic counts as a failed wake.
//
// # Bounds
//
// Options.MaxRemindersPerSession armed reminders per session (default
// 100), Options.MaxPromptBytes for prompt and until (default 16 KiB),
// MaxPurposeBytes for purpose, delay and every between 1 s and a year;
// MaxSchedules schedule files of at most MaxScheduleFileBytes. Hitting one
// is an error naming it.
//
// # Concurrency
//
// Scheduler and Reminders are safe for concurrent use. The firings of one
// schedule or one reminder are serialized; different ones fire
// concurrently on the real clock. On a [FakeClock], timers fire
// synchronously inside Advance, in due order, so tests never sleep.
// Start fires what is overdue synchronously; Stop waits for the firings
// under way.
package schedule
