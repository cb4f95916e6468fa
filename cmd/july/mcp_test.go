package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// julyAgent writes a local-root agent over a tree with /a.txt = "hi" and
// returns its directory.
func julyAgent(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"agent.yaml": "name: child\nroot:\n  /:\n    local: ./tree\n",
		"tree/a.txt": "hi\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return dir
}

// julyCommand returns a july child process (the test binary, installed on
// $PATH as july by testscript.Main) bound to a context that ends with the
// test or after a minute.
func julyCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	july, err := exec.LookPath("july")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, july, args...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// TestMCPStdioKeepsServing pipes a line that is not JSON to july mcp
// between requests: the server answers it with a parse error and serves
// the next request.
func TestMCPStdioKeepsServing(t *testing.T) {
	cmd := julyCommand(t, "mcp", julyAgent(t))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		err := cmd.Wait()
		assert.NoError(t, err, "july mcp after stdin closed; stderr %q", stderr.String())
	})
	lines := bufio.NewScanner(stdout)
	roundTrip := func(send string) string {
		t.Helper()
		_, err := io.WriteString(stdin, send+"\n")
		require.NoError(t, err)
		if !lines.Scan() {
			require.FailNowf(t, "no reply", "no reply to %s: %v; stderr %q", send, lines.Err(), stderr.String())
		}
		return lines.Text()
	}
	init := roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.True(t, strings.HasPrefix(init, `{"jsonrpc":"2.0","id":1,"result":`), "initialize: %s", init)
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")

	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: invalid character 'g' looking for beginning of value"}}`
	assert.Equal(t, want, roundTrip(`garbage`), "garbage line: reply")
	want = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"     1\thi"}]}}`
	assert.Equal(t, want, roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Read","arguments":{"path":"/a.txt"}}}`), "Read after the garbage line: reply")
}

// TestIndexAsksFollower runs july mcp following an index and a july call
// on the same index: the call asks the running process, which holds the
// index, and its answer includes a file written just before.
func TestIndexAsksFollower(t *testing.T) {
	agent := julyAgent(t)
	idx := filepath.Join(t.TempDir(), "idx")
	srv := julyCommand(t, "mcp", "--http", "127.0.0.1:0", "--index", idx, agent)
	stderr, err := srv.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		srv.Process.Signal(os.Interrupt)
		srv.Wait()
	})
	// The server opens the index before it says it is serving.
	lines := bufio.NewScanner(stderr)
	require.True(t, lines.Scan(), "july mcp: %v", lines.Err())
	require.True(t, strings.HasPrefix(lines.Text(), "july mcp: serving agent child at http://"), "july mcp: %q", lines.Text())
	go io.Copy(io.Discard, stderr)

	// A file written behind the follower's back is found at once: the
	// follower catches up before it answers.
	require.NoError(t, os.WriteFile(filepath.Join(agent, "tree", "b.txt"), []byte("freshly written words\n"), 0o644))
	call := julyCommand(t, "call", agent, "SemanticSearch", `{"query":"freshly"}`, "--index", idx)
	var out, errOut bytes.Buffer
	call.Stdout, call.Stderr = &out, &errOut
	require.NoError(t, call.Run(), "stderr %q", errOut.String())
	assert.Contains(t, out.String(), "/b.txt:1")
	assert.Empty(t, errOut.String())
}
