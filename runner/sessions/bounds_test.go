package sessions

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
)

// agentTurn appends a turn as the loop writes it (turn.started naming
// the agent).
func agentTurn(t *testing.T, l *Log, agent, text string) {
	t.Helper()
	tid := NewTurnID()
	for _, e := range []struct {
		typ  string
		data any
	}{
		{TypeMessageReceived, MessageReceived{Text: text}},
		{TypeTurnStarted, TurnStarted{Model: "script:x", Agent: agent}},
		{TypeMessageCompleted, MessageCompleted{Text: "ok"}},
		{TypeTurnCompleted, TurnCompleted{Result: "ok", Usage: model.Usage{InputTokens: 5, OutputTokens: 1}}},
	} {
		_, err := l.Append(e.typ, tid, e.data)
		require.NoError(t, err)
	}
}

func TestCorruptMetaIsRebuilt(t *testing.T) {
	for name, damage := range map[string]func(file, id string){
		"not JSON": func(file, _ string) { require.NoError(t, os.WriteFile(file, []byte(`{"id": "ses_`), 0o644)) },
		"empty":    func(file, _ string) { require.NoError(t, os.WriteFile(file, nil, 0o644)) },
		"missing":  func(file, _ string) { require.NoError(t, os.Remove(file)) },
		"other session": func(file, _ string) {
			require.NoError(t, os.WriteFile(file, []byte(`{"id":"ses_01JAAAAAAAAAAAAAAAAAAAAAAA","agent":"x"}`), 0o644))
		},
		"zero created": func(file, id string) {
			require.NoError(t, os.WriteFile(file, []byte(fmt.Sprintf(`{"id":%q,"agent":"notes"}`, id)), 0o644))
		},
	} {
		t.Run(name, func(t *testing.T) {
			st := New(t.TempDir())
			l, err := st.Create(Meta{Agent: "notes", Model: "script:x"})
			require.NoError(t, err)
			id := l.ID()
			agentTurn(t, l, "notes", "first")
			want := l.Meta()
			require.NoError(t, l.Close())
			file := filepath.Join(st.Dir(), id, MetaFile)
			damage(file, id)

			list, err := st.List()
			require.NoError(t, err)
			require.Len(t, list, 1)
			assert.Equal(t, "notes", list[0].Agent)
			assert.Equal(t, want.Created.Truncate(1e6), list[0].Created, "the creation time from the id")
			assert.Equal(t, 1, list[0].Turns)

			_, _, warns, err := st.Read(id)
			require.NoError(t, err)
			require.Len(t, warns, 1)
			assert.Contains(t, warns[0].Message, "session.json is unusable (")
			assert.Contains(t, warns[0].Message, "rebuilt from events.ndjson")

			l2, warns, err := st.Resume(id)
			require.NoError(t, err)
			require.Len(t, warns, 1)
			require.NoError(t, l2.Close())
			var m Meta
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &m))
			assert.Equal(t, id, m.ID)
			assert.Equal(t, "notes", m.Agent)
			assert.Equal(t, "script:x", m.Model)
			assert.False(t, m.Created.IsZero())
			assert.Equal(t, want.Usage, m.Usage)
			_, warns, err = st.Resume(id)
			require.NoError(t, err)
			assert.Empty(t, warns, "rewritten on resume")
		})
	}
}

// TestUnknownEventTypeIsSkipped appends an event of a type a newer july
// might write: it is skipped with a warning, keeps its index, and the
// session goes on.
func TestUnknownEventTypeIsSkipped(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	id := l.ID()
	turn(t, l, "one", model.Usage{})
	require.NoError(t, l.Close())
	file := filepath.Join(st.Dir(), id, EventsFile)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	for i := range 2 {
		fmt.Fprintf(f, `{"type":"session.renamed","index":%d,"sessionId":%q,"at":"2026-12-02T10:00:00Z","data":{"title":5}}`+"\n", 6+i, id)
	}
	require.NoError(t, f.Close())

	l2, warns, err := st.Resume(id)
	require.NoError(t, err)
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].Message, `skipping 2 event(s) of type "session.renamed", unknown to this version of july`)
	assert.Len(t, l2.Events(), 6)
	ev, err := l2.Append(TypeMessageReceived, "t2", MessageReceived{Text: "two"})
	require.NoError(t, err)
	assert.Equal(t, int64(8), ev.Index, "after the skipped events")
	require.NoError(t, l2.Close())
	_, evs, warns, err := st.Read(id)
	require.NoError(t, err)
	assert.Len(t, warns, 1)
	assert.Len(t, evs, 7)
}

