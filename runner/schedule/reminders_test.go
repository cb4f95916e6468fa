package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

func openReminders(t *testing.T, state string, clock *FakeClock, sink *recordingSink, auto bool, tweak ...func(*Options)) *Reminders {
	t.Helper()
	opts := Options{StateRoot: state, Clock: clock, Sink: sink, Auto: auto, Logf: t.Logf}
	for _, f := range tweak {
		f(&opts)
	}
	r, err := OpenReminders(opts)
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	require.NoError(t, r.Start())
	return r
}

func readRecord(t *testing.T, state, id string) Reminder {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(state, RemindersDir, id+".json"))
	require.NoError(t, err)
	var rec Reminder
	require.NoError(t, json.Unmarshal(data, &rec))
	return rec
}

func reminderFileExists(state, id string) bool {
	_, err := os.Stat(filepath.Join(state, RemindersDir, id+".json"))
	return err == nil
}

func TestReminderOneShot(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-01-31T23:00:00Z"))
	sink := &recordingSink{clock: clock}
	r := openReminders(t, state, clock, sink, true)
	rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "2h", Prompt: "Re-check CI.", Purpose: "ci_recheck"})
	require.NoError(t, err)
	assert.True(t, ValidReminderID(rec.ID), rec.ID)
	assert.Equal(t, KindDelay, rec.Kind)
	assert.Equal(t, FormPrompt, rec.Form)
	assert.Equal(t, utc("2026-02-01T01:00:00Z"), rec.NextFire)
	assert.Equal(t, rec, readRecord(t, state, rec.ID), "the file is written before Create returns")

	clock.Advance(2*time.Hour - time.Second)
	assert.Empty(t, sink.Calls())
	clock.Advance(time.Second)
	calls := sink.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, ses, calls[0].ID)
	assert.Equal(t, map[string]any{"reminderId": rec.ID, "fireCount": 0}, calls[0].Data)
	assert.Contains(t, calls[0].Text, "Re-check CI.")
	assert.Equal(t, utc("2026-02-01T01:00:00Z"), calls[0].At)

	assert.False(t, reminderFileExists(state, rec.ID), "a fired one-shot is done")
	assert.Empty(t, r.List(""))
	_, err = r.Get(rec.ID)
	assert.ErrorIs(t, err, ErrUnknownReminder)
	clock.Advance(48 * time.Hour)
	assert.Len(t, sink.Calls(), 1)
}

func TestReminderEvery(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-02-28T23:10:00Z"))
	sink := &recordingSink{clock: clock}
	r := openReminders(t, state, clock, sink, true)
	rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "30m", Prompt: "Look again.", Until: "the deploy is done"})
	require.NoError(t, err)
	clock.Advance(95 * time.Minute)
	assert.Equal(t, utcs("2026-02-28T23:40:00Z", "2026-03-01T00:10:00Z", "2026-03-01T00:40:00Z"), sink.times())
	for i, c := range sink.Calls() {
		assert.Equal(t, map[string]any{"reminderId": rec.ID, "fireCount": i}, c.Data)
		assert.Contains(t, c.Text, "Look again.")
		assert.Contains(t, c.Text, "Until: the deploy is done")
		assert.Contains(t, c.Text, `CancelReminder with id "`+rec.ID+`"`)
	}
	got, err := r.Get(rec.ID)
	require.NoError(t, err)
	assert.Equal(t, 3, got.FireCount)
	assert.Equal(t, utc("2026-03-01T01:10:00Z"), got.NextFire)
	assert.Equal(t, got, readRecord(t, state, rec.ID))
}

func TestReminderCron(t *testing.T) {
	clock := NewFakeClock(utc("2026-12-31T22:59:00Z"))
	sink := &recordingSink{clock: clock}
	r := openReminders(t, t.TempDir(), clock, sink, true)
	_, err := r.Create(context.Background(), ReminderSpec{SessionID: sessions.NewID(), Cron: "0 */2 * * *", Prompt: "Two-hourly."})
	require.NoError(t, err)
	clock.Advance(5 * time.Hour)
	assert.Equal(t, utcs("2027-01-01T00:00:00Z", "2027-01-01T02:00:00Z"), sink.times())
	assert.Equal(t, utcs("2027-01-01T04:00:00Z"), clock.Pending())
}

