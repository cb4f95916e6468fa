package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/sessions/pgstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// TestDatabaseRestart stops the database under a store: every call fails
// with an error wrapping sessions.ErrUnavailable that names the database,
// a session held across the restart has lost its lock (its appends fail),
// and once the server is back the same store works again without being
// reopened.
func TestDatabaseRestart(t *testing.T) {
	srv := pgtest.Start(t, "fsync=off")
	db, err := pgstore.Open(context.Background(), srv.URL, pgstore.Options{Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(db.Close)
	st := sessions.NewWithBackend(db.Sessions("notes", t.TempDir()))
	sched := db.Schedule("notes")
	held, err := st.Create(sessions.Meta{Agent: "notes"})
	require.NoError(t, err)
	_, err = held.Append(sessions.TypeMessageReceived, "turn_1", sessions.MessageReceived{Text: "before"})
	require.NoError(t, err)

	require.NoError(t, srv.Stop())
	_, err = st.Create(sessions.Meta{Agent: "notes"})
	require.ErrorIs(t, err, sessions.ErrUnavailable)
	assert.Contains(t, err.Error(), pgstore.Redact(srv.URL))
	assert.NotContains(t, err.Error(), pgtest.Password)
	_, err = st.List()
	require.ErrorIs(t, err, sessions.ErrUnavailable)
	_, _, _, err = st.Read(held.ID())
	require.ErrorIs(t, err, sessions.ErrUnavailable)
	_, err = held.Append(sessions.TypeTurnStarted, "turn_1", sessions.TurnStarted{})
	require.ErrorIs(t, err, sessions.ErrUnavailable)
	_, err = sched.ClaimTick(schedule.ScheduleState{ScheduleID: "tick", LastTick: time.Now()})
	require.ErrorIs(t, err, sessions.ErrUnavailable)

	require.NoError(t, srv.Start())
	// The connection that held the session was cut with the server: its
	// lock is gone, and so are its writes.
	_, err = held.Append(sessions.TypeTurnStarted, "turn_1", sessions.TurnStarted{})
	require.Error(t, err)
	require.NoError(t, held.Close())
	l, _, err := st.Resume(held.ID())
	require.NoError(t, err, "the session can be held again")
	assert.Len(t, l.Events(), 1, "the event written before the restart is kept")
	require.NoError(t, l.Close())
	l2, err := st.Create(sessions.Meta{Agent: "notes"})
	require.NoError(t, err, "a new session after the restart")
	require.NoError(t, l2.Close())
	list, err := st.List()
	require.NoError(t, err)
	assert.Len(t, list, 2)
	ok, err := sched.ClaimTick(schedule.ScheduleState{ScheduleID: "tick", LastTick: time.Now()})
	require.NoError(t, err)
	assert.True(t, ok)
}

// TestReminderAcrossDatabaseRestart: a reminder due while the database
// is down does not fire (the store cannot claim the firing), and fires
// once after the database is back, at the next resync.
func TestReminderAcrossDatabaseRestart(t *testing.T) {
	srv := pgtest.Start(t, "fsync=off")
	db, err := pgstore.Open(context.Background(), srv.URL, pgstore.Options{Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(db.Close)
	clock := schedule.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	sink := &countingSink{}
	r, err := schedule.OpenReminders(schedule.Options{Store: db.Schedule(freshScope()), Sink: sink, Clock: clock, Auto: true, Logf: t.Logf})
	require.NoError(t, err)
	require.NoError(t, r.Start())
	t.Cleanup(r.Stop)
	rec, err := r.Create(context.Background(), schedule.ReminderSpec{SessionID: sessions.NewID(), Delay: "2m", Prompt: "check"})
	require.NoError(t, err)

	require.NoError(t, srv.Stop())
	clock.Advance(3 * time.Minute)
	assert.Empty(t, sink.counts(), "nothing fires while the database is down")

	require.NoError(t, srv.Start())
	clock.Advance(schedule.DefaultResync)
	clock.Advance(time.Second)
	assert.Equal(t, map[float64]int{0: 1}, sink.counts(), "fired once after the restart")
	clock.Advance(10 * time.Minute)
	assert.Equal(t, map[float64]int{0: 1}, sink.counts(), "and never again")
	_, err = r.Get(rec.ID)
	require.Error(t, err, "a one-shot reminder that fired is gone")
}
