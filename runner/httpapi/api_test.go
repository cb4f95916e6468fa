package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
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
)

// fixture is one agent served over httptest with a scripted model.
type fixture struct {
	url   string
	host  *host.Host
	store *sessions.Store
	api   *Server
	dir   string
}

type fixtureOptions struct {
	script     string
	queueLimit int
	token      string
	dev        bool
	schedules  map[string]string // file name → contents
	heartbeat  time.Duration
	page       http.Handler
	maxFile    int64
	maxEntries int
}

const agentYAML = "name: t\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"

func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(agentYAML), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "instructions.md"), []byte("Be brief.\n"), 0o644))
	if len(fo.schedules) > 0 {
		require.NoError(t, os.Mkdir(filepath.Join(dir, "schedules"), 0o755))
		for name, body := range fo.schedules {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "schedules", name), []byte(body), 0o644))
		}
	}
	a, err := runner.Load(dir)
	require.NoError(t, err)
	m, err := script.Parse([]byte(fo.script), "test.script.yaml")
	require.NoError(t, err)
	state := filepath.Join(dir, ".july")
	st := sessions.New(state)
	h, err := host.New(host.Options{Agent: a, Store: st, Model: m, QueueLimit: fo.queueLimit, Logf: t.Logf})
	require.NoError(t, err)
	ag := Agent{Host: h, Tools: []string{"Read"}}
	if fo.dev {
		scheds, err := schedule.Load(dir)
		require.NoError(t, err)
		so := schedule.Options{StateRoot: state, Sink: h, Clock: schedule.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Logf: t.Logf}
		ag.Scheduler, err = schedule.NewScheduler(scheds, so)
		require.NoError(t, err)
		ag.Reminders, err = schedule.OpenReminders(so)
		require.NoError(t, err)
		h.UseReminders(ag.Reminders)
		t.Cleanup(func() { ag.Scheduler.Stop(); ag.Reminders.Stop() })
	}
	api, err := New(Options{Agents: []Agent{ag}, Token: fo.token, Dev: fo.dev, Heartbeat: fo.heartbeat, Page: fo.page, MaxFileBytes: fo.maxFile, MaxTreeEntries: fo.maxEntries})
	require.NoError(t, err)
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Interrupt whatever still runs, so no turn outlives the test.
		cctx, ccancel := context.WithCancel(ctx)
		ccancel()
		h.Shutdown(cctx, 10*time.Second)
		api.CloseStreams()
		hs.Close()
	})
	return &fixture{url: hs.URL + "/t/v1", host: h, store: st, api: api, dir: dir}
}

// call sends a request and decodes the JSON answer.
func call(t *testing.T, method, url, body string, header ...string) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m), "body %q", data)
	return resp.StatusCode, m
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// stream is an open events stream.
type stream struct {
	resp *http.Response
	sc   *bufio.Scanner
	t    *testing.T
}

func openStream(t *testing.T, url string, header ...string) *stream {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	s := &stream{resp: resp, sc: sc, t: t}
	t.Cleanup(s.close)
	return s
}

func (s *stream) close() { s.resp.Body.Close() }

// next returns the next event and its id: line (heartbeats skipped), or
// fails after a bounded wait.
func (s *stream) next() (int64, sessions.Event) {
	s.t.Helper()
	type res struct {
		id int64
		ev sessions.Event
		ok bool
		hb bool
	}
	ch := make(chan res, 1)
	go func() {
		var r res
		for s.sc.Scan() {
			line := s.sc.Text()
			switch {
			case strings.HasPrefix(line, ":"):
				r.hb = true
			case strings.HasPrefix(line, "id: "):
				r.id, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "data: "):
				if json.Unmarshal([]byte(line[6:]), &r.ev) == nil {
					r.ok = true
				}
			case line == "" && r.ok:
				ch <- r
				return
			}
		}
		ch <- r
	}()
	select {
	case r := <-ch:
		require.True(s.t, r.ok, "the stream ended: %v", s.sc.Err())
		return r.id, r.ev
	case <-time.After(30 * time.Second):
		s.close()
		require.FailNow(s.t, "no event within 30 s")
	}
	return 0, sessions.Event{}
}

