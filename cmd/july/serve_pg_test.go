package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// pgAgent writes an agent named name with a schedule firing every minute
// and the script of serveSlowScript, and returns its directory and
// --model value. Two of them with one name are one agent on two machines.
func pgAgent(t *testing.T, name string) (dir, modelSpec string) {
	t.Helper()
	dir, modelSpec = serveAgent(t, serveSlowScript)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: "+name+"\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "schedules"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "schedules", "tick.md"), []byte("---\ncron: \"* * * * *\"\n---\n\nSay tick.\n"), 0o644))
	return dir, modelSpec
}

// startServeFor is startServe with a process that may live for d (the
// schedule test waits for a real minute's tick).
func startServeFor(t *testing.T, d time.Duration, args ...string) *server {
	t.Helper()
	july, err := exec.LookPath("july")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, july, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.WaitDelay = 5 * time.Second
	return startServeCommand(t, cmd)
}

// do sends a request and returns the status and the body.
func do(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, data
}

// TestServeTwoServersOneDatabase runs two july serve processes, each with
// its own copy of one agent, on one PostgreSQL state root. A session
// created through one is listed and streamed by the other; a message sent
// through the other while the first runs its turn is 409 session in use,
// and once that turn ends the other server takes the session and runs the
// message. Each tick of the every-minute schedule (on the real clock)
// starts one session between the two: the server that lost the claim
// logs it.
func TestServeTwoServersOneDatabase(t *testing.T) {
	url := pgtest.URL(t)
	var b [6]byte
	rand.Read(b[:])
	name := "two" + hex.EncodeToString(b[:])
	dirA, spec := pgAgent(t, name)
	dirB, _ := pgAgent(t, name)
	a := startServeFor(t, 5*time.Minute, dirA, "--model", spec, "--state-root", url, "--drain-timeout", "300ms")
	bs := startServeFor(t, 5*time.Minute, dirB, "--model", spec, "--state-root", url, "--drain-timeout", "300ms")

	m := postJSON(t, a.url+"/sessions", `{"message":"slow"}`)
	id := m["sessionId"].(string)
	waitStreamEvent(t, bs.url+"/sessions/"+id+"/events", sessions.TypeTurnStarted)

	status, body := do(t, "GET", bs.url+"/sessions", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	var list struct {
		Sessions []struct {
			ID         string `json:"id"`
			ScheduleID string `json:"scheduleId"`
		} `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	var ids []string
	for _, s := range list.Sessions {
		ids = append(ids, s.ID)
	}
	assert.Contains(t, ids, id, "the other server lists the session")
	status, body = do(t, "GET", bs.url+"/sessions/"+id, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	assert.Contains(t, string(body), `"state":"running"`, "the other server sees the turn running")

	status, body = do(t, "POST", bs.url+"/sessions/"+id+"/messages", `{"message":"more"}`)
	require.Equal(t, http.StatusConflict, status, "%s", body)
	assert.Contains(t, string(body), "session_in_use")
	assert.Contains(t, string(body), "session in use: "+id)

	status, body = do(t, "POST", a.url+"/sessions/"+id+"/cancel", "")
	require.Less(t, status, 300, "%s", body)
	// The holder lets go of the session once its turn has ended: until
	// then the other server's send is still 409.
	deadline := time.Now().Add(time.Minute)
	for {
		status, body = do(t, "POST", bs.url+"/sessions/"+id+"/messages", `{"message":"more"}`)
		if status != http.StatusConflict || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.Less(t, status, 300, "%s", body)
	waitStreamEvent(t, a.url+"/sessions/"+id+"/events", sessions.TypeTurnCompleted)
	_, _, _, err := sessions.New(filepath.Join(dirA, ".july")).Read(id)
	require.Error(t, err, "the session's log is in the database, not in the agent directory")

	// A tick both servers reached: one started its session, the other
	// lost the claim.
	started := regexp.MustCompile(`schedule tick: tick (\S+): started session (ses_\S+)`)
	lost := regexp.MustCompile(`schedule tick: tick (\S+): fired by another server`)
	var tick string
	deadline = time.Now().Add(3 * time.Minute)
	for tick == "" {
		logs := a.log() + bs.log()
		for _, l := range lost.FindAllStringSubmatch(logs, -1) {
			if strings.Contains(logs, "tick "+l[1]+": started session") {
				tick = l[1]
			}
		}
		if tick == "" {
			require.False(t, time.Now().After(deadline), "no tick claimed by one server and lost by the other within 3 minutes:\n--- a\n%s--- b\n%s", a.log(), bs.log())
			time.Sleep(200 * time.Millisecond)
		}
	}
	perTick := map[string][]string{}
	for _, m := range started.FindAllStringSubmatch(a.log()+bs.log(), -1) {
		perTick[m[1]] = append(perTick[m[1]], m[2])
	}
	for tk, ss := range perTick {
		assert.Len(t, ss, 1, "tick %s started %v", tk, ss)
	}
	status, body = do(t, "GET", a.url+"/sessions", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NoError(t, json.Unmarshal(body, &list))
	var tasks []string
	for _, s := range list.Sessions {
		if s.ScheduleID == "tick" {
			tasks = append(tasks, s.ID)
		}
	}
	var logged []string
	for _, ss := range perTick {
		logged = append(logged, ss...)
	}
	assert.ElementsMatch(t, logged, tasks, "one session per tick fired, between the two servers")
}
