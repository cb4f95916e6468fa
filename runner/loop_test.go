package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/script"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs"
)

// loopFixture is an agent, its bound tree and a durable session.
type loopFixture struct {
	agent *Agent
	sess  *Session
	store *sessions.Store
	log   *sessions.Log
}

// newLoopFixture loads the agent archive, opens it with opts and creates a
// session in a temporary state root.
func newLoopFixture(t *testing.T, archive string, opts SessionOptions) *loopFixture {
	t.Helper()
	a, err := Load(agentDir(t, archive))
	require.NoError(t, err)
	s, err := a.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	st := sessions.New(t.TempDir())
	l, err := st.Create(sessions.Meta{Agent: a.Config.Name})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return &loopFixture{agent: a, sess: s, store: st, log: l}
}

func (f *loopFixture) loop(t *testing.T, scriptYAML string, opts LoopOptions) *Loop {
	t.Helper()
	m, err := script.Parse([]byte(scriptYAML), "test.yaml")
	require.NoError(t, err)
	opts.Model = m
	l, err := NewLoop(f.sess, f.log, opts)
	require.NoError(t, err)
	return l
}

// types lists the types of events.
func types(evs []sessions.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

// results decodes the action.result events.
func results(t *testing.T, evs []sessions.Event) []sessions.ActionResult {
	var out []sessions.ActionResult
	for _, e := range evs {
		if e.Type == sessions.TypeActionResult {
			var d sessions.ActionResult
			require.NoError(t, json.Unmarshal(e.Data, &d))
			out = append(out, d)
		}
	}
	return out
}

const readWriteScript = `
turns:
  - message: {contains: go}
    replies:
      - calls:
          - {tool: Read, args: {path: /a.txt}}
      - expect:
          - {tool: Read, contains: hi, error: false}
        calls:
          - {tool: Write, args: {path: /b.txt, contents: "from the loop\n"}}
      - expect:
          - {contains: Wrote contents to /b.txt}
        text: done
`

func TestLoopTurnOnRoots(t *testing.T) {
	for name, root := range map[string]string{
		"temp":  "root:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n",
		"local": "root:\n  /:\n    local: ./tree\n",
		"union": "root:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n  /docs:\n    local: ./tree\n    ro: true\n",
	} {
		t.Run(name, func(t *testing.T) {
			f := newLoopFixture(t, "-- agent.yaml --\nname: x\n"+root+"-- tree/a.txt --\nhi\n", SessionOptions{})
			var seen []string
			l := f.loop(t, readWriteScript, LoopOptions{OnEvent: func(e sessions.Event) { seen = append(seen, e.Type) }})
			res, err := l.Run(context.Background(), "go")
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			assert.Equal(t, 3, res.Steps)
			assert.Positive(t, res.Usage.InputTokens)
			want := []string{"message.received", "turn.started",
				"actions.requested", "action.result", "actions.requested", "action.result",
				"message.completed", "turn.completed"}
			evs := f.log.Events()
			assert.Equal(t, want, types(evs))
			assert.Equal(t, want, seen, "OnEvent sees every event in order")
			data, err := f.sess.FS().Read(context.Background(), "/b.txt")
			require.NoError(t, err)
			assert.Equal(t, "from the loop\n", string(data))
			if name == "local" {
				disk, err := os.ReadFile(filepath.Join(f.agent.Dir, "tree", "b.txt"))
				require.NoError(t, err)
				assert.Equal(t, "from the loop\n", string(disk))
			}
			var done sessions.TurnCompleted
			require.NoError(t, json.Unmarshal(evs[len(evs)-1].Data, &done))
			assert.Equal(t, "done", done.Result)
			assert.Equal(t, res.Usage, done.Usage)
			assert.Equal(t, 1, f.log.Meta().Turns)
		})
	}
}

// barrierFS makes each Read of /a.txt and /b.txt wait until n of them are
// in flight at once: a loop that ran them one at a time would time out.
type barrierFS struct {
	vfs.FileSystem
	n       int
	mu      sync.Mutex
	waiting int
	open    chan struct{}
}

func (b *barrierFS) Read(ctx context.Context, p string) ([]byte, error) {
	if p != "/a.txt" && p != "/b.txt" {
		return b.FileSystem.Read(ctx, p)
	}
	b.mu.Lock()
	b.waiting++
	if b.waiting == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-time.After(10 * time.Second):
		return nil, errors.New("reads did not run concurrently")
	}
	return b.FileSystem.Read(ctx, p)
}