func TestReminderDurableAcrossReopen(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	first := openReminders(t, state, clock, sink, true)
	every, err := first.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "10m", Prompt: "Every ten."})
	require.NoError(t, err)
	once, err := first.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "1h", Prompt: "Once."})
	require.NoError(t, err)
	clock.Advance(5 * time.Minute)
	first.Stop()

	second := openReminders(t, state, clock, sink, true)
	assert.Equal(t, []Reminder{every, once}, second.List(ses))
	assert.Empty(t, second.List(sessions.NewID()))
	clock.Advance(55 * time.Minute) // 11:00
	var texts []string
	for _, c := range sink.Calls() {
		texts = append(texts, c.At.Format("15:04")+" "+c.Text[strings.LastIndex(c.Text, "\n")+1:])
	}
	assert.Equal(t, []string{"10:10 Every ten.", "10:20 Every ten.", "10:30 Every ten.", "10:40 Every ten.", "10:50 Every ten.", "11:00 Once.", "11:00 Every ten."}, texts)
}

func TestReminderDueWhileDownFiresOnce(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	first := openReminders(t, state, clock, sink, true)
	every, err := first.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "10m", Prompt: "Every ten."})
	require.NoError(t, err)
	once, err := first.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "20m", Prompt: "Once."})
	require.NoError(t, err)
	clock.Advance(5 * time.Minute)
	first.Stop()

	clock.Set(utc("2026-05-01T13:03:00Z")) // 17 ticks and the one-shot missed
	second := openReminders(t, state, clock, sink, true)
	calls := sink.Calls()
	require.Len(t, calls, 2, "each due reminder fires once on start")
	assert.Equal(t, every.ID, calls[0].Data["reminderId"])
	assert.Equal(t, once.ID, calls[1].Data["reminderId"])
	got, err := second.Get(every.ID)
	require.NoError(t, err)
	assert.Equal(t, utc("2026-05-01T13:10:00Z"), got.NextFire, "the cadence continues from creation")
	assert.Equal(t, 1, got.FireCount)
	second.Stop()

	// A third process in the same minute fires nothing again.
	openReminders(t, state, clock, sink, true)
	assert.Len(t, sink.Calls(), 2)
}

func TestReminderRunForm(t *testing.T) {
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	state, ses := t.TempDir(), sessions.NewID()
	r := openReminders(t, state, clock, sink, true)
	var ticks []Tick
	rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "30m", Purpose: "ci_recheck",
		Run: func(ctx context.Context, tk Tick) (Action, error) {
			ticks = append(ticks, tk)
			if tk.FireCount >= 3 {
				return ActionStop, nil
			}
			if tk.FireCount == 1 {
				return ActionSkip, nil
			}
			return ActionDelivered, tk.Followup(ctx, "Re-check CI and report only if the status changed.")
		}})
	require.NoError(t, err)
	assert.Equal(t, FormRun, rec.Form)
	clock.Advance(3 * time.Hour)
	require.Len(t, ticks, 4)
	for i, tk := range ticks {
		assert.Equal(t, i, tk.FireCount)
		assert.Equal(t, rec.ID, tk.ReminderID)
		assert.Equal(t, ses, tk.SessionID)
	}
	assert.Equal(t, utc("2026-05-01T10:30:00Z"), ticks[0].Due)
	calls := sink.Calls()
	require.Len(t, calls, 2, "fire 0 and 2 delivered, 1 skipped, 3 stopped")
	assert.Equal(t, map[string]any{"reminderId": rec.ID, "fireCount": 2}, calls[1].Data)
	assert.Equal(t, "Re-check CI and report only if the status changed.", calls[1].Text)
	assert.False(t, reminderFileExists(state, rec.ID), "stop removes the reminder")
	assert.Empty(t, r.List(""))
}

func TestReminderRunFormDisarmedOnRestart(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	first := openReminders(t, state, clock, sink, true)
	rec, err := first.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "1m",
		Run: func(ctx context.Context, tk Tick) (Action, error) { return ActionDelivered, tk.Followup(ctx, "x") }})
	require.NoError(t, err)
	first.Stop()

	second := openReminders(t, state, clock, sink, true)
	got, err := second.Get(rec.ID)
	require.NoError(t, err)
	assert.Equal(t, DisarmedHandlerLost, got.Disarmed)
	assert.True(t, got.NextFire.IsZero())
	onDisk := readRecord(t, state, rec.ID)
	assert.Equal(t, "handler_lost_on_restart", onDisk.Disarmed, "recorded in its file")
	clock.Advance(time.Hour)
	assert.Empty(t, sink.Calls())
	err = second.Fire(context.Background(), rec.ID)
	assert.ErrorContains(t, err, "is disarmed (handler_lost_on_restart)")

	require.NoError(t, second.Cancel(rec.ID), "a disarmed reminder is cancelled like any other")
	assert.False(t, reminderFileExists(state, rec.ID))
}

