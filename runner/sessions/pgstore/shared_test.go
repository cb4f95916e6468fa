package pgstore_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/model/script"
	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// agentDir writes an agent named name with one schedule firing every
// minute.
func agentDir(t *testing.T, name string) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: "+name+"\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "schedules"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "schedules", "tick.md"), []byte("---\ncron: \"* * * * *\"\n---\n\nSay tick.\n"), 0o644))
	return dir
}

// server is one july serve's worth of an agent on the database: a host
// and a scheduler.
type server struct {
	host  *host.Host
	sched *schedule.Scheduler
}

const tickScript = "turns:\n  - replies:\n      - text: tick\n"

func startServer(t *testing.T, url, dir string, clock schedule.Clock) server {
	t.Helper()
	db := openDB(t, url) // a pool of its own: another process
	a, err := runner.Load(dir)
	require.NoError(t, err)
	m, err := script.Parse([]byte(tickScript), "tick.script.yaml")
	require.NoError(t, err)
	h, err := host.New(host.Options{Agent: a, Store: sessions.NewWithBackend(db.Sessions(a.Config.Name, t.TempDir())), Model: m, Logf: t.Logf})
	require.NoError(t, err)
	scheds, err := schedule.Load(dir)
	require.NoError(t, err)
	sc, err := schedule.NewScheduler(scheds, schedule.Options{Store: db.Schedule(a.Config.Name), Sink: h, Clock: clock, Auto: true, Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(func() {
		sc.Stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.Shutdown(ctx, 10*time.Second)
	})
	return server{host: h, sched: sc}
}

// TestTwoServersFireEachTickOnce runs two servers (two hosts, two
// schedulers, two connection pools) on one database and one fake clock
// for 50 minutes of an every-minute schedule: 50 sessions between them,
// one per tick. The first server stops for ten ticks and a new one takes
// its place: the second fires those alone, and the new one fires no tick
// again.
func TestTwoServersFireEachTickOnce(t *testing.T) {
	url := pgtest.URL(t)
	dir := agentDir(t, freshScope())
	start := time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)
	clock := schedule.NewFakeClock(start)
	a := startServer(t, url, dir, clock)
	b := startServer(t, url, dir, clock)
	require.NoError(t, a.sched.Start())
	require.NoError(t, b.sched.Start())
	for i := 1; i <= 50; i++ {
		switch i {
		case 20:
			a.sched.Stop()
		case 30:
			a = startServer(t, url, dir, clock)
			require.NoError(t, a.sched.Start())
		}
		clock.Advance(time.Minute)
	}
	list, err := b.host.List()
	require.NoError(t, err)
	for _, m := range list {
		assert.Equal(t, "tick", m.ScheduleID)
		assert.Equal(t, sessions.ModeTask, m.Mode)
	}
	assert.Equal(t, 50, len(list), "one session per tick, 50 ticks")
	info := b.sched.Schedules()
	require.Len(t, info, 1)
	assert.Equal(t, start.Truncate(time.Minute).Add(50*time.Minute), info[0].LastTick)
	// Both servers see every session: the other's too.
	listA, err := a.host.List()
	require.NoError(t, err)
	assert.Equal(t, 50, len(listA))
}

// TestTwoServersFireEachReminderOnce: a recurring reminder made on one
// server is armed by the other within a resync, and each of its 50
// firings happens once between them.
func TestTwoServersFireEachReminderOnce(t *testing.T) {
	url := pgtest.URL(t)
	scope := freshScope()
	clock := schedule.NewFakeClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	sink := &countingSink{}
	var rs []*schedule.Reminders
	for range 2 {
		db := openDB(t, url)
		r, err := schedule.OpenReminders(schedule.Options{Store: db.Schedule(scope), Sink: sink, Clock: clock, Auto: true, Logf: t.Logf})
		require.NoError(t, err)
		require.NoError(t, r.Start())
		t.Cleanup(r.Stop)
		rs = append(rs, r)
	}
	rec, err := rs[0].Create(context.Background(), schedule.ReminderSpec{SessionID: sessions.NewID(), Every: "1m", Prompt: "check"})
	require.NoError(t, err)
	for range 50 {
		clock.Advance(time.Minute)
	}
	counts := sink.counts()
	require.Equal(t, 50, len(counts), "50 firings")
	for n, c := range counts {
		assert.Equal(t, 1, c, "firing %d woke %d times", n, c)
	}
	got, err := rs[1].Get(rec.ID)
	require.NoError(t, err)
	assert.Equal(t, 50, got.FireCount)
	// Cancelled on one server, the other drops it at its next resync.
	require.NoError(t, rs[0].Cancel(rec.ID))
	clock.Advance(time.Minute)
	assert.Equal(t, 50, len(sink.counts()), "no firing after the cancel")
}

// countingSink counts the wakes of each fire count.
type countingSink struct {
	mu    sync.Mutex
	fires map[float64]int
}

func (s *countingSink) StartTask(context.Context, string, string) (string, error) {
	return sessions.NewID(), nil
}

func (s *countingSink) Wake(_ context.Context, _, _ string, data map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fires == nil {
		s.fires = map[float64]int{}
	}
	switch n := data["fireCount"].(type) {
	case int:
		s.fires[float64(n)]++
	case float64:
		s.fires[n]++
	}
	return nil
}

func (s *countingSink) counts() map[float64]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[float64]int{}
	for k, v := range s.fires {
		out[k] = v
	}
	return out
}
