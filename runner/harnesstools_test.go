package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/sessions"
)

const todoScript = `
turns:
  - replies:
      - calls:
          - {tool: UpdateTodos, args: {todos: [{id: "1", content: write the tests, status: in_progress}, {id: "2", content: write the docs}]}}
      - expect:
          - {tool: UpdateTodos, contains: "Todos (0 of 2 completed):\n- [~] 1: write the tests\n- [ ] 2: write the docs"}
        calls:
          - {tool: UpdateTodos, args: {merge: true, todos: [{id: "1", status: completed}, {id: "3", content: ship}]}}
      - expect:
          - {tool: UpdateTodos, contains: "Todos (1 of 3 completed):\n- [x] 1: write the tests\n- [ ] 2: write the docs\n- [ ] 3: ship"}
        calls:
          - {tool: UpdateTodos, args: {todos: [{id: "1", content: a}, {id: "1", content: b}]}}
      - expect:
          - {tool: UpdateTodos, error: true, contains: two todos have id}
        text: planned
  - replies:
      - calls:
          - {tool: ReadTodos}
      - expect:
          - {tool: ReadTodos, contains: "Todos (1 of 3 completed):"}
        text: still there
`

func TestTodosAreDurable(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: t\nroot:\n  /:\n    temp: {}\ntools: [updateTodos]\n", SessionOptions{})
	l := f.loop(t, todoScript, LoopOptions{})
	res, err := l.Run(t.Context(), "plan")
	require.NoError(t, err)
	assert.Equal(t, "planned", res.Text)
	data, err := os.ReadFile(filepath.Join(f.log.Dir(), TodosFile))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"status": "completed"`)

	// Another process: a new session binding and loop on the same log.
	s2, err := f.agent.Open(t.Context(), SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s2.Close() })
	f.sess = s2
	l2 := f.loop(t, todoScript, LoopOptions{})
	res, err = l2.Run(t.Context(), "again")
	require.NoError(t, err)
	assert.Equal(t, "still there", res.Text)

	// The events hold every update.
	n := 0
	for _, ev := range f.log.Events() {
		if ev.Type == sessions.TypeActionResult && strings.Contains(string(ev.Data), `"toolName":"UpdateTodos"`) {
			n++
		}
	}
	assert.Equal(t, 3, n)
}

// taskModel plays parent and child: a message starting with "CHILD:" is a
// subagent's, which writes a file and replies; the parent calls Task and
// replies with its result.
type taskModel struct {
	mu   sync.Mutex
	seen []string
}

func (m *taskModel) Name() string { return "task-model" }

func (m *taskModel) Generate(_ context.Context, req *model.Request, _ func(model.Delta)) (*model.Response, error) {
	first := req.Messages[0].Text()
	last := req.Messages[len(req.Messages)-1]
	m.mu.Lock()
	m.seen = append(m.seen, first)
	m.mu.Unlock()
	reply := func(text string) (*model.Response, error) {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: []model.Part{model.TextPart(text)}}}, nil
	}
	call := func(name, args string) (*model.Response, error) {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: name, Args: json.RawMessage(args)}}}}, nil
	}
	names := map[string]bool{}
	for _, tl := range req.Tools {
		names[tl.Name] = true
	}
	if strings.Contains(first, "CHILD:") {
		if names[NameTask] {
			return reply("the child must not have Task")
		}
		if last.Role == model.RoleTool {
			return reply("child wrote c.txt: " + last.ToolResults[0].Content[0].Text)
		}
		return call("Write", `{"path":"c.txt","contents":"from the child"}`)
	}
	if last.Role == model.RoleTool {
		return reply("parent got: " + last.ToolResults[0].Content[0].Text)
	}
	return call(NameTask, `{"description":"write c","prompt":"CHILD: write c.txt"}`)
}

func TestTaskRunsAChildSession(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: h\nlocal:\n  cwd: ./w\n-- w/a.txt --\nhi\n", SessionOptions{})
	require.Contains(t, f.agent.Plan.Harness, AllowTask)
	l, err := NewLoop(f.sess, f.log, LoopOptions{Model: &taskModel{}})
	require.NoError(t, err)
	res, err := l.Run(t.Context(), "delegate")
	require.NoError(t, err)
	assert.Contains(t, res.Text, "parent got: child wrote c.txt: Wrote contents to /c.txt")
	m := regexp.MustCompile(`\[subagent session (ses_\w+)\]`).FindStringSubmatch(res.Text)
	require.NotNil(t, m, res.Text)

	data, err := os.ReadFile(filepath.Join(f.agent.Cwd, "c.txt"))
	require.NoError(t, err)
	assert.Equal(t, "from the child", string(data))

	meta, events, _, err := f.store.Read(m[1])
	require.NoError(t, err)
	assert.Equal(t, f.log.ID(), meta.Parent)
	assert.Equal(t, 1, meta.Turns)
	assert.Equal(t, sessions.TypeTurnCompleted, events[len(events)-1].Type)

	// The parent's event names the child's session.
	found := false
	for _, ev := range f.log.Events() {
		if ev.Type == sessions.TypeActionResult && strings.Contains(string(ev.Data), m[1]) {
			found = true
		}
	}
	assert.True(t, found, "the parent's action.result links the child session")
}
