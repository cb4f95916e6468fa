package runner

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
)

const reminderTurns = `
turns:
  - message: {contains: remind me}
    replies:
      - calls:
          - {tool: CreateReminder, args: {delay: 2h, prompt: Re-check CI for PR 12., until: CI is green, purpose: ci_recheck}}
      - expect:
          - {tool: CreateReminder, matches: "^Created reminder rem_[0-9A-Z]{26} \\(once, after 2h\\): it fires next at 2026-05-01T12:00:00Z \\(in 2h0m0s\\)\\.$"}
        calls:
          - {tool: CreateReminder, args: {delay: 2h, every: 1h, prompt: both}}
          - {tool: ListReminders}
      - expect:
          - {tool: CreateReminder, error: true, contains: "bad reminder: delay and every are exclusive"}
          - {tool: ListReminders, matches: "^1 reminder\\(s\\):\n- rem_[0-9A-Z]{26} \\(once, after 2h\\): next 2026-05-01T12:00:00Z, fired 0 time\\(s\\); prompt: Re-check CI for PR 12\\.; until: CI is green$"}
        text: I will check back in two hours.
  - message: {contains: Re-check CI for PR 12.}
    replies:
      - calls:
          - {tool: CancelReminder, args: {id: rem_00000000000000000000000000}}
      - expect:
          - {tool: CancelReminder, error: true, contains: "unknown reminder rem_00000000000000000000000000"}
        text: CI is green now.
`

// loopSink wakes a session by running a turn of its loop.
type loopSink struct {
	mu    sync.Mutex
	loop  *Loop
	wakes []map[string]any
	errs  []error
}

func (s *loopSink) StartTask(context.Context, string, string) (string, error) {
	return "", fmt.Errorf("no schedules here")
}

func (s *loopSink) Wake(ctx context.Context, sessionID, text string, data map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sessionID != s.loop.log.ID() {
		return fmt.Errorf("%w: %s", schedule.ErrSessionGone, sessionID)
	}
	s.wakes = append(s.wakes, data)
	_, err := s.loop.Run(ctx, text)
	s.errs = append(s.errs, err)
	return err
}

func TestRemindersToolThroughTheLoop(t *testing.T) {
	clock := schedule.NewFakeClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	sink := &loopSink{}
	rem, err := schedule.OpenReminders(schedule.Options{StateRoot: t.TempDir(), Clock: clock, Sink: sink, Auto: true, Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(rem.Stop)
	require.NoError(t, rem.Start())

	f := newLoopFixture(t, "-- agent.yaml --\nname: t\nroot:\n  /:\n    temp: {}\ntools: [reminders]\n",
		SessionOptions{Harness: HarnessOptions{Reminders: rem}})
	assert.Equal(t, []string{AllowReminders}, f.agent.Plan.Harness)
	l := f.loop(t, reminderTurns, LoopOptions{})
	sink.loop = l
	res, err := l.Run(t.Context(), "remind me to re-check CI")
	require.NoError(t, err)
	assert.Equal(t, "I will check back in two hours.", res.Text)

	list := rem.List(f.log.ID())
	require.Len(t, list, 1)
	r := list[0]
	assert.Equal(t, "Re-check CI for PR 12.", r.Prompt)
	assert.Equal(t, "CI is green", r.Until)
	assert.Equal(t, "ci_recheck", r.Purpose)

	clock.Advance(2 * time.Hour) // the reminder wakes the session: turn 2
	require.Len(t, sink.wakes, 1)
	assert.Equal(t, map[string]any{"reminderId": r.ID, "fireCount": 0}, sink.wakes[0])
	require.NoError(t, sink.errs[0])
	assert.Empty(t, rem.List(""), "the one-shot is done")

	// A third turn cancels a recurring reminder by its id.
	rec, err := rem.Create(t.Context(), schedule.ReminderSpec{SessionID: f.log.ID(), Every: "30m", Prompt: "poll"})
	require.NoError(t, err)
	other, err := rem.Create(t.Context(), schedule.ReminderSpec{SessionID: sessions.NewID(), Every: "30m", Prompt: "not yours"})
	require.NoError(t, err)
	third := reminderTurns + fmt.Sprintf(`
  - replies:
      - calls:
          - {tool: CancelReminder, args: {id: %s}}
          - {tool: CancelReminder, args: {id: %s}}
      - expect:
          - {tool: CancelReminder, contains: "Cancelled reminder %s."}
          - {tool: CancelReminder, error: true, contains: "unknown reminder %s"}
        text: cancelled
`, rec.ID, other.ID, rec.ID, other.ID)
	l3 := f.loop(t, third, LoopOptions{})
	res, err = l3.Run(t.Context(), "stop polling")
	require.NoError(t, err)
	assert.Equal(t, "cancelled", res.Text)
	assert.Empty(t, rem.List(f.log.ID()))
	assert.Len(t, rem.List(""), 1, "another session's reminder is not this tool's to cancel")
}

func TestRemindersToolWithoutAService(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: t\nroot:\n  /:\n    temp: {}\ntools: [reminders]\n", SessionOptions{})
	l := f.loop(t, `
turns:
  - replies:
      - calls:
          - {tool: CreateReminder, args: {delay: 2h, prompt: later}}
          - {tool: ListReminders}
      - expect:
          - {tool: CreateReminder, error: true, contains: "reminders are not available in this process (run july serve)"}
          - {tool: ListReminders, error: true, contains: "reminders are not available in this process (run july serve)"}
        text: ok
`, LoopOptions{})
	res, err := l.Run(t.Context(), "remind me")
	require.NoError(t, err)
	assert.Equal(t, "ok", res.Text)
}

func TestRemindersIsNotGrantedByDefault(t *testing.T) {
	for _, root := range []bool{true, false} {
		p, problems := PlanTools(root, nil)
		assert.Empty(t, problems)
		assert.NotContains(t, p.Harness, AllowReminders)
		p, problems = PlanTools(root, []string{AllowReminders})
		assert.Empty(t, problems)
		assert.Equal(t, []string{AllowReminders}, p.Harness)
	}
}
