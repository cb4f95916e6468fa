package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

// serveAgent writes a temp-root agent and a script, and returns the
// agent directory and the --model value.
func serveAgent(t *testing.T, scriptText string) (dir, modelSpec string) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: srv\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"), 0o644))
	sc := filepath.Join(dir, "test.script.yaml")
	require.NoError(t, os.WriteFile(sc, []byte(scriptText), 0o644))
	return dir, "script:" + sc
}

// server is a july serve child process.
type server struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr strings.Builder
	exited chan error
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// startServe starts july serve ARGS on a free loopback port and waits
// (bounded) for its address.
func startServe(t *testing.T, args ...string) *server {
	t.Helper()
	return startServeCommand(t, julyCommand(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...))
}

// startServeCommand starts cmd, a july serve, and waits (bounded) for its
// address.
func startServeCommand(t *testing.T, cmd *exec.Cmd) *server {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &server{cmd: cmd, exited: make(chan error, 1)}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if _, u, ok := strings.Cut(line, " at http://"); ok {
				select {
				case urls <- "http://" + strings.TrimSuffix(u, "/"):
				default:
				}
			}
		}
		s.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
		}
	})
	select {
	case s.url = <-urls:
	case err := <-s.exited:
		s.exited <- err
		require.FailNow(t, "july serve exited", "%v\n%s", err, s.log())
	case <-time.After(time.Minute):
		require.FailNow(t, "july serve printed no address within a minute", s.log())
	}
	return s
}

// wait waits (bounded) for the process to exit and returns its code.
func (s *server) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-s.exited:
		s.exited <- err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		require.NoError(t, err)
		return 0
	case <-time.After(time.Minute):
		require.FailNow(t, "july serve did not exit within a minute", s.log())
	}
	return -1
}

func postJSON(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	require.Less(t, resp.StatusCode, 300, "%s", data)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

// waitEvent reads the session's stream until an event of type typ.
func waitStreamEvent(t *testing.T, url, typ string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	found := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"type":"`+typ+`"`) {
				found <- true
				return
			}
		}
		found <- false
	}()
	select {
	case ok := <-found:
		require.True(t, ok, "the stream ended before %s", typ)
	case <-time.After(time.Minute):
		require.FailNow(t, "no "+typ+" within a minute")
	}
}

// lastEvent returns the type and data of the session's last event.
func lastEvent(t *testing.T, dir, id string) (string, map[string]any) {
	t.Helper()
	_, evs, _, err := sessions.New(filepath.Join(dir, ".july")).Read(id)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	ev := evs[len(evs)-1]
	var d map[string]any
	require.NoError(t, json.Unmarshal(ev.Data, &d))
	return ev.Type, d
}

const serveSlowScript = `turns:
  - replies:
      - sleep: 10m
        text: never
  - replies:
      - text: continued
`

// TestServeSIGTERMInterrupts: SIGTERM with a turn that outlasts the
// drain timeout interrupts it (turn.failed "turn interrupted") and exits
// 0; july run --session then continues the session.
func TestServeSIGTERMInterrupts(t *testing.T) {
	dir, spec := serveAgent(t, serveSlowScript)
	s := startServe(t, dir, "--model", spec, "--drain-timeout", "300ms")
	m := postJSON(t, s.url+"/sessions", `{"message":"slow"}`)
	id := m["sessionId"].(string)
	waitStreamEvent(t, s.url+"/sessions/"+id+"/events", sessions.TypeTurnStarted)
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, s.wait(t), s.log())
	typ, d := lastEvent(t, dir, id)
	assert.Equal(t, sessions.TypeTurnFailed, typ)
	assert.Equal(t, sessions.MessageInterrupted, d["message"])
	assert.Contains(t, s.log(), "stopping")

	out, err := julyCommand(t, "run", dir, "--model", spec, "--session", id, "-m", "go on").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "continued")
}

// TestServeSIGTERMDrains: a turn that ends within the drain timeout
// completes before the server exits 0.
func TestServeSIGTERMDrains(t *testing.T) {
	dir, spec := serveAgent(t, "turns:\n  - replies:\n      - sleep: 500ms\n        text: finished\n")
	s := startServe(t, dir, "--model", spec)
	m := postJSON(t, s.url+"/sessions", `{"message":"x"}`)
	id := m["sessionId"].(string)
	waitStreamEvent(t, s.url+"/sessions/"+id+"/events", sessions.TypeTurnStarted)
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, s.wait(t), s.log())
	typ, d := lastEvent(t, dir, id)
	assert.Equal(t, sessions.TypeTurnCompleted, typ)
	assert.Equal(t, "finished", d["result"])
}

// TestServeSIGKILLRecovers: a server killed mid-turn leaves the turn
// open; the next server closes it as interrupted on start and serves the
// session again.
func TestServeSIGKILLRecovers(t *testing.T) {
	dir, spec := serveAgent(t, serveSlowScript)
	s := startServe(t, dir, "--model", spec)
	m := postJSON(t, s.url+"/sessions", `{"message":"slow"}`)
	id := m["sessionId"].(string)
	waitStreamEvent(t, s.url+"/sessions/"+id+"/events", sessions.TypeTurnStarted)
	require.NoError(t, s.cmd.Process.Kill())
	s.wait(t)
	typ, _ := lastEvent(t, dir, id)
	require.Equal(t, sessions.TypeTurnStarted, typ, "killed mid-turn")

	s2 := startServe(t, dir, "--model", spec)
	typ, d := lastEvent(t, dir, id)
	assert.Equal(t, sessions.TypeTurnFailed, typ)
	assert.Equal(t, sessions.MessageInterrupted, d["message"])
	assert.Contains(t, s2.log(), "recorded it as interrupted")
	postJSON(t, s2.url+"/sessions/"+id+"/messages", `{"message":"again"}`)
	waitStreamEvent(t, s2.url+"/sessions/"+id+"/events", sessions.TypeTurnCompleted)
}

// TestServeTokenOffLoopback: every interface without a token is refused.
func TestServeTokenOffLoopback(t *testing.T) {
	dir, spec := serveAgent(t, serveSlowScript)
	cmd := julyCommand(t, "serve", dir, "--model", spec, "--addr", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), ServeTokenEnv+"=")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "--addr 0.0.0.0:0 listens on ")
	assert.Contains(t, string(out), "Set a bearer token with --token-file FILE or $JULY_SERVE_TOKEN")
}

// TestServeSecondServerRefused: a second server on the same state root
// would fire the same reminders: it is refused before it listens.
func TestServeSecondServerRefused(t *testing.T) {
	dir, spec := serveAgent(t, serveSlowScript)
	startServe(t, dir, "--model", spec)
	out, err := julyCommand(t, "serve", dir, "--model", spec, "--addr", "127.0.0.1:0").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "fired by another process")
	assert.NotContains(t, string(out), "serving agent")
}