// until reads events until one of type typ (after skip of them) and
// returns all read.
func (s *stream) until(typ string, skip int) []sessions.Event {
	s.t.Helper()
	var out []sessions.Event
	for {
		id, ev := s.next()
		require.Equal(s.t, ev.Index, id, "id: is the event index")
		out = append(out, ev)
		if ev.Type == typ {
			if skip == 0 {
				return out
			}
			skip--
		}
	}
}

func texts(t *testing.T, evs []sessions.Event, typ string) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type != typ {
			continue
		}
		var d struct {
			Text    string `json:"text"`
			Message string `json:"message"`
			Result  string `json:"result"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		out = append(out, d.Text+d.Message+d.Result)
	}
	return out
}

const echoScript = `turns:
  - replies:
      - calls:
          - {tool: Read, args: {path: /a.txt}}
      - expect:
          - {tool: Read, contains: hi}
        text: one
  - replies:
      - text: two
  - replies:
      - text: three
`

// TestCreateSendEvents: a session is created with its first turn running,
// a second message continues it, and the events stream carries both
// turns; get and list report it.
func TestCreateSendEvents(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: echoScript})
	code, m := call(t, "POST", f.url+"/sessions", `{"message":"first"}`)
	require.Equal(t, http.StatusCreated, code, "%v", m)
	id, _ := m["sessionId"].(string)
	turn, _ := m["turnId"].(string)
	require.True(t, sessions.ValidID(id), id)
	require.True(t, strings.HasPrefix(turn, "turn_"), turn)

	s := openStream(t, f.url+"/sessions/"+id+"/events")
	evs := s.until(sessions.TypeTurnCompleted, 0)
	assert.Equal(t, turn, evs[0].TurnID, "the turn id given out is the turn's")
	assert.Equal(t, []string{"one"}, texts(t, evs, sessions.TypeTurnCompleted))

	code, m = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"second"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", m)
	evs = s.until(sessions.TypeTurnCompleted, 0)
	assert.Equal(t, []string{"second"}, texts(t, evs, sessions.TypeMessageReceived))
	assert.Equal(t, []string{"two"}, texts(t, evs, sessions.TypeTurnCompleted))

	waitIdle(t, f, id)
	code, m = call(t, "GET", f.url+"/sessions/"+id, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, 2.0, m["turns"])
	assert.Equal(t, "idle", m["state"])
	assert.Equal(t, "t", m["agent"])
	code, m = call(t, "GET", f.url+"/sessions", "")
	require.Equal(t, http.StatusOK, code)
	list, _ := m["sessions"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, id, list[0].(map[string]any)["id"])

	code, m = call(t, "GET", f.url+"/info", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, map[string]any{"agent": "t", "model": "script:test.script.yaml", "tools": []any{"Read"}, "result": false}, m)
}

// waitIdle waits (bounded) until the host has released session id.
func waitIdle(t *testing.T, f *fixture, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := f.host.Get(id)
		require.NoError(t, err)
		if info.State == host.StateIdle {
			if l, _, err := f.store.Resume(id); err == nil {
				l.Close()
				return
			}
		}
		require.True(t, time.Now().Before(deadline), "session %s still busy after 30 s", id)
		time.Sleep(10 * time.Millisecond)
	}
}

const slowScript = `turns:
  - replies:
      - sleep: 10m
        text: never
  - message: {contains: a}
    replies:
      - text: A
  - message: {contains: b}
    replies:
      - text: B
  - replies:
      - text: C
`

// TestQueueFIFOAndFull: messages to a busy session wait in order; one
// over the limit is 429; cancel ends the running turn as interrupted and
// the queued ones then run in order; the session stays usable.
func TestQueueFIFOAndFull(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: slowScript, queueLimit: 2})
	_, m := call(t, "POST", f.url+"/sessions", `{"message":"slow"}`)
	id := m["sessionId"].(string)
	first := m["turnId"].(string)
	s := openStream(t, f.url+"/sessions/"+id+"/events")
	s.until(sessions.TypeTurnStarted, 0)

	code, m := call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"a"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", m)
	code, _ = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"b"}`)
	require.Equal(t, http.StatusAccepted, code)
	code, m = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"c"}`)
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.Equal(t, "queue_full", errCode(m))
	assert.Contains(t, m["error"].(map[string]any)["message"], "2 messages waiting")

	code, m = call(t, "GET", f.url+"/sessions/"+id, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "running", m["state"])
	assert.Equal(t, 2.0, m["queued"])

	code, m = call(t, "POST", f.url+"/sessions/"+id+"/cancel", "")
	require.Equal(t, http.StatusAccepted, code, "%v", m)
	assert.Equal(t, first, m["turnId"])
	evs := s.until(sessions.TypeTurnCompleted, 1)
	assert.Equal(t, []string{sessions.MessageInterrupted}, texts(t, evs, sessions.TypeTurnFailed))
	assert.Equal(t, []string{"a", "b"}, texts(t, evs, sessions.TypeMessageReceived), "FIFO")
	assert.Equal(t, []string{"A", "B"}, texts(t, evs, sessions.TypeTurnCompleted))
	// Never interleaved: each turn's events are contiguous.
	seen := map[string]bool{}
	last := ""
	for _, ev := range evs {
		if ev.TurnID != last {
			require.False(t, seen[ev.TurnID], "turn %s interleaved", ev.TurnID)
			seen[ev.TurnID], last = true, ev.TurnID
		}
	}

	waitIdle(t, f, id)
	code, m = call(t, "POST", f.url+"/sessions/"+id+"/cancel", "")
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "not_running", errCode(m))
	code, _ = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"again"}`)
	require.Equal(t, http.StatusAccepted, code)
	evs = s.until(sessions.TypeTurnCompleted, 0)
	assert.Equal(t, []string{"C"}, texts(t, evs, sessions.TypeTurnCompleted))
}