func TestReminderCancel(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	r := openReminders(t, state, clock, sink, true)
	rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "1m", Prompt: "Ping."})
	require.NoError(t, err)
	clock.Advance(time.Minute)
	require.NoError(t, r.Cancel(rec.ID))
	clock.Advance(time.Hour)
	assert.Len(t, sink.Calls(), 1)
	assert.False(t, reminderFileExists(state, rec.ID))
	assert.ErrorIs(t, r.Cancel(rec.ID), ErrUnknownReminder)
	err = r.Cancel("../../etc/passwd")
	assert.ErrorIs(t, err, ErrUnknownReminder)
	assert.ErrorContains(t, err, "not a reminder id")
	assert.ErrorIs(t, r.Fire(context.Background(), rec.ID), ErrUnknownReminder)
}

func TestReminderCancelledOnDiskWhileHeld(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	r := openReminders(t, state, clock, sink, true)
	rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "1m", Prompt: "Ping."})
	require.NoError(t, err)
	stored, problems, err := ReadReminders(DiskStore(state))
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, []Reminder{rec}, stored)

	require.NoError(t, CancelStored(DiskStore(state), rec.ID))
	assert.ErrorIs(t, CancelStored(DiskStore(state), rec.ID), ErrUnknownReminder)
	clock.Advance(time.Hour)
	assert.Empty(t, sink.Calls(), "the holder checks the file before firing")
	assert.Empty(t, r.List(""))
	assert.False(t, reminderFileExists(state, rec.ID), "and does not write it back")
}

func TestReminderDevModeFire(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	r := openReminders(t, state, clock, sink, false)
	every, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "1h", Prompt: "Hourly."})
	require.NoError(t, err)
	once, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "1h", Prompt: "Once."})
	require.NoError(t, err)
	clock.Advance(3 * time.Hour)
	assert.Empty(t, sink.Calls(), "Auto off: nothing fires by itself")
	assert.Empty(t, clock.Pending())

	require.NoError(t, r.Fire(context.Background(), every.ID))
	require.NoError(t, r.Fire(context.Background(), every.ID))
	require.NoError(t, r.Fire(context.Background(), once.ID))
	calls := sink.Calls()
	require.Len(t, calls, 3)
	assert.Equal(t, 1, calls[1].Data["fireCount"])
	got, err := r.Get(every.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, got.FireCount)
	_, err = r.Get(once.ID)
	assert.ErrorIs(t, err, ErrUnknownReminder, "a fired one-shot is done")
}

func TestReminderWakeFailures(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock, err: errors.New("session in use")}
	r := openReminders(t, state, clock, sink, true, func(o *Options) { o.MaxWakeFailures = 3 })
	rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "10s", Prompt: "Hi."})
	require.NoError(t, err)
	clock.Advance(10 * time.Second)
	got, err := r.Get(rec.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, got.Failures)
	assert.Equal(t, "session in use", got.LastError)
	assert.Equal(t, 0, got.FireCount, "a failed wake is not counted")
	assert.Equal(t, utc("2026-05-01T10:01:10Z"), got.NextFire, "retried after a minute")
	assert.Equal(t, got, readRecord(t, state, rec.ID))

	clock.Advance(time.Minute) // second failure: retry after two minutes
	got, _ = r.Get(rec.ID)
	assert.Equal(t, utc("2026-05-01T10:03:10Z"), got.NextFire)
	clock.Advance(2 * time.Minute) // third: disarmed
	got, _ = r.Get(rec.ID)
	assert.Equal(t, DisarmedWakeFailed, got.Disarmed)
	assert.Equal(t, 3, got.Failures)
	assert.Empty(t, clock.Pending())

	// A retry that succeeds delivers once, with the first fire count.
	sink.setErr(errors.New("busy"))
	again, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "10s", Prompt: "Again."})
	require.NoError(t, err)
	clock.Advance(10 * time.Second)
	sink.setErr(nil)
	clock.Advance(time.Minute)
	calls := sink.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, map[string]any{"reminderId": again.ID, "fireCount": 0}, calls[0].Data)
	assert.False(t, reminderFileExists(state, again.ID))
}

