package schedule

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

// sinkCall is one call a recordingSink received.
type sinkCall struct {
	Kind    string // start or wake
	ID      string // schedule id or session id
	Text    string
	Data    map[string]any
	At      time.Time
	Session string // the session a start made
}

// recordingSink records its calls; err, when set, fails them.
type recordingSink struct {
	clock Clock
	mu    sync.Mutex
	calls []sinkCall
	err   error
	// during, when set, runs inside each call (before it is recorded).
	during func(c sinkCall)
}

func (s *recordingSink) StartTask(ctx context.Context, scheduleID, prompt string) (string, error) {
	c := sinkCall{Kind: "start", ID: scheduleID, Text: prompt, At: s.clock.Now(), Session: sessions.NewID()}
	return c.Session, s.record(c)
}

func (s *recordingSink) Wake(ctx context.Context, sessionID, text string, data map[string]any) error {
	return s.record(sinkCall{Kind: "wake", ID: sessionID, Text: text, Data: data, At: s.clock.Now()})
}

func (s *recordingSink) record(c sinkCall) error {
	if s.during != nil {
		s.during(c)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.calls = append(s.calls, c)
	return nil
}

func (s *recordingSink) setErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func (s *recordingSink) Calls() []sinkCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sinkCall(nil), s.calls...)
}

// times returns the clock readings of the calls.
func (s *recordingSink) times() []time.Time {
	var out []time.Time
	for _, c := range s.Calls() {
		out = append(out, c.At)
	}
	return out
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func utcs(ss ...string) []time.Time {
	var out []time.Time
	for _, s := range ss {
		out = append(out, utc(s))
	}
	return out
}

// writeSchedule writes agentDir/schedules/name.md.
func writeSchedule(t *testing.T, agentDir, name, content string) {
	t.Helper()
	dir := filepath.Join(agentDir, Dir)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
}

func mustSchedule(t *testing.T, id, cronExpr, prompt string) Schedule {
	t.Helper()
	s, err := Parse("schedules/"+id+".md", fmt.Appendf(nil, "---\ncron: %q\n---\n%s\n", cronExpr, prompt))
	require.NoError(t, err)
	s.ID = id
	return s
}