const stepsScript = `turns:
  - replies:
      - calls: [{tool: Read, args: {path: /a.txt}}]
      - sleep: 20ms
        calls: [{tool: Read, args: {path: /a.txt}}]
      - sleep: 20ms
        calls: [{tool: Read, args: {path: /a.txt}}]
      - sleep: 20ms
        calls: [{tool: Read, args: {path: /a.txt}}]
      - sleep: 20ms
        text: done
`

// TestEventsResume: a stream dropped mid-turn and reopened with
// Last-Event-ID (or ?after=) gives every event once: no gap, no repeat.
func TestEventsResume(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: stepsScript})
	_, m := call(t, "POST", f.url+"/sessions", `{"message":"go"}`)
	id := m["sessionId"].(string)
	s := openStream(t, f.url+"/sessions/"+id+"/events")
	var got []sessions.Event
	for range 4 {
		_, ev := s.next()
		got = append(got, ev)
	}
	s.close() // dropped mid-turn
	last := got[len(got)-1].Index
	s2 := openStream(t, f.url+"/sessions/"+id+"/events", "Last-Event-ID", strconv.FormatInt(last, 10))
	got = append(got, s2.until(sessions.TypeTurnCompleted, 0)...)
	for i, ev := range got {
		require.Equal(t, int64(i), ev.Index, "event %d", i)
	}
	_, all, _, err := f.store.Read(id)
	require.NoError(t, err)
	require.Len(t, got, len(all))

	// ?after=N from a finished session: the rest of the log.
	s3 := openStream(t, f.url+"/sessions/"+id+"/events?after=5")
	rest := s3.until(sessions.TypeTurnCompleted, 0)
	assert.Equal(t, int64(6), rest[0].Index)
	assert.Len(t, rest, len(all)-6)

	code, m := call(t, "GET", f.url+"/sessions/"+id+"/events?after=x", "")
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, "bad_request", errCode(m))
}

// TestHeartbeat: an idle stream gets comment lines.
func TestHeartbeat(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: echoScript, heartbeat: 20 * time.Millisecond})
	_, m := call(t, "POST", f.url+"/sessions", `{"message":"x"}`)
	s := openStream(t, f.url+"/sessions/"+m["sessionId"].(string)+"/events?after=100")
	done := make(chan bool, 1)
	go func() {
		for s.sc.Scan() {
			if s.sc.Text() == ": heartbeat" {
				done <- true
				return
			}
		}
		done <- false
	}()
	select {
	case ok := <-done:
		assert.True(t, ok)
	case <-time.After(30 * time.Second):
		require.FailNow(t, "no heartbeat within 30 s")
	}
}

