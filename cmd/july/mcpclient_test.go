package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMCPServerOverHTTP connects an agent to `july mcp` of another agent
// (examples/notes) over streamable HTTP, with the URL and a header from
// the environment: july run calls its Read through the scripted model,
// july tools lists the narrowed tool with its schema, july validate lists
// what the server offers, and an unreachable server is a problem.
func TestMCPServerOverHTTP(t *testing.T) {
	notes, err := filepath.Abs(filepath.Join("..", "..", "examples", "notes"))
	require.NoError(t, err)
	srv := julyCommand(t, "mcp", notes, "--http", "127.0.0.1:0")
	stderr, err := srv.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	m := regexp.MustCompile(`at (http://\S+/)`).FindStringSubmatch(line)
	require.NotNil(t, m, line)

	agent := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(agent, name), []byte(text), 0o644))
	}
	write("agent.yaml", `name: caller
model: script:s.yaml
root:
  /:
    temp: {}
mcp:
  notes: {url: "${NOTES_URL}", headers: {X-Caller: "${CALLER_TOKEN}"}}
tools: [read, "mcp:notes/Read"]
`)
	write("s.yaml", `
turns:
  - message: {contains: go}
    replies:
      - calls:
          - {tool: mcp__notes__Read, args: {path: /a.txt}}
      - expect:
          - {tool: mcp__notes__Read, contains: hi, error: false}
        text: the other agent says hi
`)
	env := append(os.Environ(), "NOTES_URL="+m[1], "CALLER_TOKEN=not-a-real-token")
	run := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := julyCommand(t, args...)
		cmd.Env = env
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		code := 0
		if err := cmd.Run(); err != nil {
			code = cmd.ProcessState.ExitCode()
		}
		return out.String(), errOut.String(), code
	}

	out, errOut, code := run("run", agent, "-m", "go", "--state-root", t.TempDir())
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "the other agent says hi")
	assert.NotContains(t, errOut, "warning")

	out, errOut, code = run("tools", agent)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"name": "mcp__notes__Read"`)
	assert.NotContains(t, out, `"name": "mcp__notes__Write"`, "the allowlist narrows the server's tools")
	assert.Contains(t, out, `"effect": "read"`)
	assert.Contains(t, out, `"mcpServers"`)

	out, errOut, code = run("validate", agent)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "mcp server notes: 1 tools: mcp__notes__Read\n")

	write("agent.yaml", "name: caller\nroot:\n  /:\n    temp: {}\nmcp:\n  gone: {url: \"http://127.0.0.1:1/mcp\", headers: {Authorization: \"Bearer ${CALLER_TOKEN}\"}}\n")
	_, errOut, code = run("validate", agent)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "mcp: mcp server gone:")
	assert.NotContains(t, errOut, "not-a-real-token")

	write("agent.yaml", "name: caller\nroot:\n  /:\n    temp: {}\nmcp:\n  notes: {url: \"${NOTES_URL}\"}\ntools: [\"mcp:notes/Nope\", \"mcp:other/*\"]\n")
	_, errOut, code = run("validate", agent)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `tools: "mcp:other/*" names the MCP server "other", which mcp: does not configure (it configures notes)`)
	write("agent.yaml", "name: caller\nroot:\n  /:\n    temp: {}\nmcp:\n  notes: {url: \"${NOTES_URL}\"}\ntools: [\"mcp:notes/Nope\"]\n")
	_, errOut, code = run("validate", agent)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "mcp server notes: the allowlist names tool Nope, which the server does not list")

	// An approvals: key naming a tool the server does not list: july
	// validate connects and says so (agent.yaml alone cannot tell).
	write("agent.yaml", "name: caller\nroot:\n  /:\n    temp: {}\nmcp:\n  notes: {url: \"${NOTES_URL}\"}\napprovals: {\"mcp:notes/Wrte\": ask, \"mcp:notes/Write\": ask, \"mcp:notes/*\": ask}\n")
	_, errOut, code = run("validate", agent)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `approvals.mcp:notes/Wrte: mcp server notes does not list the tool "Wrte" (it lists `)
	assert.NotContains(t, errOut, "approvals.mcp:notes/Write")
	assert.NotContains(t, errOut, "approvals.mcp:notes/*")
}
