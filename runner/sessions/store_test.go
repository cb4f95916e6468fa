package sessions

import (
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

	"github.com/julyfs/julyfs/runner/model"
)

// turn appends one whole turn to l.
func turn(t testing.TB, l *Log, text string, usage model.Usage) {
	t.Helper()
	tid := NewTurnID()
	for _, e := range []struct {
		typ  string
		data any
	}{
		{TypeMessageReceived, MessageReceived{Text: text}},
		{TypeTurnStarted, TurnStarted{Model: "script:x"}},
		{TypeActionsRequested, ActionsRequested{Calls: []Call{{CallID: "c1", ToolName: "Read", Args: json.RawMessage(`{"path":"/a"}`)}}}},
		{TypeActionResult, ActionResult{CallID: "c1", ToolName: "Read", Output: "1\thi"}},
		{TypeMessageCompleted, MessageCompleted{Text: "done: " + text}},
		{TypeTurnCompleted, TurnCompleted{Result: "done: " + text, Usage: usage}},
	} {
		_, err := l.Append(e.typ, tid, e.data)
		require.NoError(t, err)
	}
}

func TestCreateAppendResume(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "notes", Model: "script:x"})
	require.NoError(t, err)
	id := l.ID()
	assert.True(t, ValidID(id), id)
	turn(t, l, "first", model.Usage{InputTokens: 10, OutputTokens: 2})
	turn(t, l, "second", model.Usage{InputTokens: 20, OutputTokens: 3})
	require.NoError(t, l.Close())

	l2, warns, err := st.Resume(id)
	require.NoError(t, err)
	defer l2.Close()
	assert.Empty(t, warns)
	evs := l2.Events()
	require.Len(t, evs, 12)
	for i, ev := range evs {
		assert.Equal(t, int64(i), ev.Index)
		assert.Equal(t, id, ev.SessionID)
	}
	m := l2.Meta()
	assert.Equal(t, 2, m.Turns)
	assert.Equal(t, model.Usage{InputTokens: 30, OutputTokens: 5}, m.Usage)
	assert.Equal(t, "second", m.LastMessage)
	assert.Equal(t, "notes", m.Agent)

	// session.json is current after each turn.
	list, err := st.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 2, list[0].Turns)
	assert.Equal(t, int64(30), list[0].Usage.InputTokens)

	// Appending continues the index.
	ev, err := l2.Append(TypeMessageReceived, "t", MessageReceived{Text: "third"})
	require.NoError(t, err)
	assert.Equal(t, int64(12), ev.Index)
}

func TestLock(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	_, _, err = st.Resume(l.ID())
	require.ErrorIs(t, err, ErrInUse)
	assert.Equal(t, "session in use: "+l.ID(), err.Error())
	require.NoError(t, l.Close())
	l2, _, err := st.Resume(l.ID())
	require.NoError(t, err)
	l2.Close()
}

func TestUnknown(t *testing.T) {
	st := New(t.TempDir())
	for _, id := range []string{"ses_01JAAAAAAAAAAAAAAAAAAAAAAA", "../../etc", "nope"} {
		_, _, err := st.Resume(id)
		assert.ErrorIs(t, err, ErrUnknown, id)
		_, _, _, err = st.Read(id)
		assert.ErrorIs(t, err, ErrUnknown, id)
	}
}

func TestTornLastLine(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	turn(t, l, "one", model.Usage{})
	require.NoError(t, l.Close())
	file := filepath.Join(st.Dir(), l.ID(), EventsFile)
	before, err := os.ReadFile(file)
	require.NoError(t, err)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"message.rec`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	_, evs, warns, err := st.Read(l.ID())
	require.NoError(t, err)
	assert.Len(t, evs, 6)
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].Message, "events.ndjson:7: ignoring a torn last line (20 bytes")

	l2, warns, err := st.Resume(l.ID())
	require.NoError(t, err)
	require.Len(t, warns, 1)
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the torn tail is cut, the rest untouched")
	ev, err := l2.Append(TypeMessageReceived, "t2", MessageReceived{Text: "two"})
	require.NoError(t, err)
	assert.Equal(t, int64(6), ev.Index)
	require.NoError(t, l2.Close())
	_, evs, warns, err = st.Read(l.ID())
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.Len(t, evs, 7)
}

