package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newScheduler starts a scheduler over scheds on clock and sink.
func newScheduler(t *testing.T, state string, clock *FakeClock, sink *recordingSink, auto bool, scheds ...Schedule) *Scheduler {
	t.Helper()
	s, err := NewScheduler(scheds, Options{StateRoot: state, Clock: clock, Sink: sink, Auto: auto, Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(s.Stop)
	require.NoError(t, s.Start())
	return s
}

func TestSchedulerFiresEachTick(t *testing.T) {
	clock := NewFakeClock(utc("2026-01-31T23:42:10Z"))
	sink := &recordingSink{clock: clock}
	s := newScheduler(t, t.TempDir(), clock, sink, true, mustSchedule(t, "hb", "*/10 * * * *", "Check in."))
	assert.Empty(t, sink.Calls(), "the first start has missed nothing")
	clock.Advance(40 * time.Minute)
	assert.Equal(t, utcs("2026-01-31T23:50:00Z", "2026-02-01T00:00:00Z", "2026-02-01T00:10:00Z", "2026-02-01T00:20:00Z"), sink.times())
	for _, c := range sink.Calls() {
		assert.Equal(t, sinkCall{Kind: "start", ID: "hb", Text: "Check in.", At: c.At, Session: c.Session}, c)
	}
	info := s.Schedules()
	require.Len(t, info, 1)
	assert.Equal(t, utc("2026-02-01T00:20:00Z"), info[0].LastTick)
	assert.Equal(t, utc("2026-02-01T00:30:00Z"), info[0].Next)
	assert.Equal(t, sink.Calls()[3].Session, info[0].LastSessionID)
}

func TestSchedulerTwoSchedulesInOrder(t *testing.T) {
	clock := NewFakeClock(utc("2026-06-30T23:59:00Z"))
	sink := &recordingSink{clock: clock}
	newScheduler(t, t.TempDir(), clock, sink, true,
		mustSchedule(t, "monthly", "0 0 1 * *", "Month."), mustSchedule(t, "daily", "0 0 * * *", "Day."), mustSchedule(t, "hourly", "30 * * * *", "Hour."))
	clock.Advance(24*time.Hour + time.Minute)
	var ids []string
	for _, c := range sink.Calls() {
		ids = append(ids, c.ID+"@"+c.At.Format("02T15:04"))
	}
	assert.Equal(t, "monthly@01T00:00", ids[0])
	assert.Equal(t, "daily@01T00:00", ids[1])
	assert.Len(t, ids, 2+24+1) // 2 at midnight, 24 half-hours, then midnight's daily
	assert.Equal(t, "daily@02T00:00", ids[len(ids)-1])
}

func TestSchedulerRecordsTheTickBeforeTheSession(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-03-01T08:59:30Z"))
	sink := &recordingSink{clock: clock}
	var seen []ScheduleState
	sink.during = func(c sinkCall) {
		var st ScheduleState
		data, err := os.ReadFile(filepath.Join(state, SchedulesDir, "daily.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, &st))
		seen = append(seen, st)
	}
	newScheduler(t, state, clock, sink, true, mustSchedule(t, "daily", "0 9 * * *", "Go."))
	clock.Advance(time.Minute)
	require.Len(t, seen, 1)
	assert.Equal(t, utc("2026-03-01T09:00:00Z"), seen[0].LastTick, "the tick is on disk when the session starts")
}

func TestSchedulerRestartInTheSameMinute(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-03-01T08:59:30Z"))
	sink := &recordingSink{clock: clock}
	sched := mustSchedule(t, "daily", "0 9 * * *", "Go.")
	first := newScheduler(t, state, clock, sink, true, sched)
	clock.Advance(40 * time.Second) // 09:00:10: fired
	require.Len(t, sink.Calls(), 1)
	first.Stop()

	clock.Advance(20 * time.Second) // 09:00:30, same minute
	newScheduler(t, state, clock, sink, true, sched)
	assert.Len(t, sink.Calls(), 1, "a restart within the tick's minute does not fire it again")
	clock.Advance(24 * time.Hour)
	assert.Equal(t, utcs("2026-03-01T09:00:00Z", "2026-03-02T09:00:00Z"), sink.times())
}

func TestSchedulerMissedTicksFireOnce(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-04-30T10:02:00Z"))
	sink := &recordingSink{clock: clock}
	sched := mustSchedule(t, "five", "*/5 * * * *", "Tick.")
	first := newScheduler(t, state, clock, sink, true, sched)
	clock.Advance(4 * time.Minute) // 10:05 fired
	first.Stop()
	require.Len(t, sink.Calls(), 1)

	clock.Set(utc("2026-05-01T11:02:00Z")) // down a day: hundreds of ticks missed
	assert.Len(t, sink.Calls(), 1, "a stopped scheduler fires nothing")
	newScheduler(t, state, clock, sink, true, sched)
	require.Len(t, sink.Calls(), 2, "the missed ticks fire once on start")
	assert.Equal(t, utc("2026-05-01T11:02:00Z"), sink.Calls()[1].At)
	clock.Advance(3 * time.Minute)
	assert.Equal(t, utcs("2026-04-30T10:05:00Z", "2026-05-01T11:02:00Z", "2026-05-01T11:05:00Z"), sink.times())
}

func TestSchedulerDowntimeSinceFirstArmed(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-12-31T08:50:00Z"))
	sink := &recordingSink{clock: clock}
	sched := mustSchedule(t, "daily", "0 9 * * *", "Go.")
	first := newScheduler(t, state, clock, sink, true, sched)
	first.Stop() // never fired
	clock.Set(utc("2027-01-01T08:00:00Z"))
	second := newScheduler(t, state, clock, sink, true, sched)
	assert.Len(t, sink.Calls(), 1, "the tick missed since the schedule was armed fires on start")
	second.Stop()

	// And a restart with nothing missed fires nothing.
	clock.Set(utc("2027-01-01T08:30:00Z"))
	newScheduler(t, state, clock, sink, true, sched)
	assert.Len(t, sink.Calls(), 1)
}

func TestSchedulerFailedStartConsumesTheTick(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-03-01T08:59:00Z"))
	sink := &recordingSink{clock: clock, err: errors.New("the host is full")}
	sched := mustSchedule(t, "daily", "0 9 * * *", "Go.")
	s := newScheduler(t, state, clock, sink, true, sched)
	clock.Advance(2 * time.Minute)
	assert.Equal(t, "the host is full", s.Schedules()[0].LastError)
	s.Stop()
	sink.setErr(nil)
	newScheduler(t, state, clock, sink, true, sched)
	assert.Empty(t, sink.Calls(), "a tick fires at most once, even when its session failed to start")
}

func TestSchedulerDevModeDispatch(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-03-01T08:59:00Z"))
	sink := &recordingSink{clock: clock}
	s := newScheduler(t, state, clock, sink, false, mustSchedule(t, "hb", "* * * * *", "Beat."))
	clock.Advance(time.Hour)
	assert.Empty(t, sink.Calls(), "Auto off: nothing fires by itself")
	assert.Empty(t, clock.Pending())

	ids, err := s.Dispatch(context.Background(), "hb")
	require.NoError(t, err)
	calls := sink.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, []string{calls[0].Session}, ids)
	assert.Equal(t, "Beat.", calls[0].Text)
	assert.Equal(t, calls[0].Session, s.Schedules()[0].LastSessionID)

	_, err = s.Dispatch(context.Background(), "nope")
	require.ErrorIs(t, err, ErrUnknownSchedule)
	assert.Contains(t, err.Error(), `"nope" (the schedules are [hb])`)
	assert.Len(t, sink.Calls(), 1)
}

func TestSchedulerDispatchDoesNotConsumeATick(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-03-01T08:59:00Z"))
	sink := &recordingSink{clock: clock}
	s := newScheduler(t, state, clock, sink, true, mustSchedule(t, "daily", "0 9 * * *", "Go."))
	_, err := s.Dispatch(context.Background(), "daily")
	require.NoError(t, err)
	clock.Advance(time.Minute)
	assert.Equal(t, utcs("2026-03-01T08:59:00Z", "2026-03-01T09:00:00Z"), sink.times())
}

func TestSchedulerStopDisarms(t *testing.T) {
	clock := NewFakeClock(utc("2026-03-01T08:59:00Z"))
	sink := &recordingSink{clock: clock}
	s := newScheduler(t, t.TempDir(), clock, sink, true, mustSchedule(t, "hb", "* * * * *", "Beat."))
	s.Stop()
	s.Stop()
	clock.Advance(time.Hour)
	assert.Empty(t, sink.Calls())
	assert.Empty(t, clock.Pending())
}

func TestNewSchedulerErrors(t *testing.T) {
	clock := NewFakeClock(utc("2026-03-01T08:59:00Z"))
	sink := &recordingSink{clock: clock}
	hb := mustSchedule(t, "hb", "* * * * *", "Beat.")
	_, err := NewScheduler([]Schedule{hb}, Options{Sink: sink})
	assert.ErrorContains(t, err, "StateRoot is required")
	_, err = NewScheduler([]Schedule{hb}, Options{StateRoot: t.TempDir()})
	assert.ErrorContains(t, err, "Sink is required")
	_, err = NewScheduler([]Schedule{hb, hb}, Options{StateRoot: t.TempDir(), Sink: sink})
	assert.ErrorContains(t, err, `two schedules with id "hb"`)

	state := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(state, SchedulesDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(state, SchedulesDir, "hb.json"), []byte("{not json"), 0o644))
	_, err = NewScheduler([]Schedule{hb}, Options{StateRoot: state, Sink: sink})
	assert.ErrorContains(t, err, "hb.json")
	assert.ErrorContains(t, err, "remove the file to forget it")
}

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(utc("2026-01-01T00:00:00Z"))
	var got []string
	c.AfterFunc(2*time.Second, func() { got = append(got, "b@"+c.Now().Format("05")) })
	c.AfterFunc(time.Second, func() {
		got = append(got, "a@"+c.Now().Format("05"))
		c.AfterFunc(500*time.Millisecond, func() { got = append(got, "a2@"+c.Now().Format("05.0")) })
	})
	stop := c.AfterFunc(time.Second, func() { got = append(got, "never") })
	c.AfterFunc(2*time.Second, func() { got = append(got, "c@"+c.Now().Format("05")) })
	assert.True(t, stop())
	assert.False(t, stop())
	c.Advance(10 * time.Second)
	assert.Equal(t, []string{"a@01", "a2@01.5", "b@02", "c@02"}, got)
	assert.Equal(t, utc("2026-01-01T00:00:10Z"), c.Now())
	assert.Empty(t, c.Pending())
}

func TestSchedulerOneProcessFires(t *testing.T) {
	state := t.TempDir()
	clock := NewFakeClock(utc("2026-03-01T08:59:00Z"))
	sink := &recordingSink{clock: clock}
	hb := mustSchedule(t, "hb", "* * * * *", "Beat.")
	first := newScheduler(t, state, clock, sink, true, hb)
	second, err := NewScheduler([]Schedule{hb}, Options{StateRoot: state, Clock: clock, Sink: sink, Auto: true})
	require.NoError(t, err)
	t.Cleanup(second.Stop)
	err = second.Start()
	require.ErrorIs(t, err, ErrFiredElsewhere)
	assert.ErrorContains(t, err, "--no-schedules")
	clock.Advance(time.Minute)
	assert.Len(t, sink.Calls(), 1, "only the first scheduler fires")

	dev, err := NewScheduler([]Schedule{hb}, Options{StateRoot: state, Clock: clock, Sink: sink})
	require.NoError(t, err)
	require.NoError(t, dev.Start(), "Auto off takes no lock")
	first.Stop()
	require.NoError(t, second.Start(), "the lock is released by Stop")
	clock.Advance(time.Minute)
	assert.Len(t, sink.Calls(), 2)
}