func TestLoopReadsConcurrentWritesInOrder(t *testing.T) {
	base := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp:\n      /a.txt: \"A\\n\"\n      /b.txt: \"B\\n\"\n", SessionOptions{})
	tree := &barrierFS{FileSystem: base.sess.FS(), n: 2, open: make(chan struct{})}
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\n", SessionOptions{Root: tree})
	l := f.loop(t, `
turns:
  - replies:
      - calls:
          - {tool: Read, args: {path: /a.txt}}
          - {tool: Read, args: {path: /b.txt}}
          - {tool: Write, args: {path: /c.txt, contents: "C1"}}
          - {tool: StrReplace, args: {path: /c.txt, oldText: C1, newText: C2}}
          - {tool: Grep, args: {pattern: C2, path: /}}
      - expect:
          - {contains: A}
          - {contains: B}
          - {contains: /c.txt}
          - {contains: '"occurrencesModified":1'}
          - {contains: /c.txt}
        text: ok
`, LoopOptions{})
	_, err := l.Run(context.Background(), "go")
	require.NoError(t, err)
	rs := results(t, f.log.Events())
	require.Len(t, rs, 5)
	for i, want := range []string{"call_1_1_1", "call_1_1_2", "call_1_1_3", "call_1_1_4", "call_1_1_5"} {
		assert.Equal(t, want, rs[i].CallID, "results in the model's order")
		assert.False(t, rs[i].IsError, rs[i].Output)
	}
}

func TestLoopBadCallsGoBackToTheModel(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\n", SessionOptions{})
	l := f.loop(t, `
turns:
  - replies:
      - calls:
          - {tool: Read, args: '{"path": '}
          - {tool: Nope, args: {}}
          - {tool: Read, args: {path: 3}}
      - expect:
          - {error: true, contains: "invalid arguments for Read: arguments are not valid JSON"}
          - {error: true, contains: 'unknown tool "Nope"; available: Read'}
          - {error: true, contains: "invalid arguments for Read"}
        text: recovered
`, LoopOptions{})
	res, err := l.Run(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "recovered", res.Text)
	var req sessions.ActionsRequested
	evs := f.log.Events()
	require.NoError(t, json.Unmarshal(evs[2].Data, &req))
	assert.Equal(t, `{"path": `, req.Calls[0].RawArgs, "malformed arguments are kept as written")
}

func TestLoopStepLimit(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\n", SessionOptions{})
	l := f.loop(t, `
turns:
  - replies:
      - calls: [{tool: LS, args: {}}]
      - calls: [{tool: LS, args: {}}]
      - calls: [{tool: LS, args: {}}]
      - text: never
`, LoopOptions{MaxSteps: 2})
	_, err := l.Run(context.Background(), "go")
	var te *TurnError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "step limit reached: 2 model calls without a final reply (max steps 2)", te.Message)
	evs := f.log.Events()
	last := evs[len(evs)-1]
	assert.Equal(t, sessions.TypeTurnFailed, last.Type)
	assert.Contains(t, string(last.Data), "step limit reached: 2")
}

func TestLoopScriptMismatchFailsTheTurn(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n", SessionOptions{})
	l := f.loop(t, `
turns:
  - replies:
      - calls: [{tool: Read, args: {path: /a.txt}}]
      - expect: [{contains: hello}]
        text: never
`, LoopOptions{})
	_, err := l.Run(context.Background(), "go")
	var te *TurnError
	require.ErrorAs(t, err, &te)
	assert.Contains(t, te.Message, "script test.yaml:5: turn 1 reply 2: result 1 disagrees with the script")
	assert.Contains(t, te.Message, "--- script\n+++ run\n")
	assert.Contains(t, te.Message, "-contains: hello\n+     1\thi")
}