func TestCorruptMiddleLine(t *testing.T) {
	for name, mutate := range map[string]func(lines []string) []string{
		"not JSON":    func(ls []string) []string { ls[2] = `{"type":`; return ls },
		"wrong index": func(ls []string) []string { ls[2] = strings.Replace(ls[2], `"index":2`, `"index":7`, 1); return ls },
		"other session": func(ls []string) []string {
			ls[2] = strings.Replace(ls[2], `"sessionId":"ses_`, `"sessionId":"ses_X`, 1)
			return ls
		},
		"no type": func(ls []string) []string {
			ls[2] = strings.Replace(ls[2], `"type":"actions.requested"`, `"type":""`, 1)
			return ls
		},
		"dropped line": func(ls []string) []string { return append(ls[:2], ls[3:]...) },
		"ill-typed data": func(ls []string) []string {
			ls[2] = strings.Replace(ls[2], `"data":{"calls":[`, `"data":{"calls":5,"x":[`, 1)
			return ls
		},
		"ill-typed text": func(ls []string) []string {
			ls[0] = strings.Replace(ls[0], `"data":{"text":"one"}`, `"data":{"text":1}`, 1)
			return ls
		},
		"data not an object": func(ls []string) []string {
			ls[1] = strings.Replace(ls[1], `"data":{"model":"script:x"}`, `"data":null`, 1)
			return ls
		},
		"complete bad end": func(ls []string) []string { ls[len(ls)-2] = "garbage\n"; return ls },
	} {
		t.Run(name, func(t *testing.T) {
			st := New(t.TempDir())
			l, err := st.Create(Meta{Agent: "a"})
			require.NoError(t, err)
			turn(t, l, "one", model.Usage{})
			require.NoError(t, l.Close())
			file := filepath.Join(st.Dir(), l.ID(), EventsFile)
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			lines := mutate(strings.SplitAfter(string(data), "\n"))
			bad := []byte(strings.Join(lines, ""))
			require.NoError(t, os.WriteFile(file, bad, 0o644))

			_, _, err = st.Resume(l.ID())
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			assert.NotEqual(t, string(data), string(bad), "the mutation changed the log")
			assert.Contains(t, err.Error(), "events.ndjson:")
			assert.Contains(t, err.Error(), "refusing to continue session "+l.ID())
			after, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, bad, after, "a corrupt log is never rewritten")
			// The lock was released: the error is the corruption again.
			_, _, err = st.Resume(l.ID())
			assert.ErrorAs(t, err, &ce)
		})
	}
}

func TestOpenTurnClosedOnResume(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	_, err = l.Append(TypeMessageReceived, "t1", MessageReceived{Text: "x"})
	require.NoError(t, err)
	_, err = l.Append(TypeTurnStarted, "t1", TurnStarted{})
	require.NoError(t, err)
	require.NoError(t, l.Close())
	l2, warns, err := st.Resume(l.ID())
	require.NoError(t, err)
	defer l2.Close()
	require.Len(t, warns, 1)
	evs := l2.Events()
	require.Len(t, evs, 3)
	assert.Equal(t, TypeTurnFailed, evs[2].Type)
	assert.Equal(t, "t1", evs[2].TurnID)
	assert.JSONEq(t, `{"message":"turn interrupted"}`, string(evs[2].Data))
}

func TestUnwritableStateRoot(t *testing.T) {
	// Tests run as root, who writes anywhere: a file where the state root
	// should be is what fails.
	root := filepath.Join(t.TempDir(), "state")
	require.NoError(t, os.WriteFile(root, []byte("a file"), 0o644))
	_, err := New(root).Create(Meta{})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("state root %s is not writable: ", root)), err.Error())
	assert.False(t, errors.Is(err, ErrInUse))
}

// FuzzLoad: whatever events.ndjson holds, reading it never panics, and a
// session it refuses is refused with a *CorruptError naming a line.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"type":"message.received","index":0,"sessionId":"ses_01M8QZHK273F1479J6H85C5VXP","at":"2026-12-01T04:59:24Z","data":{"text":"hi"}}` + "\n"))
	f.Add([]byte("garbage\n{}\n"))
	f.Add([]byte(`{"type":"turn.started","index":0`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const id = "ses_01M8QZHK273F1479J6H85C5VXP"
		dir := t.TempDir()
		st := New(dir)
		sdir := filepath.Join(st.Dir(), id)
		require.NoError(t, os.MkdirAll(sdir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(sdir, EventsFile), data, 0o644))
		_, evs, _, err := st.Read(id)
		if err != nil {
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			assert.Positive(t, ce.Line)
			return
		}
		for i, ev := range evs {
			assert.Equal(t, int64(i), ev.Index)
		}
	})
}

func TestListRecomputesAfterACrash(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	turn(t, l, "one", model.Usage{InputTokens: 5})
	// A second turn that never ends: session.json is not rewritten.
	_, err = l.Append(TypeMessageReceived, "t2", MessageReceived{Text: "two"})
	require.NoError(t, err)
	_, err = l.Append(TypeTurnStarted, "t2", TurnStarted{})
	require.NoError(t, err)
	// Make sure the events are seen as newer than session.json.
	metaFile := filepath.Join(st.Dir(), l.ID(), MetaFile)
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(metaFile, old, old))
	list, err := st.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 2, list[0].Turns)
	assert.Equal(t, "two", list[0].LastMessage)
	assert.Equal(t, "a", list[0].Agent)
}

// goldenID is the session in testdata/v1: the README's demo turn, then a
// turn the script has no reply for. The files are frozen: a change to the
// on-disk format that cannot read them is a break.
const goldenID = "ses_01M8R15GBYMZFE8TYJHBP6M39Q"

func TestGoldenSessionV1(t *testing.T) {
	st := New("testdata/v1")
	list, err := st.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, goldenID, list[0].ID)
	assert.Equal(t, "notes", list[0].Agent)
	assert.Equal(t, 2, list[0].Turns)
	assert.Equal(t, "And shorter?", list[0].LastMessage)

	meta, evs, warns, err := st.Read(goldenID)
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.Equal(t, list[0].Usage, meta.Usage)
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	assert.Equal(t, []string{
		"message.received", "turn.started",
		"actions.requested", "action.result", "actions.requested", "action.result", "actions.requested", "action.result",
		"message.completed", "turn.completed",
		"message.received", "turn.started", "turn.failed",
	}, types)
	var failed TurnFailed
	require.NoError(t, json.Unmarshal(evs[12].Data, &failed))
	assert.Contains(t, failed.Message, "the run is on turn 2 but the script has 1")
}