func TestReminderSessionGoneDisarms(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock, err: fmt.Errorf("waking %s: %w", "x", ErrSessionGone)}
	r := openReminders(t, state, clock, sink, true)
	rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "1m", Prompt: "Hi."})
	require.NoError(t, err)
	clock.Advance(time.Hour)
	got, err := r.Get(rec.ID)
	require.NoError(t, err)
	assert.Equal(t, DisarmedSessionGone, got.Disarmed)
	assert.Equal(t, 1, got.Failures)
	assert.Contains(t, readRecord(t, state, rec.ID).LastError, "session does not exist")
	assert.Len(t, r.List(ses), 1, "kept and listed until cancelled")
}

func TestReminderPersistedBeforeWake(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	var onDisk []Reminder
	var id string
	sink.during = func(sinkCall) { onDisk = append(onDisk, readRecord(t, state, id)) }
	r := openReminders(t, state, clock, sink, true)
	rec, err := r.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "1m", Prompt: "Hi."})
	require.NoError(t, err)
	id = rec.ID
	clock.Advance(time.Minute)
	require.Len(t, onDisk, 1)
	assert.Equal(t, 1, onDisk[0].FireCount, "the firing is on disk before the session is woken")
	assert.Equal(t, utc("2026-05-01T10:02:00Z"), onDisk[0].NextFire)
}

func TestReminderSpecErrors(t *testing.T) {
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	r := openReminders(t, t.TempDir(), clock, sink, true, func(o *Options) { o.MaxPromptBytes = 100 })
	ses := sessions.NewID()
	run := func(context.Context, Tick) (Action, error) { return ActionSkip, nil }
	for _, tc := range []struct {
		name  string
		spec  ReminderSpec
		field string
		want  string
	}{
		{"delay and every", ReminderSpec{SessionID: ses, Delay: "1h", Every: "1h", Prompt: "p"}, "every", "delay and every are exclusive"},
		{"every and cron", ReminderSpec{SessionID: ses, Every: "1h", Cron: "* * * * *", Prompt: "p"}, "cron", "every and cron are exclusive"},
		{"none", ReminderSpec{SessionID: ses, Prompt: "p"}, "delay", "give one of delay"},
		{"delay under 1s", ReminderSpec{SessionID: ses, Delay: "500ms", Prompt: "p"}, "delay", `delay "500ms" is under the 1s minimum`},
		{"delay over a year", ReminderSpec{SessionID: ses, Delay: "366d", Prompt: "p"}, "delay", `delay "366d" is over the one-year maximum`},
		{"every under 1s", ReminderSpec{SessionID: ses, Every: "0s", Prompt: "p"}, "every", "under the 1s minimum"},
		{"delay not a duration", ReminderSpec{SessionID: ses, Delay: "soon", Prompt: "p"}, "delay", `"soon" is not a duration`},
		{"negative delay", ReminderSpec{SessionID: ses, Delay: "-5m", Prompt: "p"}, "delay", "under the 1s minimum"},
		{"bad cron", ReminderSpec{SessionID: ses, Cron: "0 25 * * *", Prompt: "p"}, "cron", `bad cron "0 25 * * *"`},
		{"until without prompt", ReminderSpec{SessionID: ses, Delay: "1h", Until: "done", Run: run}, "until", "until needs prompt"},
		{"no prompt", ReminderSpec{SessionID: ses, Delay: "1h"}, "prompt", "prompt is required"},
		{"prompt and run", ReminderSpec{SessionID: ses, Delay: "1h", Prompt: "p", Run: run}, "prompt", "prompt and run are exclusive"},
		{"prompt too long", ReminderSpec{SessionID: ses, Delay: "1h", Prompt: strings.Repeat("x", 101)}, "prompt", "prompt is 101 bytes, over the 100-byte bound (Options.MaxPromptBytes)"},
		{"until too long", ReminderSpec{SessionID: ses, Delay: "1h", Prompt: "p", Until: strings.Repeat("x", 101)}, "until", "over the 100-byte bound"},
		{"purpose two lines", ReminderSpec{SessionID: ses, Delay: "1h", Prompt: "p", Purpose: "a\nb"}, "purpose", "one-line label"},
		{"no session", ReminderSpec{Delay: "1h", Prompt: "p"}, "sessionId", "sessionId is required"},
		{"bad session id", ReminderSpec{SessionID: "ses_../../x", Delay: "1h", Prompt: "p"}, "sessionId", `"ses_../../x" is not a session id`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Create(context.Background(), tc.spec)
			var se *SpecError
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, tc.field, se.Field)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Empty(t, r.List(""), "nothing was kept")
	ents, err := filepath.Glob(filepath.Join(r.opts.StateRoot, RemindersDir, "*.json"))
	require.NoError(t, err)
	assert.Empty(t, ents)

	// Day suffix and a year exactly are fine.
	_, err = r.Create(context.Background(), ReminderSpec{SessionID: ses, Delay: "365d", Prompt: "p"})
	require.NoError(t, err)
}

func TestReminderPerSessionBound(t *testing.T) {
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	r := openReminders(t, t.TempDir(), clock, sink, true, func(o *Options) { o.MaxRemindersPerSession = 2 })
	a, b := sessions.NewID(), sessions.NewID()
	for range 2 {
		_, err := r.Create(context.Background(), ReminderSpec{SessionID: a, Delay: "1h", Prompt: "p"})
		require.NoError(t, err)
	}
	_, err := r.Create(context.Background(), ReminderSpec{SessionID: a, Delay: "1h", Prompt: "p"})
	var se *SpecError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "already has 2 reminders, the most one session may have (Options.MaxRemindersPerSession)")
	_, err = r.Create(context.Background(), ReminderSpec{SessionID: b, Delay: "1h", Prompt: "p"})
	require.NoError(t, err, "the bound is per session")
	clock.Advance(time.Hour) // the one-shots fire and are done
	_, err = r.Create(context.Background(), ReminderSpec{SessionID: a, Delay: "1h", Prompt: "p"})
	require.NoError(t, err)
}