func TestLoopCommit(t *testing.T) {
	const agent = "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n"
	const writeThenReply = `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /a.txt, contents: changed}}]
      - text: the decision
`
	t.Run("ok", func(t *testing.T) {
		f := newLoopFixture(t, agent, SessionOptions{})
		var got []string
		l := f.loop(t, writeThenReply, LoopOptions{Commit: func(_ context.Context, text string) error { got = append(got, text); return nil }})
		_, err := l.Run(context.Background(), "go")
		require.NoError(t, err)
		assert.Equal(t, []string{"the decision"}, got)
	})
	t.Run("error fails the turn", func(t *testing.T) {
		f := newLoopFixture(t, agent, SessionOptions{})
		l := f.loop(t, writeThenReply, LoopOptions{Commit: func(context.Context, string) error { return errors.New("boom") }})
		_, err := l.Run(context.Background(), "go")
		var te *TurnError
		require.ErrorAs(t, err, &te)
		assert.Equal(t, "commit: boom", te.Message)
		evs := f.log.Events()
		assert.Equal(t, sessions.TypeTurnFailed, evs[len(evs)-1].Type)
	})
	t.Run("empty text fails the turn", func(t *testing.T) {
		f := newLoopFixture(t, agent, SessionOptions{})
		called := false
		l := f.loop(t, "turns:\n  - replies:\n      - text: \"\"\n", LoopOptions{Commit: func(context.Context, string) error { called = true; return nil }})
		_, err := l.Run(context.Background(), "go")
		var te *TurnError
		require.ErrorAs(t, err, &te)
		assert.Contains(t, te.Message, "the final reply is empty")
		assert.False(t, called)
	})
	t.Run("dry run stubs writes and skips it", func(t *testing.T) {
		f := newLoopFixture(t, agent, SessionOptions{DryRun: true})
		called := false
		l := f.loop(t, writeThenReply, LoopOptions{Commit: func(context.Context, string) error { called = true; return errors.New("must not run") }})
		res, err := l.Run(context.Background(), "go")
		require.NoError(t, err)
		assert.Equal(t, "the decision", res.Text)
		assert.False(t, called)
		rs := results(t, f.log.Events())
		require.Len(t, rs, 1)
		assert.True(t, rs[0].Stubbed)
		data, err := f.sess.FS().Read(context.Background(), "/a.txt")
		require.NoError(t, err)
		assert.Equal(t, "hi\n", string(data), "a dry run changes nothing")
		assert.Contains(t, string(f.log.Events()[1].Data), `"dryRun":true`)
	})
}

