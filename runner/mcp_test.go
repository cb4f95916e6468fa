package runner

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
)

// everythingBin is @modelcontextprotocol/server-everything, which
// scripts/test installs in testdata/mcpservers; the test skips without
// node and fails when the package is missing.
func everythingBin(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		require.Empty(t, os.Getenv("CI"), "node is not installed, and CI must run the MCP tests: scripts/test expects node and npm on the machine")
		t.Skip("node is not installed: the MCP client tests need node; scripts/test installs server-everything")
	}
	bin, err := filepath.Abs(filepath.Join("testdata", "mcpservers", "node_modules", ".bin", "mcp-server-everything"))
	require.NoError(t, err)
	_, err = os.Stat(bin)
	require.NoError(t, err, "server-everything is not installed: run `npm ci` in runner/testdata/mcpservers (scripts/test does)")
	return bin
}

// mcpAgent is an agent on a temp root with server-everything as "every",
// and the extra agent.yaml lines.
func mcpAgent(t *testing.T, extra string) string {
	return fmt.Sprintf("-- agent.yaml --\nname: x\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\nmcp:\n  every: {command: [%q, stdio]}\n%s", everythingBin(t), extra)
}

func TestLoopCallsMCPTool(t *testing.T) {
	var warnings []string
	f := newLoopFixture(t, mcpAgent(t, ""), SessionOptions{MCPWarn: func(m string) { warnings = append(warnings, m) }})
	l := f.loop(t, `
turns:
  - message: {contains: echo}
    replies:
      - calls:
          - {tool: mcp__every__echo, args: {message: "hello from the loop"}}
      - expect:
          - {tool: mcp__every__echo, contains: "hello from the loop", error: false}
        text: done
`, LoopOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := l.Run(ctx, "please echo")
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text)
	got := results(t, f.log.Events())
	require.Len(t, got, 1)
	assert.Equal(t, "mcp__every__echo", got[0].ToolName)
	assert.False(t, got[0].IsError)
	assert.Empty(t, warnings)

	pid := f.sess.MCPPids()["every"]
	require.NotZero(t, pid)
	require.NoError(t, f.sess.Close())
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		require.True(t, time.Now().Before(deadline), "the MCP server %d outlived its session", pid)
		time.Sleep(20 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func TestLoopMCPDryRunStubsWrites(t *testing.T) {
	f := newLoopFixture(t, mcpAgent(t, ""), SessionOptions{DryRun: true})
	l := f.loop(t, `
turns:
  - message: {contains: go}
    replies:
      - calls:
          - {tool: mcp__every__toggle-simulated-logging, args: {}}
          - {tool: mcp__every__get-sum, args: {a: 1, b: 2}}
      - expect:
          - {tool: mcp__every__toggle-simulated-logging, contains: "dry run"}
          - {tool: mcp__every__get-sum, contains: "3"}
        text: done
`, LoopOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := l.Run(ctx, "go")
	require.NoError(t, err)
	got := results(t, f.log.Events())
	require.Len(t, got, 2)
	assert.True(t, got[0].Stubbed)
	assert.False(t, got[1].Stubbed)
}

func TestLoadMCPNarrowingFailsClosed(t *testing.T) {
	bin := everythingBin(t)
	_, err := Load(agentDir(t, fmt.Sprintf("-- agent.yaml --\nname: x\nmcp:\n  every: {command: [%q, stdio]}\n  bad__name: {url: \"ftp://x\"}\ntools: [read, mcp:nope/x, mcp:every]\n", bin)))
	ps := problemsOf(t, err)
	joined := strings.Join(ps, "\n")
	assert.Contains(t, joined, `mcp.bad__name: server name "bad__name"`)
	assert.Contains(t, joined, `mcp.bad__name: url "ftp://x": want an http or https URL`)
	assert.Contains(t, joined, `tools: "mcp:nope/x" names the MCP server "nope", which mcp: does not configure`)
	assert.Contains(t, joined, `tools: "mcp:every": write mcp:SERVER/TOOL or mcp:SERVER/*`)

	a, err := Load(agentDir(t, fmt.Sprintf("-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\nmcp:\n  every: {command: [%q, stdio]}\ntools: [read, mcp:every/echo, mcp:every/nope]\n", bin)))
	require.NoError(t, err)
	assert.True(t, a.Plan.ScratchTmp, "MCP results spill into /tmp under a root")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ts, status, closeFn := a.ConnectMCP(ctx)
	defer closeFn()
	require.Len(t, ts, 1)
	assert.Equal(t, "mcp__every__echo", ts[0].Name)
	require.Len(t, status, 1)
	assert.Equal(t, []string{"nope"}, status[0].Missing)
}

func TestLoopMCPServerNotInstalledWarns(t *testing.T) {
	var warnings []string
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\nmcp:\n  gone: {command: [/nonexistent/server]}\n",
		SessionOptions{MCPWarn: func(m string) { warnings = append(warnings, m) }})
	l := f.loop(t, "turns:\n  - replies:\n      - text: fine\n", LoopOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := l.Run(ctx, "hi")
	require.NoError(t, err, "a server that cannot start does not fail the turn")
	assert.Equal(t, "fine", res.Text)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "mcp server gone: starting /nonexistent/server: no such file or directory; its tools are offered once a later turn starts it")
}

// TestLoopMCPServerBackOnLaterTurn: a server that fails its first start
// offers no tools on that turn; the next turn starts it again and its
// tools are offered.
func TestLoopMCPServerBackOnLaterTurn(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started-once")
	script := `if [ -e "$MARKER" ]; then exec "$EVERY" stdio; fi; touch "$MARKER"; echo failing my first start >&2; exit 3`
	var warnings []string
	f := newLoopFixture(t, fmt.Sprintf("-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\nmcp:\n  flaky: {command: [sh, -c, %q], env: {MARKER: %q, EVERY: %q}}\n", script, marker, everythingBin(t)),
		SessionOptions{MCPWarn: func(m string) { warnings = append(warnings, m) }})
	l := f.loop(t, `
turns:
  - message: {contains: first}
    replies:
      - calls:
          - {tool: mcp__flaky__echo, args: {message: "too early"}}
      - expect:
          - {tool: mcp__flaky__echo, error: true, contains: "unknown tool"}
        text: not yet
  - message: {contains: second}
    replies:
      - calls:
          - {tool: mcp__flaky__echo, args: {message: "back again"}}
      - expect:
          - {tool: mcp__flaky__echo, contains: "back again", error: false}
        text: it is back
`, LoopOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := l.Run(ctx, "first")
	require.NoError(t, err)
	assert.Equal(t, "not yet", res.Text)
	require.Len(t, warnings, 1)
	assert.Contains(t, warnings[0], "mcp server flaky:")
	assert.Contains(t, warnings[0], "failing my first start")
	assert.Contains(t, warnings[0], "its tools are offered once a later turn starts it")
	res, err = l.Run(ctx, "second")
	require.NoError(t, err)
	assert.Equal(t, "it is back", res.Text)
	require.NotZero(t, f.sess.MCPPids()["flaky"])
}

// TestLoopMCPWithProvider runs a turn through the OpenAI adapter against a
// wire-level fake: the MCP tool is offered with its server's schema, the
// model's call reaches server-everything, and its result goes back.
func TestLoopMCPWithProvider(t *testing.T) {
	fake := &fakeProvider{
		sseFirst: []string{
			openAIChunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"mcp__every__get-sum","arguments":""}}]}`, ""),
			openAIChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":40,\"b\":2}"}}]}`, ""),
			openAIChunk(`{}`, "tool_calls"), openAIUsage, "data: [DONE]",
		},
		sseFinal: []string{
			openAIChunk(`{"role":"assistant","content":"42"}`, ""),
			openAIChunk(`{}`, "stop"), openAIUsage, "data: [DONE]",
		},
	}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	m, err := ResolveModel("openai:m", model.Options{Getenv: func(k string) string {
		return map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1"}[k]
	}})
	require.NoError(t, err)
	f := newLoopFixture(t, mcpAgent(t, ""), SessionOptions{})
	l, err := NewLoop(f.sess, f.log, LoopOptions{Model: m})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := l.Run(ctx, "what is 40+2?")
	require.NoError(t, err)
	assert.Equal(t, "42", res.Text)
	require.Len(t, fake.bodies, 2)
	assert.Contains(t, fake.bodies[0], `"name":"mcp__every__get-sum"`)
	assert.Contains(t, fake.bodies[0], `"First number"`, "the server's schema is offered")
	assert.Contains(t, fake.bodies[1], "42", "the tool's result goes back")
	got := results(t, f.log.Events())
	require.Len(t, got, 1)
	assert.False(t, got[0].IsError)
}
