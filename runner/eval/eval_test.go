package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/eval"
	"github.com/julyfs/julyfs/runner/sessions"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

// script is a scripted model: read /a.txt, write /out.md, reply.
const script = `
turns:
  - replies:
      - calls:
          - {tool: Read, args: {path: /a.txt}}
      - calls:
          - {tool: Write, args: {path: /out.md, contents: "hello from the eval\n"}}
      - text: Wrote /out.md.
`

// agent writes an agent on a local: root (tree/a.txt) with the script as
// s.yaml and the eval files, and loads it.
func agent(t *testing.T, evals map[string]string) *runner.Agent {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"agent.yaml": "name: e\nmodel: script:s.yaml\nroot:\n  /:\n    local: ./tree\n",
		"s.yaml":     script,
		"tree/a.txt": "hi\n",
	}
	for k, v := range evals {
		files["evals/"+k] = v
	}
	writeFiles(t, dir, files)
	a, err := runner.Load(dir)
	require.NoError(t, err)
	return a
}

func run(t *testing.T, a *runner.Agent, state string) []*eval.Result {
	t.Helper()
	cases, err := eval.Load(a.Dir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st := sessions.New(state)
	var out []*eval.Result
	for _, c := range cases {
		out = append(out, eval.Run(ctx, a, c, eval.Options{Store: st}))
	}
	return out
}

func TestPassingCaseLeavesTheTreeUntouched(t *testing.T) {
	a := agent(t, map[string]string{"ok.yaml": `
message: go
expect:
  succeeded: true
  reply: {contains: Wrote, matches: '^Wrote /out\.md\.$'}
  files:
    /out.md: {contains: hello}
    /a.txt: {contains: hi}
    /nothing.txt: {absent: true}
  called: [Read, Write]
  notCalled: [Delete]
  maxSteps: 3
  maxTokens: 100000
`})
	rs := run(t, a, t.TempDir())
	require.Len(t, rs, 1)
	r := rs[0]
	assert.True(t, r.Passed, "failures: %v", r.Failures)
	assert.Equal(t, "ok", r.Name)
	assert.Equal(t, 1, r.Turns)
	assert.Equal(t, 3, r.Steps)
	assert.Equal(t, []string{"Read", "Write"}, r.Called)
	assert.Positive(t, r.Tokens)
	_, err := os.Stat(filepath.Join(a.Dir, "tree", "out.md"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the eval wrote the agent's real tree")
}

func TestFailingAssertions(t *testing.T) {
	a := agent(t, nil)
	writeFiles(t, a.Dir, map[string]string{"evals/bad.yaml": `
- name: every-assertion-fails
  message: go
  expect:
    succeeded: false
    reply: {contains: nope}
    files:
      /out.md: {matches: '^bye'}
      /a.txt: {absent: true}
      /missing.md: {contains: x}
    called: [Grep]
    notCalled: [Write]
    maxSteps: 2
    maxTokens: 1
- message: go
  model: script:nothing.yaml
- turns: [go, again]
`})
	rs := run(t, a, t.TempDir())
	require.Len(t, rs, 3)
	assert.False(t, rs[0].Passed)
	assert.Equal(t, []string{
		"succeeded: false, but all 1 turn(s) completed",
		`reply does not contain "nope": "Wrote /out.md."`,
		`files: /a.txt exists (3 bytes), want it absent`,
		`files: /missing.md: not found: /missing.md`,
		`files: /out.md does not match "^bye": "hello from the eval\n"`,
		"called: Grep was not called (called: Read, Write)",
		"notCalled: Write was called",
		"maxSteps: 3 model calls, over 2",
	}, rs[0].Failures[:8])
	assert.Regexp(t, `^maxTokens: \d+ tokens, over 1$`, rs[0].Failures[8])

	assert.Equal(t, "bad/2", rs[1].Name)
	require.Len(t, rs[1].Failures, 1)
	assert.Contains(t, rs[1].Failures[0], "model: ")
	assert.Contains(t, rs[1].Failures[0], "nothing.yaml")

	// The script has one turn: the second turn fails the case.
	assert.Equal(t, "bad/3", rs[2].Name)
	assert.Equal(t, 2, rs[2].Turns)
	require.Len(t, rs[2].Failures, 1)
	assert.Contains(t, rs[2].Failures[0], "succeeded: turn 2 failed: ")
}

func TestLoadProblems(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"evals/a.yaml":    "message: hi\nexpect:\n  replied: {contains: x}\n  reply: {has: x}\n  files: {/x: {absent: true, contains: y}}\n",
		"evals/b.yaml":    "mesage: hi\n",
		"evals/c.yaml":    "message: hi\nexpect:\n  maxSteps: many\n  reply: {matches: '('}\n  called: Read\n",
		"evals/d.yaml":    "- message: one\n  name: same\n- message: two\n  name: same\n- just text\n",
		"evals/e.yaml":    "message: [\n",
		"evals/notes.txt": "not an eval\n",
	})
	_, err := eval.Load(dir)
	var le *eval.LoadError
	require.ErrorAs(t, err, &le)
	var got []string
	for _, p := range le.Problems {
		got = append(got, p.Error())
	}
	assert.Equal(t, []string{
		`evals/a.yaml:3: unknown assertion "replied" (known: succeeded, reply, files, called, notCalled, maxSteps, maxTokens)`,
		`evals/a.yaml:4: unknown check "has" (known: contains, matches)`,
		`evals/a.yaml:5: files: /x: absent: true with contains or matches can never pass`,
		`evals/b.yaml:1: unknown field "mesage" (known: name, model, message, turns, expect)`,
		`evals/b.yaml:1: no message: give message: TEXT (or turns: [TEXT, ...])`,
		`evals/c.yaml:3: maxSteps: want a number of model calls`,
		"evals/c.yaml:4: matches: error parsing regexp: missing closing ): `(`",
		`evals/c.yaml:5: called: want a list of tool names`,
		`evals/d.yaml:5: a case must be a mapping (message: and expect:)`,
		`evals/e.yaml:1: did not find expected node content`,
		`evals/d.yaml:3: case "same" is also at evals/d.yaml:1: give each case its own name`,
	}, got)
}

// TestHostShellAgentIsRefused: an agent with the host shell cannot run a
// case (its shell would write the host past the layer), and no session is
// made for it.
func TestHostShellAgentIsRefused(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"agent.yaml":   "name: h\nmodel: script:s.yaml\n",
		"s.yaml":       "turns:\n  - replies:\n      - text: hi\n",
		"evals/a.yaml": "message: hi\n",
	})
	t.Chdir(dir)
	a, err := runner.Load(dir)
	require.NoError(t, err)
	require.True(t, a.Plan.Shell)
	state := t.TempDir()
	rs := run(t, a, state)
	require.Len(t, rs, 1)
	assert.False(t, rs[0].Passed)
	assert.Contains(t, rs[0].Failures[0], "the agent has the host shell")
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	assert.Empty(t, list)
}