func TestLoopScratchPerTurnAndSession(t *testing.T) {
	archive := "-- agent.yaml --\nname: x\nroot:\n  /:\n    local: ./tree\n-- tree/a.txt --\nhi\n"
	dir := agentDir(t, archive)
	a, err := Load(dir)
	require.NoError(t, err)
	require.True(t, a.Plan.ScratchTmp)
	open := func() (*Session, *sessions.Log) {
		s, err := a.Open(context.Background(), SessionOptions{})
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		l, err := sessions.New(t.TempDir()).Create(sessions.Meta{})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		return s, l
	}
	parse := func(y string) model.Model {
		m, err := script.Parse([]byte(y), "t.yaml")
		require.NoError(t, err)
		return m
	}
	s1, log1 := open()
	l1, err := NewLoop(s1, log1, LoopOptions{Model: parse(`
turns:
  - replies:
      - calls:
          - {tool: Write, args: {path: /tmp/scratch.txt, contents: s}}
          - {tool: Write, args: {path: /kept.txt, contents: k}}
          - {tool: Read, args: {path: /tmp/scratch.txt}}
      - expect: [{error: false}, {error: false}, {contains: s, error: false}]
        text: one
  - replies:
      - calls:
          - {tool: Read, args: {path: /tmp/scratch.txt}}
          - {tool: Read, args: {path: /kept.txt}}
      - expect:
          - {error: true, contains: "not found: /tmp/scratch.txt"}
          - {error: false, contains: k}
        text: two
`)})
	require.NoError(t, err)
	_, err = l1.Run(context.Background(), "1")
	require.NoError(t, err)
	_, err = l1.Run(context.Background(), "2")
	require.NoError(t, err, "the next turn has an empty /tmp, the root keeps its files")

	s2, log2 := open()
	l2, err := NewLoop(s2, log2, LoopOptions{Model: parse(`
turns:
  - replies:
      - calls:
          - {tool: Read, args: {path: /tmp/scratch.txt}}
          - {tool: Read, args: {path: /kept.txt}}
      - expect:
          - {error: true, contains: "not found: /tmp/scratch.txt"}
          - {error: false, contains: k}
        text: other session
`)})
	require.NoError(t, err)
	_, err = l2.Run(context.Background(), "1")
	require.NoError(t, err, "another session does not see the first one's /tmp")
	_, err = os.Stat(filepath.Join(dir, "tree", "tmp"))
	assert.True(t, os.IsNotExist(err), "scratch never reaches the disk")
}

func TestLoopResumeReplaysHistory(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n      /AGENTS.md: \"Always be brief.\\n\"\n", SessionOptions{})
	const twoTurns = `
turns:
  - message: {contains: "Always be brief."}
    replies:
      - text: "look"
        calls: [{tool: Read, args: {path: /a.txt}}, {tool: Read, args: '{bad'}]
      - text: first
  - message: {matches: '^second$'}
    replies:
      - calls: [{tool: LS, args: {}}]
      - text: second reply
`
	l := f.loop(t, twoTurns, LoopOptions{})
	_, err := l.Run(context.Background(), "first")
	require.NoError(t, err)
	live := l.History()
	assert.Equal(t, live, Replay(f.log.Events()), "the log replays to the conversation the model saw")
	require.NoError(t, f.log.Close())

	// Another process: reopen, replay, continue.
	log2, warns, err := f.store.Resume(f.log.ID())
	require.NoError(t, err)
	defer log2.Close()
	assert.Empty(t, warns)
	f.log = log2
	l2 := f.loop(t, twoTurns, LoopOptions{})
	assert.Equal(t, live, l2.History())
	res, err := l2.Run(context.Background(), "second")
	require.NoError(t, err, "turn 2's message carries no AGENTS.md preamble")
	assert.Equal(t, "second reply", res.Text)
	h := l2.History()
	assert.Equal(t, h, Replay(log2.Events()))
	require.Len(t, h[0].Content, 2, "the first message has the preamble part")
	assert.Contains(t, h[0].Content[0].Text, "Always be brief.")
	assert.Equal(t, 2, log2.Meta().Turns)
}

func TestLoopInterrupted(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\n", SessionOptions{})
	l := f.loop(t, `
turns:
  - replies:
      - sleep: 1h
        text: never
  - replies:
      - text: still usable
`, LoopOptions{OnEvent: func(e sessions.Event) {}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := l.Run(ctx, "slow")
		done <- err
	}()
	// Cancel once the turn has started.
	require.Eventually(t, func() bool { return len(f.log.Events()) >= 2 }, 10*time.Second, time.Millisecond)
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		require.FailNow(t, "the turn did not end after cancel")
	}
	var te *TurnError
	require.ErrorAs(t, err, &te)
	assert.True(t, te.Interrupted())
	evs := f.log.Events()
	assert.Equal(t, sessions.TypeTurnFailed, evs[len(evs)-1].Type)
	assert.JSONEq(t, `{"message":"turn interrupted","usage":{"inputTokens":0,"outputTokens":0,"cacheReadTokens":0,"cacheWriteTokens":0}}`, string(evs[len(evs)-1].Data))
	res, err := l.Run(context.Background(), "next")
	require.NoError(t, err)
	assert.Equal(t, "still usable", res.Text)
}

