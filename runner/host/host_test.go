package host

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

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/model/script"
	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
)

func newHost(t *testing.T, scriptText string, limit int) *Host {
	t.Helper()
	return newHostWith(t, scriptText, Options{QueueLimit: limit})
}

// newHostWith is newHost with opts (Agent, Store, Model and Logf are
// filled in).
func newHostWith(t *testing.T, scriptText string, opts Options) *Host {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: h\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"), 0o644))
	a, err := runner.Load(dir)
	require.NoError(t, err)
	m, err := script.Parse([]byte(scriptText), "h.script.yaml")
	require.NoError(t, err)
	opts.Agent, opts.Store, opts.Model, opts.Logf = a, sessions.New(filepath.Join(dir, ".july")), m, t.Logf
	h, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		h.Shutdown(ctx, 10*time.Second)
	})
	return h
}

// follow reads sub until an event of type typ, bounded.
func follow(t *testing.T, sub *Subscription, typ string) []sessions.Event {
	t.Helper()
	var out []sessions.Event
	deadline := time.After(30 * time.Second)
	for {
		evs, wake := sub.Poll()
		for _, ev := range evs {
			out = append(out, ev)
			if ev.Type == typ {
				return out
			}
		}
		select {
		case <-wake:
		case <-deadline:
			require.FailNow(t, "no "+typ+" within 30 s")
		}
	}
}

const slow = "turns:\n  - replies:\n      - sleep: 10m\n        text: never\n  - replies:\n      - text: two\n"

// TestShutdownInterruptsAndDrops: Shutdown past its context interrupts
// the running turn, drops the queued message, refuses new ones and ends
// subscriptions.
func TestShutdownInterruptsAndDrops(t *testing.T) {
	h := newHost(t, slow, 0)
	ctx := context.Background()
	st, err := h.Create(ctx, Message{Text: "slow"}, CreateOptions{})
	require.NoError(t, err)
	sub, err := h.Subscribe(st.SessionID, 0)
	require.NoError(t, err)
	defer sub.Close()
	follow(t, sub, sessions.TypeTurnStarted)
	_, err = h.Send(ctx, st.SessionID, Message{Text: "queued"})
	require.NoError(t, err)
	sctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.NoError(t, h.Shutdown(sctx, 10*time.Second))
	evs := follow(t, sub, sessions.TypeTurnFailed)
	var d sessions.TurnFailed
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Data, &d))
	assert.Equal(t, sessions.MessageInterrupted, d.Message)
	select {
	case <-sub.Done():
	default:
		t.Fatal("subscription not ended by Shutdown")
	}
	_, err = h.Send(ctx, st.SessionID, Message{Text: "late"})
	assert.ErrorIs(t, err, ErrClosed)
	_, evs, _, err = h.Store().Read(st.SessionID)
	require.NoError(t, err)
	for _, ev := range evs {
		if ev.Type == sessions.TypeMessageReceived {
			var m sessions.MessageReceived
			json.Unmarshal(ev.Data, &m)
			assert.NotEqual(t, "queued", m.Text, "a dropped message never ran")
		}
	}
}

// TestSink: StartTask makes a task-mode session; Wake adds data to
// message.received; a wake of a session that does not exist is
// schedule.ErrSessionGone.
func TestSink(t *testing.T) {
	h := newHost(t, "turns:\n  - replies:\n      - text: one\n  - replies:\n      - text: two\n", 0)
	ctx := context.Background()
	id, err := h.StartTask(ctx, "heartbeat", "beat")
	require.NoError(t, err)
	sub, err := h.Subscribe(id, 0)
	require.NoError(t, err)
	defer sub.Close()
	follow(t, sub, sessions.TypeTurnCompleted)
	info, err := h.Get(id)
	require.NoError(t, err)
	assert.Equal(t, sessions.ModeTask, info.Mode)
	assert.Equal(t, PurposeSchedule, info.Purpose)
	assert.Equal(t, "heartbeat", info.ScheduleID)

	require.NoError(t, h.Wake(ctx, id, "wake up", map[string]any{"reminderId": "rem_x", "fireCount": 2, "text": "ignored"}))
	evs := follow(t, sub, sessions.TypeTurnCompleted)
	var d map[string]any
	require.NoError(t, json.Unmarshal(evs[0].Data, &d))
	assert.Equal(t, map[string]any{"text": "wake up", "reminderId": "rem_x", "fireCount": 2.0}, d)

	err = h.Wake(ctx, sessions.NewID(), "x", nil)
	assert.True(t, errors.Is(err, schedule.ErrSessionGone), "%v", err)
	assert.True(t, errors.Is(err, sessions.ErrUnknown), "%v", err)
	deadline := time.Now().Add(30 * time.Second)
	for info, _ := h.Get(id); info.State != StateIdle; info, _ = h.Get(id) {
		require.True(t, time.Now().Before(deadline))
		time.Sleep(5 * time.Millisecond)
	}
	_, err = h.Cancel(id)
	assert.ErrorIs(t, err, ErrNotRunning)
	_, err = h.Create(ctx, Message{}, CreateOptions{})
	assert.ErrorIs(t, err, ErrEmptyMessage)
}

