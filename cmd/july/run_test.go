package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

// runAgent writes a local-root agent (/a.txt = "hi") with the scripted
// model s.yaml and returns the agent directory and its state root.
func runAgent(t *testing.T, scriptYAML string) (agent, state string) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"agent/agent.yaml": "name: child\nmodel: script:s.yaml\nroot:\n  /:\n    local: ./tree\n",
		"agent/s.yaml":     scriptYAML,
		"agent/tree/a.txt": "hi\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return filepath.Join(dir, "agent"), filepath.Join(dir, "state")
}

// eventLines follows a child's --json stdout: each event on the channel,
// which closes when stdout does.
func eventLines(t *testing.T, r io.Reader) <-chan sessions.Event {
	ch := make(chan sessions.Event, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev sessions.Event
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				ch <- ev
			}
		}
	}()
	return ch
}

// waitEvent reads events until one of type typ, bounded by a timeout.
func waitEvent(t *testing.T, ch <-chan sessions.Event, typ string) sessions.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				require.Failf(t, "stdout closed early", "stdout closed before a %s event", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			require.Failf(t, "no event in 30s", "no %s event in 30s", typ)
		}
	}
}

// startRun starts july run with --json and returns the process and its
// events.
func startRun(t *testing.T, args ...string) (*exec.Cmd, <-chan sessions.Event, *bytes.Buffer) {
	t.Helper()
	cmd := julyCommand(t, append([]string{"run", "--json"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, eventLines(t, stdout), &stderr
}

// julyRun runs july to completion and returns stdout, stderr and the exit
// code.
func julyRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := julyCommand(t, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errOut.String(), code
}

// TestRunSessionAcrossProcesses runs two turns of one session in two
// processes: the second replays the first's history (the script finds
// turn 2 from it) and sees its write on the local root.
func TestRunSessionAcrossProcesses(t *testing.T) {
	agent, state := runAgent(t, `
turns:
  - message: {contains: one}
    replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: written in turn 1}}]
      - text: first reply
  - message: {contains: two}
    replies:
      - calls: [{tool: Read, args: {path: /b.txt}}, {tool: Read, args: {path: /tmp/x}}]
      - expect: [{contains: written in turn 1}, {error: true, contains: "not found: /tmp/x"}]
        text: second reply
`)
	out, errOut, code := julyRun(t, "run", agent, "-m", "turn one", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "first reply\n", out)
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	id := list[0].ID
	assert.Contains(t, errOut, "july: session "+id+" ")

	out, errOut, code = julyRun(t, "run", agent, "--session", id, "-m", "turn two", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "second reply\n", out)

	out, _, code = julyRun(t, "sessions", agent, "--state-root", state)
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^`+id+` .* 2 +[0-9]+/[0-9]+ +turn two$`, out)

	out, _, code = julyRun(t, "show", agent, id, "--state-root", state)
	require.Equal(t, 0, code)
	for _, want := range []string{
		"session " + id + ": agent child, model script:s.yaml,",
		"\n## turn 1 (turn_", "\nuser: turn one\n",
		"\ntool Write {\"contents\":\"written in turn 1\",\"path\":\"/b.txt\"}\n  Wrote contents to /b.txt\n",
		"\nassistant: first reply\n-- turn completed (",
		"\n## turn 2 (turn_", "\ntool Read {\"path\":\"/tmp/x\"} (error)\n  not found: /tmp/x\n",
	} {
		assert.Contains(t, out, want)
	}
	out, _, code = julyRun(t, "show", agent, id, "--state-root", state, "--json")
	require.Equal(t, 0, code)
	assert.Equal(t, 13, strings.Count(out, "\n"), out)

	// Another agent may not take the session over.
	other := filepath.Join(filepath.Dir(agent), "other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "agent.yaml"), []byte("name: other\nroot:\n  /:\n    temp: {}\n"), 0o644))
	_, errOut, code = julyRun(t, "run", other, "--session", id, "--model", "script:"+filepath.Join(agent, "s.yaml"), "-m", "x", "--state-root", state)
	assert.Equal(t, 1, code)
	assert.Equal(t, "session "+id+" belongs to agent child, not other\n", errOut)

	_, errOut, code = julyRun(t, "show", agent, "ses_01JAAAAAAAAAAAAAAAAAAAAAAA", "--state-root", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "unknown session: ses_01JAAAAAAAAAAAAAAAAAAAAAAA")
}

const slowScript = `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: before the crash}}]
      - sleep: 1h
        text: never
  - replies:
      - calls: [{tool: Read, args: {path: /b.txt}}]
      - expect: [{contains: before the crash}]
        text: continued
`

// TestRunKilledMidTurn kills july with SIGKILL while the model is
// thinking: the next process closes the open turn as interrupted and
// continues the session with every earlier event.
func TestRunKilledMidTurn(t *testing.T) {
	agent, state := runAgent(t, slowScript)
	cmd, events, _ := startRun(t, agent, "-m", "go", "--state-root", state)
	first := waitEvent(t, events, sessions.TypeActionResult)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()

	out, errOut, code := julyRun(t, "run", agent, "--session", first.SessionID, "-m", "again", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "continued\n", out)
	assert.Contains(t, errOut, "july: warning: session "+first.SessionID+": turn "+first.TurnID+" had not ended")

	_, evs, warns, err := sessions.New(state).Read(first.SessionID)
	require.NoError(t, err)
	assert.Empty(t, warns)
	assert.Equal(t, []string{"message.received", "turn.started", "actions.requested", "action.result", "turn.failed",
		"message.received", "turn.started", "actions.requested", "action.result", "message.completed", "turn.completed"}, typesOf(evs))
	assert.JSONEq(t, `{"message":"turn interrupted"}`, string(evs[4].Data))
}

// TestRunTornLastLine appends half an event, as a crash in the middle of
// a write would leave it: the next run warns, drops it and continues.
func TestRunTornLastLine(t *testing.T) {
	agent, state := runAgent(t, "turns:\n  - replies:\n      - text: one\n  - replies:\n      - text: two\n")
	_, errOut, code := julyRun(t, "run", agent, "-m", "1", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	id := list[0].ID
	file := filepath.Join(state, "sessions", id, sessions.EventsFile)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	f.WriteString(`{"type":"message.received","ind`)
	f.Close()
	out, errOut, code := julyRun(t, "run", agent, "--session", id, "-m", "2", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "two\n", out)
	assert.Contains(t, errOut, "july: warning: "+file+":5: ignoring a torn last line (31 bytes")

	// A corrupt line in the middle: refused, named, left as it is.
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	bad := bytes.Replace(data, []byte(`"index":2,`), []byte(`"index":"two",`), 1)
	require.NoError(t, os.WriteFile(file, bad, 0o644))
	_, errOut, code = julyRun(t, "run", agent, "--session", id, "-m", "3", "--state-root", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, file+":3: corrupt event (not JSON: ")
	assert.Contains(t, errOut, "refusing to continue session "+id+"; the file is left as it is\n")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, bad, after)
}