func TestSystemPrompt(t *testing.T) {
	a, err := Load(agentDir(t, `
-- agent.yaml --
name: x
root:
  /:
    local: ./tree
  /docs:
    local: ./docs
    ro: true
  /mem:
    temp: {}
-- instructions.md --
Be useful.
-- tree/a --
-- docs/b --
`))
	require.NoError(t, err)
	p := a.SystemPrompt()
	assert.True(t, strings.HasPrefix(p, "Be useful.\n\n# Environment\n\nWorkspace Path: /\n"), p)
	for _, want := range []string{
		"there is no shell",
		"- /: read-write, files on disk (local): changes are kept\n",
		"- /docs: read-only (writes fail with \"read-only mount: PATH\"), files on disk (local)\n",
		"- /mem: read-write, an in-memory tree (temp)",
		"- /tmp: scratch, empty at the start of every turn",
		"Use the tools (Read, LS, Grep, Glob, Write, StrReplace, Delete, SemanticSearch)",
	} {
		assert.Contains(t, p, want)
	}
	assert.NotContains(t, p, a.Dir, "no host path under a root")

	host, err := Load(agentDir(t, "-- agent.yaml --\nname: h\nlocal:\n  cwd: ./w\ntools: [read, shell]\n-- w/a --\n"))
	require.NoError(t, err)
	hp := host.SystemPrompt()
	assert.Contains(t, hp, "Workspace Path: "+host.Cwd+"\n")
	assert.Contains(t, hp, "Shell runs bash in that directory.")
}

func TestRunProblems(t *testing.T) {
	a, err := Load(agentDir(t, "-- agent.yaml --\nname: x\ntools: [read, readLints, updateTodos]\n"))
	require.NoError(t, err)
	var got []string
	for _, p := range a.RunProblems("") {
		got = append(got, p.String())
	}
	assert.Equal(t, []string{
		`tools: "readLints" is not served: july has no language service to run diagnostics, and an agent that lists it must not run without it. Remove "readLints" from tools`,
	}, got)
	bad, err := Load(agentDir(t, "-- agent.yaml --\nname: x\nmodel: gemini:pro\nroot:\n  /:\n    temp: {}\n"))
	require.NoError(t, err)
	ps := bad.RunProblems("")
	require.Len(t, ps, 1)
	assert.Equal(t, `model: model "gemini:pro": unknown provider "gemini" (want openai, anthropic or script)`, ps[0].String())
	assert.Empty(t, bad.RunProblems("script:x.yaml"), "--model replaces agent.yaml's model")

	noEnv := func(string) string { return "" }
	_, err = ResolveModel("openai:gpt-4.1", model.Options{Getenv: noEnv})
	assert.ErrorContains(t, err, "openai: no API key: set OPENAI_API_KEY")
	_, err = ResolveModel("claude-sonnet-4-5", model.Options{Getenv: noEnv})
	assert.ErrorContains(t, err, "anthropic: no API key: set ANTHROPIC_API_KEY")
	desc, err := DescribeModel("claude-sonnet-4-5")
	require.NoError(t, err)
	assert.Equal(t, "anthropic:claude-sonnet-4-5 (provider inferred from the name claude-sonnet-4-5)", desc)
}

// idlessModel asks for one call without an id, then replies.
type idlessModel struct{}

func (idlessModel) Name() string { return "idless" }

func (idlessModel) Generate(_ context.Context, req *model.Request, _ func(model.Delta)) (*model.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == model.RoleTool {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: []model.Part{model.TextPart(last.ToolResults[0].CallID)}}}, nil
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{Name: "LS", Args: []byte(`{}`)}}}}, nil
}

func TestLoopCallWithoutID(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\n", SessionOptions{})
	l, err := NewLoop(f.sess, f.log, LoopOptions{Model: idlessModel{}})
	require.NoError(t, err)
	res, err := l.Run(context.Background(), "go")
	require.NoError(t, err)
	assert.Equal(t, "call_1_1", res.Text, "the result carries the id the loop gave the call")
	assert.Equal(t, l.History(), Replay(f.log.Events()))
}

