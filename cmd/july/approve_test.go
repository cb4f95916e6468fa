package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

// approveAgent writes a local-root agent whose approvals: asks for edit
// and denies delete, with the script s.yaml, and returns its directory
// and a state root.
func approveAgent(t *testing.T, scriptYAML string) (agent, state string) {
	t.Helper()
	agent, state = runAgent(t, scriptYAML)
	yaml := "name: approver\nmodel: script:s.yaml\nroot:\n  /:\n    local: ./tree\napprovals:\n  edit: ask\n  delete: deny\n"
	require.NoError(t, os.WriteFile(filepath.Join(agent, "agent.yaml"), []byte(yaml), 0o644))
	return agent, state
}

// approvalEvents returns the approval events of the only session under
// state, as "type toolName decision by" lines ("requested" for a
// request).
func approvalEvents(t *testing.T, state string) []string {
	t.Helper()
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	_, events, _, err := sessions.New(state).Read(list[0].ID)
	require.NoError(t, err)
	var out []string
	for _, ev := range events {
		switch ev.Type {
		case sessions.TypeApprovalRequested:
			var d sessions.ApprovalRequested
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			out = append(out, "requested "+d.ToolName+" "+d.Summary)
		case sessions.TypeApprovalDecided:
			var d sessions.ApprovalDecided
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			line := "decided " + d.ToolName + " " + d.Decision + " " + d.By
			if d.Always {
				line += " always"
			}
			out = append(out, line)
		}
	}
	return out
}

// fourWrites asks for four writes one after another and a delete; the
// expectations follow the answers y, n, a (and no question for the
// fourth, the same tool as the third: always is per tool).
const fourWrites = `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: b}}]
      - expect: [{tool: Write, error: false}]
        calls: [{tool: Write, args: {path: /c.txt, contents: c}}]
      - expect: [{tool: Write, error: true, contains: "Write was not run: the user denied it (agent.yaml approvals: edit: ask)"}]
        calls: [{tool: StrReplace, args: {path: /a.txt, oldText: hi, newText: hello}}]
      - expect: [{tool: StrReplace, error: false}]
        calls: [{tool: StrReplace, args: {path: /a.txt, oldText: hello, newText: hey}}, {tool: Delete, args: {path: /a.txt}}]
      - expect: [{tool: StrReplace, error: false}, {tool: Delete, error: true, contains: "approval policy denies it"}]
        text: done
`

// onTerminal is july run on a pseudo-terminal (its stdin and stderr;
// stdout is kept apart).
type onTerminal struct {
	t      *testing.T
	ptmx   *os.File
	stdout strings.Builder
	exited chan error

	mu     sync.Mutex
	screen strings.Builder
}

// runOnTerminal starts july ARGS on a new pseudo-terminal, its
// controlling terminal.
func runOnTerminal(t *testing.T, args ...string) *onTerminal {
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	o := &onTerminal{t: t, ptmx: ptmx, exited: make(chan error, 1)}
	cmd := julyCommand(t, args...)
	cmd.Stdin, cmd.Stderr, cmd.Stdout = tty, tty, &o.stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	require.NoError(t, cmd.Start())
	go func() { o.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-o.exited:
		case <-time.After(10 * time.Second):
		}
	})
	tty.Close() // the child holds its own copy
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			o.mu.Lock()
			o.screen.Write(buf[:n])
			o.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return o
}

// text is what the terminal has shown.
func (o *onTerminal) text() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.screen.String()
}

const question = "? [y/N/a(lways)] "

// answer waits (bounded) for the n-th question, which must be "Allow
// want", and types reply.
func (o *onTerminal) answer(n int, want, reply string) {
	t := o.t
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(o.text(), question) < n {
		if time.Now().After(deadline) {
			require.FailNow(t, "no question", "question %d did not appear within 30s; the terminal shows:\n%s", n, o.text())
		}
		time.Sleep(10 * time.Millisecond)
	}
	qs := strings.Split(o.text(), question)
	assert.True(t, strings.HasSuffix(qs[n-1], "Allow "+want), "question %d is %q, want Allow %s", n, qs[n-1], want)
	_, err := io.WriteString(o.ptmx, reply)
	require.NoError(t, err)
}

// wait waits (bounded) for july to exit and returns its error.
func (o *onTerminal) wait() error {
	select {
	case err := <-o.exited:
		return err
	case <-time.After(time.Minute):
		require.FailNow(o.t, "july did not end", "the terminal shows:\n%s", o.text())
	}
	return nil
}

