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
