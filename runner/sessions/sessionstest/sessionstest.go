// Package sessionstest is the suite every sessions.Backend passes: the
// disk store and the PostgreSQL one run the same checks, through
// sessions.Store, as two processes sharing one state root would use it.
//
// Each check is a function returning what it found wrong (nil when the
// backend behaves), so a test can also run one against a backend broken
// on purpose and require that it fails ([Checks]); [Run] runs them all as
// subtests.
package sessionstest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/sessions"
)

// Open returns two stores over one fresh, empty set of sessions, as two
// processes sharing a state root have: what one writes the other reads,
// and a session one holds the other cannot. The test cleans them up.
type Open func(t *testing.T) (a, b *sessions.Store)

// Check is one rule of the suite.
type Check struct {
	Name string
	Run  func(a, b *sessions.Store) error
}

// Run runs every check against fresh stores from open.
func Run(t *testing.T, open Open) {
	for _, c := range Checks {
		t.Run(c.Name, func(t *testing.T) {
			a, b := open(t)
			if err := c.Run(a, b); err != nil {
				t.Error(err)
			}
		})
	}
}

// Checks are the suite's rules, in the order Run runs them.
var Checks = []Check{
	{"CreateAppendResume", createAppendResume},
	{"HeldElsewhere", heldElsewhere},
	{"Unknown", unknown},
	{"List", list},
	{"OpenTurnClosed", openTurnClosed},
	{"EventsFrom", eventsFrom},
	{"LogSize", logSize},
	{"MessageBound", messageBound},
	{"ReadWhileHeld", readWhileHeld},
	{"LocalDir", localDir},
}

// localDir: a session held, made or resumed, has its local directory for
// the files that are not its log.
func localDir(a, b *sessions.Store) error {
	l, err := a.Create(sessions.Meta{Agent: "suite"})
	if err != nil {
		return err
	}
	id := l.ID()
	if fi, err := os.Stat(l.Dir()); err != nil || !fi.IsDir() {
		l.Close()
		return fmt.Errorf("Create(%s): no local directory %s: %v", id, l.Dir(), err)
	}
	if err := l.Close(); err != nil {
		return err
	}
	l, _, err = b.Resume(id)
	if err != nil {
		return err
	}
	defer l.Close()
	if fi, err := os.Stat(l.Dir()); err != nil || !fi.IsDir() {
		return fmt.Errorf("Resume(%s): no local directory %s: %v", id, l.Dir(), err)
	}
	return nil
}

// turn appends one whole turn.
func turn(l *sessions.Log, text string, usage model.Usage) error {
	tid := sessions.NewTurnID()
	for _, e := range []struct {
		typ  string
		data any
	}{
		{sessions.TypeMessageReceived, sessions.MessageReceived{Text: text}},
		{sessions.TypeTurnStarted, sessions.TurnStarted{Model: "script:x", Agent: "suite"}},
		{sessions.TypeActionsRequested, sessions.ActionsRequested{Calls: []sessions.Call{{CallID: "c1", ToolName: "Read", Args: json.RawMessage(`{"path":"/a"}`)}}}},
		{sessions.TypeActionResult, sessions.ActionResult{CallID: "c1", ToolName: "Read", Output: "1\thi <&>"}},
		{sessions.TypeMessageCompleted, sessions.MessageCompleted{Text: "done: " + text}},
		{sessions.TypeTurnCompleted, sessions.TurnCompleted{Result: "done: " + text, Usage: usage}},
	} {
		if _, err := l.Append(e.typ, tid, e.data); err != nil {
			return err
		}
	}
	return nil
}

func checkIndexes(evs []sessions.Event, id string, n int) error {
	if len(evs) != n {
		return fmt.Errorf("%d events, want %d", len(evs), n)
	}
	for i, ev := range evs {
		if ev.Index != int64(i) || ev.SessionID != id {
			return fmt.Errorf("event %d: index %d, session %q", i, ev.Index, ev.SessionID)
		}
	}
	return nil
}