// TestLoopKeepsTempMountsWithTheSession continues a session on a temp
// root in a second binding of the tree (as a new process would): the
// files the first turn wrote and deleted are as it left them, and the
// local mount nested under the temp one is not copied.
func TestLoopKeepsTempMountsWithTheSession(t *testing.T) {
	dir := agentDir(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp:\n      /a.txt: \"seeded\\n\"\n  /docs:\n    local: ./docs\n    ro: true\n-- docs/d.md --\ndoc\n")
	a, err := Load(dir)
	require.NoError(t, err)
	st := sessions.New(t.TempDir())
	const twoTurns = `
turns:
  - replies:
      - calls:
          - {tool: Write, args: {path: /notes/b.txt, contents: kept}}
          - {tool: Delete, args: {path: /a.txt}}
          - {tool: Write, args: {path: /tmp/scratch, contents: not kept}}
      - expect: [{error: false}, {error: false}, {error: false}]
        text: one
  - replies:
      - calls:
          - {tool: Read, args: {path: /notes/b.txt}}
          - {tool: Read, args: {path: /a.txt}}
          - {tool: Read, args: {path: /docs/d.md}}
      - expect:
          - {contains: kept}
          - {error: true, contains: "not found: /a.txt"}
          - {contains: doc}
        text: two
`
	m, err := script.Parse([]byte(twoTurns), "t.yaml")
	require.NoError(t, err)

	s1, err := a.Open(context.Background(), SessionOptions{})
	require.NoError(t, err)
	log1, err := st.Create(sessions.Meta{Agent: "x"})
	require.NoError(t, err)
	l1, err := NewLoop(s1, log1, LoopOptions{Model: m})
	require.NoError(t, err)
	_, err = l1.Run(context.Background(), "1")
	require.NoError(t, err)
	require.NoError(t, log1.Close())
	require.NoError(t, s1.Close())

	state, err := os.ReadFile(filepath.Join(log1.Dir(), TempStateFile))
	require.NoError(t, err)
	assert.JSONEq(t, `{"mounts":{"/":{"/notes/b.txt":"a2VwdA=="}}}`, string(state), "only the temp mount's own files")

	s2, err := a.Open(context.Background(), SessionOptions{})
	require.NoError(t, err)
	defer s2.Close()
	log2, _, err := st.Resume(log1.ID())
	require.NoError(t, err)
	defer log2.Close()
	l2, err := NewLoop(s2, log2, LoopOptions{Model: m})
	require.NoError(t, err)
	res, err := l2.Run(context.Background(), "2")
	require.NoError(t, err)
	assert.Equal(t, "two", res.Text)

	// A new session starts from agent.yaml's seed.
	s3, err := a.Open(context.Background(), SessionOptions{})
	require.NoError(t, err)
	defer s3.Close()
	data, err := s3.FS().Read(context.Background(), "/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "seeded\n", string(data))
}

// TestReplayGoldenSession replays the frozen session in
// runner/sessions/testdata/v1 into the conversation its model saw.
func TestReplayGoldenSession(t *testing.T) {
	_, evs, _, err := sessions.New("sessions/testdata/v1").Read("ses_01M8R15GBYMZFE8TYJHBP6M39Q")
	require.NoError(t, err)
	h := Replay(evs)
	var roles []string
	for _, m := range h {
		roles = append(roles, string(m.Role))
	}
	assert.Equal(t, []string{"user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant", "user"}, roles)
	assert.Equal(t, "Read", h[1].ToolCalls[0].Name)
	assert.Equal(t, "call_1_1_1", h[2].ToolResults[0].CallID)
	assert.Equal(t, "     1\thi", h[2].ToolResults[0].Content[0].Text)
	assert.Equal(t, "I read /a.txt, found its one line with Grep, and wrote the summary to /summary.md.", h[7].Text())
	assert.Equal(t, "And shorter?", h[8].Text())
}
