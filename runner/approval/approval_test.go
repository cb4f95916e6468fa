package approval

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/tools"
)

func TestRulesMatch(t *testing.T) {
	rules, problems := NewRules(map[string]string{
		"edit":           "ask",
		"StrReplace":     "allow",
		"Write":          "allow",
		"delete":         "deny",
		"mcp:github/*":   "ask",
		"mcp:github/get": "allow",
		"mcp:*/drop":     "deny",
		"*Todos":         "allow",
		"Update*":        "ask",
	})
	require.Empty(t, problems)
	for _, tc := range []struct {
		names []string
		want  string // the rule's String, "" for none
	}{
		// Two exact names of one tool: the strictest wins.
		{[]string{"StrReplace", "edit"}, "edit: ask"},
		{[]string{"Write", "edit"}, "edit: ask"},
		{[]string{"Delete", "delete"}, "delete: deny"},
		// Exact beats pattern, whatever the policies.
		{[]string{"mcp__github__get", "mcp:github/get"}, "mcp:github/get: allow"},
		{[]string{"mcp__github__create", "mcp:github/create"}, "mcp:github/*: ask"},
		// Two patterns: the strictest wins.
		{[]string{"mcp__github__drop", "mcp:github/drop"}, "mcp:*/drop: deny"},
		{[]string{"UpdateTodos", "updateTodos"}, "Update*: ask"},
		{[]string{"ReadTodos", "updateTodos"}, "*Todos: allow"},
		{[]string{"Read", "read"}, ""},
	} {
		r, ok := rules.Match(tc.names)
		got := ""
		if ok {
			got = r.String()
		}
		assert.Equal(t, tc.want, got, "Match(%q)", tc.names)
	}
}

func TestRulesProblems(t *testing.T) {
	_, problems := NewRules(map[string]string{"edit": "maybe", "[x": "ask", "": "deny", "read": "allow"})
	require.Len(t, problems, 3)
	assert.EqualError(t, problems["edit"], `unknown value "maybe": want ask, allow or deny`)
	assert.ErrorContains(t, problems["[x"], "not a valid pattern")
	assert.ErrorContains(t, problems[""], "empty tool name")
}

// recorder collects the events a gate emits.
type recorder struct {
	mu     sync.Mutex
	events []sessions.Event
}

func (r *recorder) call(id string) Call {
	return Call{SessionID: "ses_1", CallID: id, Emit: func(typ string, data any) error {
		raw, err := json.Marshal(data)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.events = append(r.events, sessions.Event{Type: typ, Data: raw})
		r.mu.Unlock()
		return nil
	}}
}

// decided returns the approval.decided events' data.
func (r *recorder) decided(t *testing.T) []sessions.ApprovalDecided {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sessions.ApprovalDecided
	for _, ev := range r.events {
		if ev.Type == sessions.TypeApprovalDecided {
			var d sessions.ApprovalDecided
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			out = append(out, d)
		}
	}
	return out
}

func (r *recorder) types() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		out = append(out, ev.Type)
	}
	return out
}

// counted is a tool that counts its runs.
func counted(name string, runs *int) *tools.Tool {
	return &tools.Tool{Name: name, Effect: tools.EffectWrite, Run: func(context.Context, json.RawMessage) (*tools.Result, error) {
		*runs++
		return tools.Text("ran"), nil
	}}
}

func runTool(t *testing.T, tl *tools.Tool, ctx context.Context, args string) *tools.Result {
	t.Helper()
	r, err := tl.Run(ctx, json.RawMessage(args))
	require.NoError(t, err)
	return r
}

func TestGateDenyByPolicy(t *testing.T) {
	rules, _ := NewRules(map[string]string{"Delete": "deny"})
	runs := 0
	orig := counted("Delete", &runs)
	readRuns := 0
	read := counted("Read", &readRuns)
	ts := NewGate(rules, Flag{Allow: true}, nil).Wrap([]*tools.Tool{orig, read})
	assert.Same(t, read, ts[1], "an allowed tool is not wrapped")
	rec := &recorder{}
	r := runTool(t, ts[0], WithCall(context.Background(), rec.call("c1")), `{"path":"/x"}`)
	assert.True(t, r.IsError)
	assert.Equal(t, "Delete was not run: the approval policy denies it (agent.yaml approvals: Delete: deny)", r.String())
	assert.Zero(t, runs)
	assert.Equal(t, []sessions.ApprovalDecided{{CallID: "c1", ToolName: "Delete", Decision: "deny", By: "policy", Rule: "Delete: deny", Reason: "the approval policy denies it"}}, rec.decided(t))
	assert.Equal(t, []string{sessions.TypeApprovalDecided}, rec.types(), "a policy decision asks nobody")
}