// TestRunApprovalsOnTerminal drives july run through a pseudo-terminal:
// the questions appear on it, and y, n and a decide them.
func TestRunApprovalsOnTerminal(t *testing.T) {
	agent, state := approveAgent(t, fourWrites)
	o := runOnTerminal(t, "run", agent, "--state-root", state, "-m", "go")
	o.answer(1, "Write on /b.txt", "y\n")
	o.answer(2, "Write on /c.txt", "n\n")
	o.answer(3, "StrReplace on /a.txt", "a\n")
	require.NoError(t, o.wait(), "july run failed; the terminal shows:\n%s", o.text())
	assert.Equal(t, 3, strings.Count(o.text(), question), "always: no fourth question; the terminal shows:\n%s", o.text())
	assert.Equal(t, "done\n", o.stdout.String())

	tree := filepath.Join(agent, "tree")
	for name, want := range map[string]string{"b.txt": "b", "a.txt": "hey\n"} {
		data, err := os.ReadFile(filepath.Join(tree, name))
		require.NoError(t, err, name)
		assert.Equal(t, want, string(data), name)
	}
	assert.NoFileExists(t, filepath.Join(tree, "c.txt"), "the denied write did not run")
	assert.Equal(t, []string{
		"requested Write Write on /b.txt", "decided Write allow user",
		"requested Write Write on /c.txt", "decided Write deny user",
		"requested StrReplace StrReplace on /a.txt", "decided StrReplace allow user always",
		"decided StrReplace allow user always", "decided Delete deny policy",
	}, approvalEvents(t, state))

	list, err := sessions.New(state).List()
	require.NoError(t, err)
	out, errOut, code := julyRun(t, "show", agent, list[0].ID, "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "approval Write: deny (user; edit: ask)\ntool Write")
	assert.Contains(t, out, "approval StrReplace: allow (user, always; edit: ask)\n")
	assert.Contains(t, out, "approval Delete: deny (policy; delete: deny)\n")
}

// TestRunApproveFlags: --approve=always allows and --approve=never
// denies without a question; with no terminal and no flag the calls are
// denied as with never, and july says so once.
func TestRunApproveFlags(t *testing.T) {
	allowed := `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: b}}, {tool: Write, args: {path: /c.txt, contents: c}}]
      - expect: [{tool: Write, error: false}, {tool: Write, error: false}]
        text: done
`
	denied := `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: b}}, {tool: Write, args: {path: /c.txt, contents: c}}]
      - expect: [{tool: Write, error: true, contains: "%s"}, {tool: Write, error: true}]
        text: done
`
	const notice = "july: no terminal to ask on"
	for _, tc := range []struct {
		name, flag, script string
		decided            string
		notice             bool
	}{
		{"always", "--approve=always", allowed, "decided Write allow flag", false},
		{"never", "--approve=never", strings.Replace(denied, "%s", "approvals are denied in this run (--approve=never)", 1), "decided Write deny flag", false},
		{"no terminal", "", strings.Replace(denied, "%s", "there is no terminal to ask on, so it was denied (as --approve=never)", 1), "decided Write deny flag", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent, state := approveAgent(t, tc.script)
			args := []string{"run", agent, "--state-root", state, "-m", "go"}
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			out, errOut, code := julyRun(t, args...)
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, "done\n", out)
			assert.NotContains(t, errOut, "[y/N/a(lways)]")
			if tc.notice {
				assert.Equal(t, 1, strings.Count(errOut, notice), "said once: %s", errOut)
			} else {
				assert.NotContains(t, errOut, notice)
			}
			assert.Equal(t, []string{tc.decided, tc.decided}, approvalEvents(t, state))
			_, err := os.Stat(filepath.Join(agent, "tree", "b.txt"))
			assert.Equal(t, tc.name == "always", err == nil, "b.txt written")
		})
	}
	agent, _ := approveAgent(t, allowed)
	_, errOut, code := julyRun(t, "run", agent, "-m", "go", "--approve=sometimes")
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, `--approve "sometimes": want never or always`)
}

// streamEvent reads the session's event stream until an event of type
// typ, and returns it.
func streamEvent(t *testing.T, url, typ string) sessions.Event {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	found := make(chan *sessions.Event, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			var ev sessions.Event
			if ok && json.Unmarshal([]byte(data), &ev) == nil && ev.Type == typ {
				found <- &ev
				return
			}
		}
		found <- nil
	}()
	select {
	case ev := <-found:
		require.NotNil(t, ev, "the stream ended before %s", typ)
		return *ev
	case <-time.After(time.Minute):
		require.FailNow(t, "no "+typ+" within a minute")
	}
	return sessions.Event{}
}

// post sends body to url and returns the status and the decoded answer.
func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	return resp.StatusCode, m
}