// TestBadRequests: each bad input is its JSON error with its status, and
// the server keeps serving.
func TestBadRequests(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: echoScript})
	unknown := sessions.NewID()
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/sessions", `not json`, 400, "bad_request"},
		{"POST", "/sessions", `{"message":""}`, 400, "bad_request"},
		{"POST", "/sessions", `{}`, 400, "bad_request"},
		{"POST", "/sessions", `{"message":"x","extra":1}`, 400, "bad_request"},
		{"POST", "/sessions", `{"message":"x"} {}`, 400, "bad_request"},
		{"POST", "/sessions", `{"message":"` + strings.Repeat("x", DefaultMaxBodyBytes) + `"}`, 413, "body_too_large"},
		{"GET", "/sessions/" + unknown, "", 404, "not_found"},
		{"GET", "/sessions/..%2Fx", "", 404, "not_found"},
		{"GET", "/sessions/ses_..%2F..%2Fetc", "", 404, "not_found"},
		{"POST", "/sessions/" + unknown + "/messages", `{"message":"x"}`, 404, "not_found"},
		{"POST", "/sessions/..%2Fx/messages", `{"message":"x"}`, 404, "not_found"},
		{"POST", "/sessions/" + unknown + "/cancel", "", 404, "not_found"},
		{"GET", "/sessions/" + unknown + "/events", "", 404, "not_found"},
		{"GET", "/nothing", "", 404, "not_found"},
		{"POST", "/dev/schedules/x", "", 404, "not_found"},
	}
	for _, c := range cases {
		code, m := call(t, c.method, f.url+c.path, c.body)
		assert.Equal(t, c.status, code, "%s %s: %v", c.method, c.path, m)
		assert.Equal(t, c.code, errCode(m), "%s %s", c.method, c.path)
		assert.NotEmpty(t, m["error"].(map[string]any)["message"])
	}
	code, _ := call(t, "GET", f.url+"/info", "")
	assert.Equal(t, http.StatusOK, code)
}

// TestSessionInUse: a session another process holds is 409 for a
// message; released, it is served.
func TestSessionInUse(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: echoScript})
	_, m := call(t, "POST", f.url+"/sessions", `{"message":"x"}`)
	id := m["sessionId"].(string)
	waitIdle(t, f, id)
	l, _, err := f.store.Resume(id) // as july run --session would
	require.NoError(t, err)
	code, m := call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"y"}`)
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "session_in_use", errCode(m))
	require.NoError(t, l.Close())
	code, m = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"y"}`)
	assert.Equal(t, http.StatusAccepted, code, "%v", m)
}