func createAppendResume(a, b *sessions.Store) error {
	l, err := a.Create(sessions.Meta{Agent: "suite", Model: "script:x"})
	if err != nil {
		return err
	}
	id := l.ID()
	if !sessions.ValidID(id) {
		return fmt.Errorf("Create made id %q", id)
	}
	if err := turn(l, "first", model.Usage{InputTokens: 10, OutputTokens: 2}); err != nil {
		return err
	}
	if err := turn(l, "second", model.Usage{InputTokens: 20, OutputTokens: 3}); err != nil {
		return err
	}
	want := l.Events()
	if err := l.Close(); err != nil {
		return err
	}
	// The other process continues it.
	l2, warns, err := b.Resume(id)
	if err != nil {
		return fmt.Errorf("Resume in the other store: %w", err)
	}
	defer l2.Close()
	if len(warns) > 0 {
		return fmt.Errorf("Resume warned: %v", warns)
	}
	got := l2.Events()
	if err := checkIndexes(got, id, 12); err != nil {
		return fmt.Errorf("resumed: %w", err)
	}
	for i := range got {
		if got[i].Type != want[i].Type || string(got[i].Data) != string(want[i].Data) || !got[i].At.Equal(want[i].At) {
			return fmt.Errorf("resumed event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	m := l2.Meta()
	if m.Turns != 2 || m.Usage.InputTokens != 30 || m.LastMessage != "second" || m.Agent != "suite" || m.Model != "script:x" {
		return fmt.Errorf("resumed meta = %+v", m)
	}
	if err := turn(l2, "third", model.Usage{}); err != nil {
		return err
	}
	if got := l2.Events(); len(got) != 18 || got[17].Index != 17 {
		return fmt.Errorf("after a third turn: %d events", len(got))
	}
	return nil
}

func heldElsewhere(a, b *sessions.Store) error {
	l, err := a.Create(sessions.Meta{Agent: "suite"})
	if err != nil {
		return err
	}
	if _, _, err := b.Resume(l.ID()); !errors.Is(err, sessions.ErrInUse) {
		l.Close()
		return fmt.Errorf("Resume of a session the other store holds: %v, want ErrInUse", err)
	} else if err.Error() != "session in use: "+l.ID() {
		l.Close()
		return fmt.Errorf("Resume of a held session: %q, want %q", err, "session in use: "+l.ID())
	}
	if _, _, err := a.Resume(l.ID()); !errors.Is(err, sessions.ErrInUse) {
		l.Close()
		return fmt.Errorf("a second Resume in the holding store: %v, want ErrInUse", err)
	}
	if err := l.Close(); err != nil {
		return err
	}
	l2, _, err := b.Resume(l.ID())
	if err != nil {
		return fmt.Errorf("Resume after Close: %w", err)
	}
	return l2.Close()
}

func unknown(a, b *sessions.Store) error {
	for _, id := range []string{"ses_01JAAAAAAAAAAAAAAAAAAAAAAA", "../../etc", "nope", ""} {
		if _, _, err := a.Resume(id); !errors.Is(err, sessions.ErrUnknown) {
			return fmt.Errorf("Resume(%q) = %v, want ErrUnknown", id, err)
		}
		if _, _, _, err := a.Read(id); !errors.Is(err, sessions.ErrUnknown) {
			return fmt.Errorf("Read(%q) = %v, want ErrUnknown", id, err)
		}
		if err := a.Exists(id); !errors.Is(err, sessions.ErrUnknown) {
			return fmt.Errorf("Exists(%q) = %v, want ErrUnknown", id, err)
		}
		if _, err := a.EventsFrom(id, 1); !errors.Is(err, sessions.ErrUnknown) {
			return fmt.Errorf("EventsFrom(%q) = %v, want ErrUnknown", id, err)
		}
	}
	return nil
}

func list(a, b *sessions.Store) error {
	if l, err := a.List(); err != nil || len(l) != 0 {
		return fmt.Errorf("List of no sessions = %v, %v", l, err)
	}
	var ids []string
	for i := range 3 {
		l, err := a.Create(sessions.Meta{Agent: "suite"})
		if err != nil {
			return err
		}
		if err := turn(l, fmt.Sprintf("m%d", i), model.Usage{OutputTokens: 1}); err != nil {
			return err
		}
		ids = append(ids, l.ID())
		if i == 2 {
			// A turn under way: its totals come from the events.
			if _, err := l.Append(sessions.TypeMessageReceived, "turn_x", sessions.MessageReceived{Text: "running"}); err != nil {
				return err
			}
			if _, err := l.Append(sessions.TypeTurnStarted, "turn_x", sessions.TurnStarted{}); err != nil {
				return err
			}
			if !b.Stale(l.ID()) {
				return fmt.Errorf("Stale of a session with a turn under way = false")
			}
			defer l.Close()
		} else {
			// (Stale may say true here: it is a hint that makes List read
			// the events, and the disk's file times are coarse.)
			l.Close()
		}
	}
	got, err := b.List()
	if err != nil {
		return err
	}
	var gotIDs []string
	for _, m := range got {
		gotIDs = append(gotIDs, m.ID)
	}
	if !slices.Equal(gotIDs, ids) {
		return fmt.Errorf("List ids = %v, want %v (oldest first)", gotIDs, ids)
	}
	if got[0].Turns != 1 || got[0].LastMessage != "m0" || got[0].Created.IsZero() {
		return fmt.Errorf("List[0] = %+v", got[0])
	}
	if got[2].Turns != 2 || got[2].LastMessage != "running" {
		return fmt.Errorf("List of a session with a turn under way = %+v, want 2 turns, last message running", got[2])
	}
	return nil
}

func openTurnClosed(a, b *sessions.Store) error {
	l, err := a.Create(sessions.Meta{Agent: "suite"})
	if err != nil {
		return err
	}
	l.Append(sessions.TypeMessageReceived, "turn_1", sessions.MessageReceived{Text: "hi"})
	l.Append(sessions.TypeTurnStarted, "turn_1", sessions.TurnStarted{})
	l.Close() // the process "dies" mid-turn
	l2, warns, err := b.Resume(l.ID())
	if err != nil {
		return err
	}
	defer l2.Close()
	evs := l2.Events()
	last := evs[len(evs)-1]
	var d sessions.TurnFailed
	json.Unmarshal(last.Data, &d)
	if last.Type != sessions.TypeTurnFailed || last.TurnID != "turn_1" || d.Message != sessions.MessageInterrupted || last.Index != 2 {
		return fmt.Errorf("last event after Resume = %+v, want turn.failed %q at index 2", last, sessions.MessageInterrupted)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Message, "recorded it as interrupted") {
		return fmt.Errorf("Resume warnings = %v", warns)
	}
	return nil
}

func eventsFrom(a, b *sessions.Store) error {
	l, err := a.Create(sessions.Meta{Agent: "suite"})
	if err != nil {
		return err
	}
	defer l.Close()
	if err := turn(l, "one", model.Usage{}); err != nil {
		return err
	}
	for _, from := range []int64{0, 1, 4, 6, 9} {
		evs, err := b.EventsFrom(l.ID(), from)
		if err != nil {
			return err
		}
		want := max(0, 6-from)
		if int64(len(evs)) != want || (want > 0 && evs[0].Index != from) {
			return fmt.Errorf("EventsFrom(%d): %d events, want %d from index %d", from, len(evs), want, from)
		}
	}
	return nil
}

// logSize: the log's size, as another process sees it, moves with every
// event appended and with nothing else (session.json written at a turn's
// end, a read); an unknown session is an error.
func logSize(a, b *sessions.Store) error {
	l, err := a.Create(sessions.Meta{Agent: "suite"})
	if err != nil {
		return err
	}
	defer l.Close()
	last, err := b.LogSize(l.ID())
	if err != nil {
		return fmt.Errorf("LogSize of a new session: %w", err)
	}
	for i := range 3 {
		if err := turn(l, fmt.Sprint("turn ", i), model.Usage{}); err != nil {
			return err
		}
		n, err := b.LogSize(l.ID())
		if err != nil {
			return err
		}
		if n <= last {
			return fmt.Errorf("LogSize after turn %d = %d, not past %d", i, n, last)
		}
		if _, _, _, err := b.Read(l.ID()); err != nil {
			return err
		}
		if again, err := b.LogSize(l.ID()); err != nil || again != n {
			return fmt.Errorf("LogSize with nothing appended = %d (%v), want %d", again, err, n)
		}
		last = n
	}
	if _, err := b.LogSize(sessions.NewID()); err == nil {
		return fmt.Errorf("LogSize of an unknown session: no error")
	}
	return nil
}

func messageBound(a, b *sessions.Store) error {
	a.MaxMessageBytes = 10
	l, err := a.Create(sessions.Meta{Agent: "suite"})
	if err != nil {
		return err
	}
	defer l.Close()
	var tooLarge *sessions.MessageTooLargeError
	if _, err := l.Append(sessions.TypeMessageReceived, "t", sessions.MessageReceived{Text: "01234567890"}); !errors.As(err, &tooLarge) {
		return fmt.Errorf("Append of 11 bytes over a 10-byte bound = %v", err)
	}
	if evs, err := b.EventsFrom(l.ID(), 0); err != nil || len(evs) != 0 {
		return fmt.Errorf("after a refused message the log has %d events (%v), want none", len(evs), err)
	}
	return nil
}

func readWhileHeld(a, b *sessions.Store) error {
	l, err := a.Create(sessions.Meta{Agent: "suite"})
	if err != nil {
		return err
	}
	defer l.Close()
	if err := turn(l, "one", model.Usage{InputTokens: 4}); err != nil {
		return err
	}
	meta, evs, _, err := b.Read(l.ID())
	if err != nil {
		return fmt.Errorf("Read of a session the other store holds: %w", err)
	}
	if err := checkIndexes(evs, l.ID(), 6); err != nil {
		return err
	}
	if meta.Turns != 1 || meta.Usage.InputTokens != 4 {
		return fmt.Errorf("Read meta = %+v", meta)
	}
	return nil
}