// TestSubscribeIdleFromDisk: following a session nobody holds reads its
// log from disk, and a later turn's events follow without a gap.
func TestSubscribeIdleFromDisk(t *testing.T) {
	h := newHost(t, "turns:\n  - replies:\n      - text: one\n  - replies:\n      - text: two\n", 0)
	ctx := context.Background()
	st, err := h.Create(ctx, Message{Text: "a"}, CreateOptions{})
	require.NoError(t, err)
	s1, err := h.Subscribe(st.SessionID, 0)
	require.NoError(t, err)
	follow(t, s1, sessions.TypeTurnCompleted)
	s1.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := h.Get(st.SessionID)
		require.NoError(t, err)
		h.mu.Lock()
		_, held := h.active[st.SessionID]
		_, hubbed := h.hubs[st.SessionID]
		h.mu.Unlock()
		if info.State == StateIdle && !held && !hubbed {
			break // released, and nothing kept in memory
		}
		require.True(t, time.Now().Before(deadline))
		time.Sleep(5 * time.Millisecond)
	}
	sub, err := h.Subscribe(st.SessionID, 2)
	require.NoError(t, err)
	defer sub.Close()
	_, err = h.Send(ctx, st.SessionID, Message{Text: "b"})
	require.NoError(t, err)
	evs := follow(t, sub, sessions.TypeTurnCompleted)
	for i, ev := range evs {
		require.Equal(t, int64(i+2), ev.Index)
	}
}

// TestFollowQuickTurnElsewhere: a subscriber of a session another
// process holds sees a turn that process began and ended between two of
// the host's polls (session.json then no longer lags behind the log).
func TestFollowQuickTurnElsewhere(t *testing.T) {
	// A turn here takes a few fsyncs (tens of ms): a tick lands inside it
	// rarely, and the old poller then saw it.
	const every = time.Second
	h := newHostWith(t, "turns:\n  - replies:\n      - text: one\n", Options{PollInterval: every})
	ctx := context.Background()
	st, err := h.Create(ctx, Message{Text: "a"}, CreateOptions{})
	require.NoError(t, err)
	s1, err := h.Subscribe(st.SessionID, 0)
	require.NoError(t, err)
	n := int64(len(follow(t, s1, sessions.TypeTurnCompleted)))
	s1.Close()
	require.Eventually(t, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		_, held := h.active[st.SessionID]
		return !held
	}, 30*time.Second, 5*time.Millisecond, "the host releases the session")

	sub, err := h.Subscribe(st.SessionID, n)
	require.NoError(t, err)
	defer sub.Close()
	time.Sleep(2*every + every/2)                           // the poller has read the log as it is, and seen nothing move
	other := sessions.New(filepath.Dir(h.opts.Store.Dir())) // a second process on the state root
	l, _, err := other.Resume(st.SessionID)
	require.NoError(t, err)
	_, err = l.Append(sessions.TypeMessageReceived, "t2", sessions.MessageReceived{Text: "b"})
	require.NoError(t, err)
	_, err = l.Append(sessions.TypeTurnStarted, "t2", sessions.TurnStarted{})
	require.NoError(t, err)
	_, err = l.Append(sessions.TypeTurnCompleted, "t2", sessions.TurnCompleted{})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	require.False(t, other.Stale(st.SessionID), "session.json is up to date: only the log's size says it moved")
	evs := follow(t, sub, sessions.TypeTurnCompleted)
	require.Len(t, evs, 3)
	assert.Equal(t, n, evs[0].Index)
}