func TestGateFlag(t *testing.T) {
	rules, _ := NewRules(map[string]string{"*": "ask"})
	for _, allow := range []bool{true, false} {
		runs := 0
		tl := NewGate(rules, Flag{Allow: allow, Reason: "approvals are denied in this run (--approve=never)"}, nil).Wrap([]*tools.Tool{counted("Write", &runs)})[0]
		rec := &recorder{}
		r := runTool(t, tl, WithCall(context.Background(), rec.call("c1")), `{}`)
		want := sessions.ApprovalDecided{CallID: "c1", ToolName: "Write", Decision: "allow", By: "flag", Rule: "*: ask"}
		if allow {
			assert.Equal(t, 1, runs)
			assert.False(t, r.IsError)
		} else {
			want.Decision, want.Reason = "deny", "approvals are denied in this run (--approve=never)"
			assert.Zero(t, runs)
			assert.Equal(t, "Write was not run: approvals are denied in this run (--approve=never) (agent.yaml approvals: *: ask)", r.String())
		}
		assert.Equal(t, []sessions.ApprovalDecided{want}, rec.decided(t))
		assert.Equal(t, []string{sessions.TypeApprovalDecided}, rec.types(), "a flag asks nobody")
	}
}

// answering feeds a Terminal answers and reads its questions.
func answering(t *testing.T) (*Terminal, io.Writer, *strings.Builder, *sync.Mutex) {
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	out := &strings.Builder{}
	mu := &sync.Mutex{}
	return NewTerminal(inR, lockedWriter{out, mu}), inW, out, mu
}