// TestRunInterrupt sends SIGINT while the model is thinking: the turn
// fails with "turn interrupted", and the session goes on in the next run.
func TestRunInterrupt(t *testing.T) {
	agent, state := runAgent(t, slowScript)
	cmd, events, stderr := startRun(t, agent, "-m", "go", "--state-root", state)
	first := waitEvent(t, events, sessions.TypeActionResult)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	failed := waitEvent(t, events, sessions.TypeTurnFailed)
	var d sessions.TurnFailed
	require.NoError(t, json.Unmarshal(failed.Data, &d))
	assert.Equal(t, "turn interrupted", d.Message)
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, stderr.String(), "july: turn interrupted; session "+first.SessionID+" is kept: continue with --session "+first.SessionID+"\n")

	out, errOut, code := julyRun(t, "run", agent, "--session", first.SessionID, "-m", "again", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "continued\n", out)
	assert.NotContains(t, errOut, "warning", "the interrupted turn was closed by its own process")
}

// TestRunSecondInterruptExits hangs the model deaf to cancellation: the
// first SIGINT cannot end the turn, the second exits at once with 130.
func TestRunSecondInterruptExits(t *testing.T) {
	agent, state := runAgent(t, "turns:\n  - replies:\n      - hang: 1m\n        text: never\n")
	cmd := julyCommand(t, "run", "--json", agent, "-m", "go", "--state-root", state)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	events := eventLines(t, stdout)
	waitEvent(t, events, sessions.TypeTurnStarted)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	said := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "interrupting") {
				said <- sc.Text()
			}
		}
		close(said)
	}()
	select {
	case line := <-said:
		assert.Equal(t, "july: interrupting the turn (Ctrl-C again to exit now)", line)
	case <-time.After(30 * time.Second):
		require.Fail(t, "no word of the interruption in 30s")
	}
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 130, ee.ExitCode())
}

// TestRunSessionInUse runs a second july on a session the first holds.
func TestRunSessionInUse(t *testing.T) {
	agent, state := runAgent(t, slowScript)
	_, events, _ := startRun(t, agent, "-m", "go", "--state-root", state)
	first := waitEvent(t, events, sessions.TypeTurnStarted)
	_, errOut, code := julyRun(t, "run", agent, "--session", first.SessionID, "-m", "me too", "--state-root", state)
	assert.Equal(t, 1, code)
	assert.Equal(t, "session in use: "+first.SessionID+"\n", errOut)
}

func typesOf(evs []sessions.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// TestRunTempRootAcrossProcesses continues a session on an in-memory
// root in a new process: the file turn 1 wrote is still there.
func TestRunTempRootAcrossProcesses(t *testing.T) {
	agent, state := runAgent(t, `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /summary.md, contents: short}}]
      - text: written
  - replies:
      - calls: [{tool: Read, args: {path: /summary.md}}]
      - expect: [{contains: short}]
        text: still there
`)
	require.NoError(t, os.WriteFile(filepath.Join(agent, "agent.yaml"), []byte("name: child\nmodel: script:s.yaml\nroot:\n  /:\n    temp: {}\n"), 0o644))
	out, errOut, code := julyRun(t, "run", agent, "-m", "one", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "written\n", out)
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	out, errOut, code = julyRun(t, "run", agent, "--session", list[0].ID, "-m", "two", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "still there\n", out)
}