// TestModelFailsMidTurn: a model error mid-turn is turn.failed in the
// log; the server keeps serving and the session stays usable.
func TestModelFailsMidTurn(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: `turns:
  - replies:
      - calls: [{tool: Read, args: {path: /a.txt}}]
      - expect: [{tool: Read, contains: "not there"}]
        text: never
  - replies:
      - text: recovered
`})
	_, m := call(t, "POST", f.url+"/sessions", `{"message":"x"}`)
	id := m["sessionId"].(string)
	s := openStream(t, f.url+"/sessions/"+id+"/events")
	evs := s.until(sessions.TypeTurnFailed, 0)
	msgs := texts(t, evs, sessions.TypeTurnFailed)
	require.Len(t, msgs, 1)
	assert.Contains(t, msgs[0], "not there")
	code, _ := call(t, "GET", f.url+"/info", "")
	assert.Equal(t, http.StatusOK, code)
	code, _ = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"again"}`)
	require.Equal(t, http.StatusAccepted, code)
	evs = s.until(sessions.TypeTurnCompleted, 0)
	assert.Equal(t, []string{"recovered"}, texts(t, evs, sessions.TypeTurnCompleted))
}

// TestTokenAndOrigin: the access rules of httpguard, as july mcp has
// them, with JSON errors.
func TestTokenAndOrigin(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: echoScript, token: "s3cret"})
	code, m := call(t, "GET", f.url+"/info", "")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, "unauthorized", errCode(m))
	code, _ = call(t, "GET", f.url+"/info", "", "Authorization", "Bearer wrong")
	assert.Equal(t, http.StatusUnauthorized, code)
	code, m = call(t, "POST", f.url+"/sessions", `{"message":"x"}`, "Authorization", "Bearer s3cret", "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, "forbidden", errCode(m))
	code, _ = call(t, "POST", f.url+"/sessions", `{"message":"x"}`, "Authorization", "Bearer s3cret", "Origin", "http://evil.example")
	assert.Equal(t, http.StatusForbidden, code)
	code, _ = call(t, "GET", f.url+"/info", "", "Authorization", "Bearer s3cret", "Host", "evil.example")
	assert.Equal(t, http.StatusForbidden, code, "DNS rebinding on loopback")
	code, m = call(t, "GET", f.url+"/info", "", "Authorization", "Bearer s3cret")
	assert.Equal(t, http.StatusOK, code, "%v", m)
}

// openFDs counts the process's open file descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents)
}

// TestStreamDisconnectLeavesNothing: clients that disconnect mid-stream
// leave no goroutine and no file descriptor behind.
func TestStreamDisconnectLeavesNothing(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: slowScript})
	_, m := call(t, "POST", f.url+"/sessions", `{"message":"slow"}`)
	id := m["sessionId"].(string)
	warm := openStream(t, f.url+"/sessions/"+id+"/events")
	warm.until(sessions.TypeTurnStarted, 0)
	http.DefaultClient.CloseIdleConnections()
	g0, fd0 := runtime.NumGoroutine(), openFDs(t)
	var ss []*stream
	for range 20 {
		s := openStream(t, f.url+"/sessions/"+id+"/events")
		s.until(sessions.TypeTurnStarted, 0)
		ss = append(ss, s)
	}
	assert.Greater(t, runtime.NumGoroutine(), g0+20)
	for _, s := range ss {
		s.close()
	}
	http.DefaultClient.CloseIdleConnections()
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > g0 || openFDs(t) > fd0 {
		require.True(t, time.Now().Before(deadline), "after 30 s: %d goroutines (was %d), %d fds (was %d)", runtime.NumGoroutine(), g0, openFDs(t), fd0)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestThousandSubscribers: 1,000 streams on one session each get every
// event of its turn, in order.
func TestThousandSubscribers(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: slowScript})
	_, m := call(t, "POST", f.url+"/sessions", `{"message":"slow"}`)
	id := m["sessionId"].(string)
	tr := &http.Transport{MaxConnsPerHost: 0}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	ready := make(chan struct{}, n)
	for range n {
		wg.Go(func() {
			resp, err := client.Get(f.url + "/sessions/" + id + "/events")
			if err != nil {
				errs <- err
				ready <- struct{}{}
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			want := int64(0)
			signalled := false
			for sc.Scan() {
				line := sc.Text()
				if !strings.HasPrefix(line, "data: ") {
					continue
				}
				var ev sessions.Event
				if err := json.Unmarshal([]byte(line[6:]), &ev); err != nil || ev.Index != want {
					errs <- fmt.Errorf("event %d: %v (index %d)", want, err, ev.Index)
					break
				}
				want++
				if ev.Type == sessions.TypeTurnStarted && !signalled {
					signalled = true
					ready <- struct{}{}
				}
				if ev.Type == sessions.TypeTurnFailed {
					return
				}
			}
			if !signalled {
				ready <- struct{}{}
			}
			errs <- fmt.Errorf("stream ended at event %d: %v", want, sc.Err())
		})
	}
	for range n {
		select {
		case <-ready:
		case <-time.After(2 * time.Minute):
			require.FailNow(t, "subscribers not all connected within 2 minutes")
		}
	}
	code, _ := call(t, "POST", f.url+"/sessions/"+id+"/cancel", "")
	require.Equal(t, http.StatusAccepted, code)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		require.FailNow(t, "subscribers did not all get the turn's end within 2 minutes")
	}
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}