// serveApprovalAgent writes an agent whose approvals: asks for edit and
// its script, for july serve; it returns the agent's directory and the
// model spec.
func serveApprovalAgent(t *testing.T, scriptText string) (dir, modelSpec string) {
	t.Helper()
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte("name: srv\nroot:\n  /:\n    temp: {}\napprovals: {edit: ask}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(scriptText), 0o644))
	return dir, "script:" + filepath.Join(dir, "s.yaml")
}

// serveDecisions returns the approval.decided events of session id of
// the agent in dir.
func serveDecisions(t *testing.T, dir, id string) []sessions.ApprovalDecided {
	t.Helper()
	_, evs, _, err := sessions.New(filepath.Join(dir, ".july")).Read(id)
	require.NoError(t, err)
	var out []sessions.ApprovalDecided
	for _, ev := range evs {
		if ev.Type == sessions.TypeApprovalDecided {
			var d sessions.ApprovalDecided
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			out = append(out, d)
		}
	}
	return out
}

// TestServeApprovals: over july serve an asked call waits: its
// approval.requested event is on the stream, GET …/approvals lists it, a
// POST decides it (a wrong callId is 404, a second POST 409). A server
// whose --approval-timeout passes denies the call by timeout.
func TestServeApprovals(t *testing.T) {
	dir, spec := serveApprovalAgent(t, `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: b}}]
      - expect: [{tool: Write, error: false}]
        text: allowed
  - replies:
      - calls: [{tool: Write, args: {path: /c.txt, contents: c}}]
      - expect: [{tool: Write, error: true, contains: "nobody approved it within 1s"}]
        text: timed out
`)
	s := startServe(t, dir, "--model", spec)
	_, m := post(t, s.url+"/sessions", `{"message":"one"}`)
	id := m["sessionId"].(string)
	events := s.url + "/sessions/" + id + "/events"
	ev := streamEvent(t, events, sessions.TypeApprovalRequested)
	var req sessions.ApprovalRequested
	require.NoError(t, json.Unmarshal(ev.Data, &req))
	assert.Equal(t, "Write", req.ToolName)
	assert.Equal(t, "Write on /b.txt", req.Summary)
	assert.JSONEq(t, `{"path":"/b.txt","contents":"b"}`, string(req.Args))

	resp, err := http.Get(s.url + "/sessions/" + id + "/approvals")
	require.NoError(t, err)
	var list struct{ Approvals []map[string]any }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	resp.Body.Close()
	require.Len(t, list.Approvals, 1)
	assert.Equal(t, req.CallID, list.Approvals[0]["callId"])
	assert.Equal(t, "edit: ask", list.Approvals[0]["rule"])

	code, m := post(t, s.url+"/sessions/"+id+"/approvals/call_nope", `{"allow": true}`)
	assert.Equal(t, http.StatusNotFound, code, "%v", m)
	code, _ = post(t, s.url+"/sessions/"+id+"/approvals/"+req.CallID, `{"allow": "yes"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	code, _ = post(t, s.url+"/sessions/"+id+"/approvals/"+req.CallID, `{}`)
	assert.Equal(t, http.StatusBadRequest, code)
	code, m = post(t, s.url+"/sessions/"+id+"/approvals/"+req.CallID, `{"allow": true}`)
	require.Equal(t, http.StatusOK, code, "%v", m)
	assert.Equal(t, "allow", m["decision"])
	code, m = post(t, s.url+"/sessions/"+id+"/approvals/"+req.CallID, `{"allow": false}`)
	assert.Equal(t, http.StatusConflict, code, "%v", m)
	done := streamEvent(t, events, sessions.TypeTurnCompleted)
	typ, d := lastEvent(t, dir, id)
	require.Equal(t, sessions.TypeTurnCompleted, typ)
	assert.Equal(t, "allowed", d["result"])

	// A second server, whose calls wait a second.
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, s.wait(t), s.log())
	s = startServe(t, dir, "--model", spec, "--approval-timeout", "1s")
	code, m = post(t, s.url+"/sessions/"+id+"/messages", `{"message":"two"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", m)
	streamEvent(t, s.url+"/sessions/"+id+"/events?after="+strconv.FormatInt(done.Index, 10), sessions.TypeTurnCompleted)
	typ, d = lastEvent(t, dir, id)
	require.Equal(t, sessions.TypeTurnCompleted, typ)
	assert.Equal(t, "timed out", d["result"])

	var decided []string
	for _, d := range serveDecisions(t, dir, id) {
		decided = append(decided, d.ToolName+" "+d.Decision+" "+d.By)
	}
	assert.Equal(t, []string{"Write allow user", "Write deny timeout"}, decided)
}

// TestRunApprovalInterrupted: Ctrl-C while a question waits ends the turn
// as interrupted; the call did not run and is recorded as denied by
// interrupt.
func TestRunApprovalInterrupted(t *testing.T) {
	agent, state := approveAgent(t, fourWrites)
	o := runOnTerminal(t, "run", agent, "--state-root", state, "-m", "go")
	o.answer(1, "Write on /b.txt", "\x03")
	var ee *exec.ExitError
	require.ErrorAs(t, o.wait(), &ee, "the terminal shows:\n%s", o.text())
	assert.Equal(t, 1, ee.ExitCode())
	assert.Contains(t, o.text(), "turn interrupted")
	assert.NoFileExists(t, filepath.Join(agent, "tree", "b.txt"))
	assert.Equal(t, []string{"requested Write Write on /b.txt", "decided Write deny interrupt"}, approvalEvents(t, state))
}

// TestServeApprovalAcrossRestart: pending approvals live in the server's
// memory. A server killed (SIGKILL) while a call waits leaves the turn
// open; the next server closes it as interrupted and records the call as
// denied by restart, with the reason; the call id is no longer waiting.
// A server stopped (SIGTERM) past its drain timeout records the call as
// denied by interrupt, saying the server is stopping. Either way the
// session then serves its next message.
func TestServeApprovalAcrossRestart(t *testing.T) {
	dir, spec := serveApprovalAgent(t, `
turns:
  - message: {contains: kill}
    replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: b}}]
      - text: never reached
  - message: {contains: term}
    replies:
      - calls: [{tool: Write, args: {path: /c.txt, contents: c}}]
      - text: never reached
  - message: {contains: again}
    replies:
      - text: serving again
`)
	s := startServe(t, dir, "--model", spec)
	_, m := post(t, s.url+"/sessions", `{"message":"kill"}`)
	id := m["sessionId"].(string)
	ev := streamEvent(t, s.url+"/sessions/"+id+"/events", sessions.TypeApprovalRequested)
	var req sessions.ApprovalRequested
	require.NoError(t, json.Unmarshal(ev.Data, &req))
	require.NoError(t, s.cmd.Process.Kill())
	s.wait(t)
	typ, _ := lastEvent(t, dir, id)
	require.Equal(t, sessions.TypeApprovalRequested, typ, "killed while the call waits")

	s = startServe(t, dir, "--model", spec)
	typ, d := lastEvent(t, dir, id)
	assert.Equal(t, sessions.TypeTurnFailed, typ)
	assert.Equal(t, sessions.MessageInterrupted, d["message"])
	assert.Contains(t, s.log(), "denied by restart the call(s) waiting for approval: "+req.CallID+" (Write)")
	assert.Equal(t, []sessions.ApprovalDecided{{CallID: req.CallID, ToolName: "Write", Decision: "deny", By: "restart", Rule: "edit: ask", Reason: sessions.ReasonRestart}}, serveDecisions(t, dir, id))
	code, m := post(t, s.url+"/sessions/"+id+"/approvals/"+req.CallID, `{"allow": true}`)
	assert.Equal(t, http.StatusConflict, code, "%v", m)
	assert.Contains(t, fmt.Sprint(m), "denied by restart", "%v", m)
	code, m = post(t, s.url+"/sessions/"+id+"/approvals/call_nosuch", `{"allow": true}`)
	assert.Equal(t, http.StatusNotFound, code, "%v", m)

	// SIGTERM past the drain timeout: the waiting call is denied by
	// interrupt, and the turn recorded as interrupted.
	require.NoError(t, s.cmd.Process.Kill())
	s.wait(t)
	s = startServe(t, dir, "--model", spec, "--drain-timeout", "300ms")
	code, m = post(t, s.url+"/sessions/"+id+"/messages", `{"message":"term"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", m)
	streamEvent(t, s.url+"/sessions/"+id+"/events?after="+strconv.FormatInt(ev.Index, 10), sessions.TypeApprovalRequested)
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 0, s.wait(t), s.log())
	typ, d = lastEvent(t, dir, id)
	assert.Equal(t, sessions.TypeTurnFailed, typ)
	assert.Equal(t, sessions.MessageInterrupted, d["message"])
	got := serveDecisions(t, dir, id)
	require.Len(t, got, 2)
	assert.Equal(t, "deny", got[1].Decision)
	assert.Equal(t, "interrupt", got[1].By)
	assert.Equal(t, "the turn was interrupted before anyone answered (the server is stopping)", got[1].Reason)

	s = startServe(t, dir, "--model", spec)
	code, m = post(t, s.url+"/sessions/"+id+"/messages", `{"message":"again"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", m)
	waitStreamEvent(t, s.url+"/sessions/"+id+"/events", sessions.TypeTurnCompleted)
	typ, d = lastEvent(t, dir, id)
	require.Equal(t, sessions.TypeTurnCompleted, typ)
	assert.Equal(t, "serving again", d["result"])
}