func TestOpenRemindersSkipsBadFiles(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, RemindersDir)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rem_01KBADBADBADBADBADBADBADBA.json"), []byte("{"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644))
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	r := openReminders(t, state, clock, &recordingSink{clock: clock}, true)
	assert.Empty(t, r.List(""))
	_, problems, err := ReadReminders(DiskStore(state))
	require.NoError(t, err)
	require.Len(t, problems, 1)
	assert.Contains(t, problems[0].Error(), "not a reminder")
	_, err = os.Stat(filepath.Join(dir, "rem_01KBADBADBADBADBADBADBADBA.json"))
	assert.NoError(t, err, "a bad file is left alone")
}

func TestRemindersOneProcessFires(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	first := openReminders(t, state, clock, sink, true)
	second, err := OpenReminders(Options{StateRoot: state, Clock: clock, Sink: sink, Auto: true})
	require.NoError(t, err)
	t.Cleanup(second.Stop)
	require.ErrorIs(t, second.Start(), ErrFiredElsewhere)
	rec, err := first.Create(context.Background(), ReminderSpec{SessionID: sessions.NewID(), Every: "1m", Prompt: "p"})
	require.NoError(t, err)
	clock.Advance(time.Minute)
	first.Stop()
	require.NoError(t, second.Start(), "the lock is released by Stop")
	assert.Len(t, sink.Calls(), 1, "the firing the first made is not repeated")
	got, err := second.Get(rec.ID)
	require.NoError(t, err, "what the first made is read at Start")
	assert.Equal(t, 1, got.FireCount)
	clock.Advance(time.Minute)
	assert.Len(t, sink.Calls(), 2)
}

func TestRunFormKeptWhileAnotherProcessHoldsIt(t *testing.T) {
	state, ses := t.TempDir(), sessions.NewID()
	clock := NewFakeClock(utc("2026-05-01T10:00:00Z"))
	sink := &recordingSink{clock: clock}
	first := openReminders(t, state, clock, sink, true)
	rec, err := first.Create(context.Background(), ReminderSpec{SessionID: ses, Every: "1m",
		Run: func(ctx context.Context, tk Tick) (Action, error) { return ActionDelivered, tk.Followup(ctx, "x") }})
	require.NoError(t, err)

	// A second process (july serve --dev, say) opening meanwhile does not
	// disarm the first's live handler, and cannot fire it.
	dev := openReminders(t, state, clock, sink, false)
	got, err := dev.Get(rec.ID)
	require.NoError(t, err)
	assert.Empty(t, got.Disarmed)
	assert.ErrorContains(t, dev.Fire(context.Background(), rec.ID), "handler is in another process")
	clock.Advance(time.Minute)
	assert.Len(t, sink.Calls(), 1, "the first still fires it")
	assert.Empty(t, readRecord(t, state, rec.ID).Disarmed)
}
