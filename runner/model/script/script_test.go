package script

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
)

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"turns: [\n", "s.yaml:1: did not find expected node content"},
		{"turns:\n  - replies:\n      - text: a\n    bogus: 1\n", `s.yaml:4: unknown key "bogus" in a turn (want message, replies)`},
		{"turns:\n  - replies:\n      - calls: [{tool: Read}]\n", "s.yaml:3: the last reply of a turn must end it: text and no calls"},
		{"turns:\n  - replies:\n      - expect: [{matches: '('}]\n        text: x\n", "s.yaml:3: matches: error parsing regexp: missing closing ): `(`"},
		{"turns:\n  - replies:\n      - sleep: soon\n        text: x\n", `s.yaml:3: sleep: "soon" is not a duration (like 30s)`},
		{"turns:\n  - replies:\n      - calls: [{args: {}}]\n      - text: x\n", "s.yaml:3: a call needs tool"},
		{"turns: []\n", "s.yaml:1: no turns: want turns: [...]"},
		{"", "s.yaml:1: empty script: want turns: [...]"},
		{"turns:\n  - replies: []\n", "s.yaml:2: a turn needs replies"},
	} {
		_, err := Parse([]byte(tc.src), "s.yaml")
		if assert.Error(t, err, tc.src) {
			assert.Equal(t, tc.want, err.Error(), tc.src)
		}
	}
}

func TestNewResolvesAgainstDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s.yaml"), []byte("turns:\n  - replies:\n      - text: hi\n"), 0o644))
	m, err := New("s.yaml", model.Options{Dir: dir})
	require.NoError(t, err)
	assert.Equal(t, "script:s.yaml", m.Name())
	_, err = New("missing.yaml", model.Options{Dir: dir})
	assert.EqualError(t, err, "script missing.yaml: no such file or directory")
}

func user(s string) model.Message {
	return model.Message{Role: model.RoleUser, Content: []model.Part{model.TextPart(s)}}
}

func TestGenerateFollowsTheConversation(t *testing.T) {
	m, err := Parse([]byte(`
turns:
  - message: {contains: one}
    replies:
      - calls: [{tool: Read, args: {path: /a}}, {tool: LS, args: '{"x"'}]
      - expect: [{tool: Read, matches: '^hi$'}, {error: true}]
        text: first
  - replies:
      - text: second
`), "s.yaml")
	require.NoError(t, err)
	ctx := context.Background()
	var deltas []string
	onDelta := func(d model.Delta) { deltas = append(deltas, d.Text) }

	msgs := []model.Message{user("turn one")}
	r, err := m.Generate(ctx, &model.Request{Messages: msgs}, onDelta)
	require.NoError(t, err)
	require.Len(t, r.Message.ToolCalls, 2)
	assert.Equal(t, model.ToolCall{ID: "call_1_1_1", Name: "Read", Args: []byte(`{"path":"/a"}`)}, r.Message.ToolCalls[0])
	assert.Equal(t, `{"x"`, string(r.Message.ToolCalls[1].Args))
	assert.Equal(t, "tool_use", r.StopReason)

	msgs = append(msgs, r.Message, model.Message{Role: model.RoleTool, ToolResults: []model.ToolResult{
		{CallID: "call_1_1_1", Name: "Read", Content: []model.Part{model.TextPart("hi")}},
		{CallID: "call_1_1_2", Name: "LS", Content: []model.Part{model.TextPart("bad")}, IsError: true},
	}})
	r, err = m.Generate(ctx, &model.Request{Messages: msgs}, onDelta)
	require.NoError(t, err)
	assert.Equal(t, "first", r.Message.Text())
	assert.Equal(t, "end_turn", r.StopReason)
	assert.Positive(t, r.Usage.InputTokens)

	msgs = append(msgs, r.Message, user("two"))
	r, err = m.Generate(ctx, &model.Request{Messages: msgs}, onDelta)
	require.NoError(t, err)
	assert.Equal(t, "second", r.Message.Text())
	assert.Equal(t, []string{"first", "second"}, deltas)

	msgs = append(msgs, r.Message, user("three"))
	_, err = m.Generate(ctx, &model.Request{Messages: msgs}, nil)
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, "script s.yaml:8: the run is on turn 3 but the script has 2\n--- script\n+++ run\n@@ -0,0 +1 @@\n+message: three", err.Error())
}

func TestGenerateMismatch(t *testing.T) {
	m, err := Parse([]byte(`
turns:
  - message: {matches: '^yes'}
    replies:
      - calls: [{tool: Read, args: {}}]
      - expect: [{tool: Read, contains: wanted, error: false}]
        text: x
`), "s.yaml")
	require.NoError(t, err)
	_, err = m.Generate(context.Background(), &model.Request{Messages: []model.Message{user("no")}}, nil)
	assert.EqualError(t, err, "script s.yaml:3: turn 1: the message disagrees with the script\n--- script\n+++ run\n@@ -1 +1 @@\n-matches: ^yes\n+no")

	msgs := []model.Message{user("yes"), {Role: model.RoleAssistant}, {Role: model.RoleTool, ToolResults: []model.ToolResult{
		{Name: "Read", Content: []model.Part{model.TextPart("not found: /x")}, IsError: true}}}}
	_, err = m.Generate(context.Background(), &model.Request{Messages: msgs}, nil)
	assert.EqualError(t, err, "script s.yaml:6: turn 1 reply 2: result 1 disagrees with the script\n--- script\n+++ run\n@@ -1,3 +1,3 @@\n tool: Read\n-error: false\n-contains: wanted\n+error: true\n+not found: /x")

	// A user message where the script wants tool results.
	msgs = []model.Message{user("yes"), {Role: model.RoleAssistant}, user("again")}
	_, err = m.Generate(context.Background(), &model.Request{Messages: msgs}, nil)
	assert.ErrorContains(t, err, "the run is on turn 2 but the script has 1")
}

func TestGenerateSleepHonoursCancel(t *testing.T) {
	m, err := Parse([]byte("turns:\n  - replies:\n      - sleep: 1h\n        text: x\n"), "s.yaml")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = m.Generate(ctx, &model.Request{Messages: []model.Message{user("x")}}, nil)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
}

func TestDemoScriptParses(t *testing.T) {
	_, err := New("../../../examples/notes/demo.script.yaml", model.Options{})
	require.NoError(t, err)
}

// FuzzParse: any input parses or fails with a FILE:LINE message; a script
// that parses answers a first message without panicking.
func FuzzParse(f *testing.F) {
	demo, err := os.ReadFile("../../../examples/notes/demo.script.yaml")
	require.NoError(f, err)
	f.Add(demo)
	f.Add([]byte("turns:\n  - replies:\n      - text: hi\n"))
	f.Add([]byte("turns:\n  - replies:\n      - calls: [{tool: Read, args: '{bad'}]\n      - text: x\n"))
	f.Add([]byte("turns: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "f.yaml")
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "f.yaml"), "error without the file name: %v", err)
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // no sleeping
		m.Generate(ctx, &model.Request{Messages: []model.Message{user("x")}}, nil)
	})
}