type lockedWriter struct {
	b  *strings.Builder
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func TestGateTerminal(t *testing.T) {
	rules, _ := NewRules(map[string]string{"edit": "ask"})
	names := func(tool string) []string { return []string{tool, "edit"} }
	term, in, out, mu := answering(t)
	g := NewGate(rules, term, names)
	runs := 0
	tl := g.Wrap([]*tools.Tool{counted("StrReplace", &runs)})[0]
	rec := &recorder{}
	ask := func(id, answer string) *tools.Result {
		done := make(chan *tools.Result, 1)
		go func() {
			r, _ := tl.Run(WithCall(context.Background(), rec.call(id)), json.RawMessage(`{"path":"/src/x.go","oldText":"a","newText":"b"}`))
			done <- r
		}()
		if answer != "" {
			_, err := io.WriteString(in, answer)
			require.NoError(t, err)
		}
		select {
		case r := <-done:
			return r
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no result within 10s")
		}
		return nil
	}
	assert.False(t, ask("c1", "what?\ny\n").IsError)
	assert.True(t, ask("c2", "\n").IsError)
	r := ask("c3", "n\n")
	assert.Equal(t, "StrReplace was not run: the user denied it (agent.yaml approvals: edit: ask)", r.String())
	assert.False(t, ask("c4", "a\n").IsError)
	assert.False(t, ask("c5", "").IsError, "always: not asked again")
	assert.Equal(t, 3, runs)
	mu.Lock()
	assert.Equal(t, strings.Repeat("Allow StrReplace on /src/x.go? [y/N/a(lways)] ", 1)+
		"Answer y (yes), n (no) or a (always for this session). Allow StrReplace on /src/x.go? [y/N/a(lways)] "+
		strings.Repeat("Allow StrReplace on /src/x.go? [y/N/a(lways)] ", 3), out.String())
	mu.Unlock()
	var got []string
	for _, d := range rec.decided(t) {
		got = append(got, d.CallID+" "+d.Decision+" "+d.By)
		if d.CallID >= "c4" {
			assert.True(t, d.Always, d.CallID)
		}
	}
	assert.Equal(t, []string{"c1 allow user", "c2 deny user", "c3 deny user", "c4 allow user", "c5 allow user"}, got)
	assert.Equal(t, []string{
		"approval.requested", "approval.decided", "approval.requested", "approval.decided",
		"approval.requested", "approval.decided", "approval.requested", "approval.decided", "approval.decided",
	}, rec.types())

	// A new gate over the same log remembers the "always".
	g2 := NewGate(rules, Flag{}, names)
	g2.Remember(rec.events)
	rec2 := &recorder{}
	assert.False(t, runTool(t, g2.Wrap([]*tools.Tool{counted("StrReplace", &runs)})[0], WithCall(context.Background(), rec2.call("c6")), `{}`).IsError)
	assert.True(t, runTool(t, g2.Wrap([]*tools.Tool{counted("Write", &runs)})[0], WithCall(context.Background(), rec2.call("c7")), `{}`).IsError, "always is per tool")
}

func TestTerminalEndOfInput(t *testing.T) {
	term := NewTerminal(strings.NewReader(""), io.Discard)
	a, err := term.Ask(context.Background(), Request{Summary: "Write on /x"})
	require.NoError(t, err)
	assert.False(t, a.Allow)
	assert.Contains(t, a.Reason, "input ended")
}

func TestTerminalCancel(t *testing.T) {
	inR, inW := io.Pipe()
	t.Cleanup(func() { inW.Close() })
	term := NewTerminal(inR, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := term.Ask(ctx, Request{Summary: "Write on /x"})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestQueue(t *testing.T) {
	q := NewQueue(time.Hour)
	ans := make(chan Answer, 1)
	go func() {
		a, _ := q.Ask(context.Background(), Request{SessionID: "s", CallID: "c1", ToolName: "Write", Summary: "Write on /x", Rule: Rule{"edit", Ask}})
		ans <- a
	}()
	var p []Pending
	require.Eventually(t, func() bool { p = q.Pending("s"); return len(p) == 1 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, "c1", p[0].CallID)
	assert.Equal(t, "edit: ask", p[0].Rule)
	assert.Empty(t, q.Pending("other"))
	assert.ErrorIs(t, q.Decide("s", "nope", true, false), ErrUnknownCall)
	require.NoError(t, q.Decide("s", "c1", true, true))
	assert.ErrorIs(t, q.Decide("s", "c1", false, false), ErrDecided)
	select {
	case a := <-ans:
		assert.Equal(t, Answer{Allow: true, Always: true, By: "user"}, a)
	case <-time.After(10 * time.Second):
		require.FailNow(t, "no answer within 10s")
	}
	assert.Empty(t, q.Pending(""))
}

func TestQueueTimeoutAndCancel(t *testing.T) {
	q := NewQueue(time.Millisecond)
	a, err := q.Ask(context.Background(), Request{SessionID: "s", CallID: "c1"})
	require.NoError(t, err)
	assert.Equal(t, "timeout", a.By)
	assert.False(t, a.Allow)
	assert.ErrorIs(t, q.Decide("s", "c1", true, false), ErrDecided, "a timed-out call is decided")

	q = NewQueue(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = q.Ask(ctx, Request{SessionID: "s", CallID: "c2"})
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Empty(t, q.Pending(""))
}

// TestGateInterrupted: a turn ending while its call waits for an answer
// fails the call with the context's error, and records the call as
// denied by interrupt, with the cancellation's cause as the reason.
func TestGateInterrupted(t *testing.T) {
	rules, _ := NewRules(map[string]string{"edit": "ask"})
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{nil, "the turn was interrupted before anyone answered"},
		{errors.New("the server is stopping"), "the turn was interrupted before anyone answered (the server is stopping)"},
	} {
		runs := 0
		q := NewQueue(time.Hour)
		tl := NewGate(rules, q, func(string) []string { return []string{"Write", "edit"} }).Wrap([]*tools.Tool{counted("Write", &runs)})[0]
		rec := &recorder{}
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := tl.Run(WithCall(ctx, rec.call("c1")), json.RawMessage(`{"path":"/x"}`))
			done <- err
		}()
		require.Eventually(t, func() bool { return len(q.Pending("")) == 1 }, 10*time.Second, time.Millisecond)
		cancel(tc.cause)
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "the call did not end within 10s of its cancellation")
		}
		assert.Zero(t, runs)
		assert.Equal(t, []string{sessions.TypeApprovalRequested, sessions.TypeApprovalDecided}, rec.types())
		assert.Equal(t, []sessions.ApprovalDecided{{CallID: "c1", ToolName: "Write", Decision: "deny", By: "interrupt", Rule: "edit: ask", Reason: tc.want}}, rec.decided(t))
	}
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct{ tool, args, want string }{
		{"StrReplace", `{"path":"/src/x.go","oldText":"a"}`, "StrReplace on /src/x.go"},
		{"Shell", `{"command":"rm -rf build"}`, "Shell: rm -rf build"},
		{"WebFetch", `{"url":"https://example.com"}`, "WebFetch of https://example.com"},
		{"mcp__github__create_issue", `{"title":"x","body":"y"}`, `mcp__github__create_issue with body="y", title="x"`},
		{"Task", `{}`, "Task"},
		{"Write", `{"path":"/a\u001b[2J\n"}`, `Write on /a\x1b[2J\n`},
		{"Write", `{"path":"/` + strings.Repeat("é", 200) + `"}`, "Write on /" + strings.Repeat("é", 99) + "…"},
	} {
		assert.Equal(t, tc.want, Summary(tc.tool, json.RawMessage(tc.args)), "Summary(%s, %s)", tc.tool, tc.args)
	}
}
