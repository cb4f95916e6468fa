package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

const devScript = `turns:
  - replies:
      - text: done
  - message: {contains: check}
    replies:
      - text: checked
`

// TestDevSchedule: --dev's route fires a schedule once: a task-mode
// session with the schedule's body as its prompt.
func TestDevSchedule(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: devScript, dev: true, schedules: map[string]string{
		"heartbeat.md": "---\ncron: \"0 9 * * 1-5\"\n---\n\nPost the heartbeat.\n",
	}})
	code, m := call(t, "POST", f.url+"/dev/schedules/heartbeat", "")
	require.Equal(t, http.StatusOK, code, "%v", m)
	assert.Equal(t, "heartbeat", m["scheduleId"])
	ids, _ := m["sessionIds"].([]any)
	require.Len(t, ids, 1)
	id := ids[0].(string)
	s := openStream(t, f.url+"/sessions/"+id+"/events")
	evs := s.until(sessions.TypeTurnCompleted, 0)
	assert.Equal(t, []string{"Post the heartbeat."}, texts(t, evs, sessions.TypeMessageReceived))
	code, m = call(t, "GET", f.url+"/sessions/"+id, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "task", m["mode"])
	assert.Equal(t, "schedule", m["purpose"])
	assert.Equal(t, "heartbeat", m["scheduleId"])

	code, m = call(t, "POST", f.url+"/dev/schedules/nope", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "not_found", errCode(m))
	code, m = call(t, "GET", f.url+"/schedules", "")
	require.Equal(t, http.StatusOK, code)
	assert.Len(t, m["schedules"], 1)
}

// TestReminderRoutes: a reminder made over HTTP is listed, fired by the
// dev route, and wakes its session with message.received data
// {reminderId, fireCount}; a bad one is 400.
func TestReminderRoutes(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: devScript, dev: true})
	_, m := call(t, "POST", f.url+"/sessions", `{"message":"hi"}`)
	id := m["sessionId"].(string)
	s := openStream(t, f.url+"/sessions/"+id+"/events")
	s.until(sessions.TypeTurnCompleted, 0)

	code, m := call(t, "POST", f.url+"/sessions/"+id+"/reminders", `{"delay":"2h","prompt":"check CI","purpose":"ci_recheck"}`)
	require.Equal(t, http.StatusCreated, code, "%v", m)
	rid := m["id"].(string)
	code, m = call(t, "GET", f.url+"/dev/reminders", "")
	require.Equal(t, http.StatusOK, code)
	assert.Len(t, m["reminders"], 1)
	code, m = call(t, "GET", f.url+"/sessions/"+id+"/reminders", "")
	require.Equal(t, http.StatusOK, code)
	assert.Len(t, m["reminders"], 1)

	code, m = call(t, "POST", f.url+"/dev/reminders/"+rid, "")
	require.Equal(t, http.StatusOK, code, "%v", m)
	evs := s.until(sessions.TypeTurnCompleted, 0)
	assert.Equal(t, []string{"checked"}, texts(t, evs, sessions.TypeTurnCompleted))
	var d map[string]any
	require.NoError(t, json.Unmarshal(evs[0].Data, &d))
	assert.Equal(t, rid, d["reminderId"])
	assert.Contains(t, d, "fireCount")
	assert.Contains(t, d["text"], "check CI")

	for _, body := range []string{`{"delay":"2h","every":"30m","prompt":"x"}`, `{"delay":"10ms","prompt":"x"}`, `{"until":"x","delay":"1h"}`, `nope`} {
		code, m = call(t, "POST", f.url+"/sessions/"+id+"/reminders", body)
		assert.Equal(t, http.StatusBadRequest, code, "%s: %v", body, m)
	}
	code, _ = call(t, "POST", f.url+"/sessions/"+sessions.NewID()+"/reminders", `{"delay":"2h","prompt":"x"}`)
	assert.Equal(t, http.StatusNotFound, code)
	code, _ = call(t, "POST", f.url+"/dev/reminders/rem_nope", "")
	assert.Equal(t, http.StatusNotFound, code)
}