// TestMetaWriteFailure fails session.json's write after a turn (a full
// disk): the turn's events are kept, Append succeeds, the failure is a
// warning, no temporary file stays, and Resume recomputes the metadata.
func TestMetaWriteFailure(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "notes"})
	require.NoError(t, err)
	id := l.ID()
	dir := filepath.Join(st.Dir(), id)
	before, err := os.ReadFile(filepath.Join(dir, MetaFile))
	require.NoError(t, err)
	l.j.(*diskJournal).writeTemp = func(f *os.File, data []byte) error {
		f.Write(data[:len(data)/2])
		return &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	agentTurn(t, l, "notes", "first")
	warns := l.TakeWarnings()
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].Message, "writing session.json: ")
	assert.Contains(t, warns[0].Message, "no space left on device: the turn is kept in events.ndjson")
	assert.Empty(t, l.TakeWarnings())
	require.NoError(t, l.Close())
	tmps, err := filepath.Glob(filepath.Join(dir, "*.tmp"))
	require.NoError(t, err)
	assert.Empty(t, tmps, "no temporary file left")
	after, err := os.ReadFile(filepath.Join(dir, MetaFile))
	require.NoError(t, err)
	assert.Equal(t, before, after, "the old session.json stands")

	l2, _, err := st.Resume(id)
	require.NoError(t, err)
	defer l2.Close()
	assert.Equal(t, 1, l2.Meta().Turns)
	assert.Equal(t, "notes", l2.Meta().Agent)
}

// TestMetaTempNotCreatable makes the temporary file impossible to create:
// a warning names it and the turn stands.
func TestMetaTempNotCreatable(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "notes"})
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, os.Mkdir(filepath.Join(st.Dir(), l.ID(), MetaFile+".tmp"), 0o755))
	agentTurn(t, l, "notes", "first")
	warns := l.TakeWarnings()
	require.Len(t, warns, 1)
	assert.Contains(t, warns[0].Message, "writing session.json")
}

func TestMessageBound(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	defer l.Close()
	file := filepath.Join(st.Dir(), l.ID(), EventsFile)
	big := strings.Repeat("x", DefaultMaxMessageBytes+1)
	_, err = l.Append(TypeMessageReceived, "t1", MessageReceived{Text: big})
	var me *MessageTooLargeError
	require.ErrorAs(t, err, &me)
	assert.Contains(t, err.Error(), "message of 1048577 bytes is over the limit of 1048576 bytes (raise it with july run --max-message BYTES)")
	fi, err := os.Stat(file)
	require.NoError(t, err)
	assert.Zero(t, fi.Size(), "nothing written")
	_, err = l.Append(TypeMessageReceived, "t1", MessageReceived{Text: big[:DefaultMaxMessageBytes]})
	require.NoError(t, err)

	st2 := New(t.TempDir())
	st2.MaxMessageBytes = 10
	l2, err := st2.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	defer l2.Close()
	_, err = l2.Append(TypeMessageReceived, "t1", &MessageReceived{Text: "eleven byte"})
	require.ErrorAs(t, err, &me)
	assert.EqualValues(t, 10, me.Limit)
	assert.NoError(t, CheckMessage("0123456789", 10))
	assert.Error(t, CheckMessage(big, 0))
}

func TestLastMessageIsAPreview(t *testing.T) {
	st := New(t.TempDir())
	l, err := st.Create(Meta{Agent: "a"})
	require.NoError(t, err)
	text := strings.Repeat("é", 50_000)
	turn(t, l, text, model.Usage{})
	m := l.Meta()
	require.NoError(t, l.Close())
	assert.LessOrEqual(t, len(m.LastMessage), PreviewBytes)
	assert.True(t, strings.HasSuffix(m.LastMessage, "..."))
	assert.True(t, utf8.ValidString(m.LastMessage))
	data, err := os.ReadFile(filepath.Join(st.Dir(), l.ID(), MetaFile))
	require.NoError(t, err)
	assert.Less(t, len(data), 2048, "session.json holds the preview, not the message")
	list, err := st.List()
	require.NoError(t, err)
	assert.Equal(t, m.LastMessage, list[0].LastMessage)
	assert.Equal(t, "short", preview("short"))
}

// FuzzParseEvent checks the line check: it never panics, and a line it
// accepts of a known type has data that decodes into the type's struct.
func FuzzParseEvent(f *testing.F) {
	const id = "ses_01JDZQ6G8J3F5T1X9W4V2B7N0M"
	f.Add([]byte(`{"type":"message.received","index":0,"sessionId":"` + id + `","at":"2026-12-02T10:00:00Z","data":{"text":"hi"}}`))
	f.Add([]byte(`{"type":"turn.completed","index":0,"sessionId":"` + id + `","data":{"usage":"x"}}`))
	f.Add([]byte(`{"type":"x.y","index":0,"sessionId":"` + id + `","data":[1]}`))
	f.Add([]byte(`{"type":"action.result","index":0,"sessionId":"` + id + `","data":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ev, reason := parseEvent(line, 0, id)
		if reason != "" || !Known(ev.Type) {
			return
		}
		assert.NoError(t, json.Unmarshal(ev.Data, dataTypes[ev.Type]()), "accepted %q", line)
	})
}
