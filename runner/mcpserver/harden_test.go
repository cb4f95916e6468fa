package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner"
)

// stdioServer runs a server on pipes and returns a writer for its stdin,
// a scanner over its stdout, and a channel that gets Run's result.
func stdioServer(t *testing.T) (*io.PipeWriter, *bufio.Scanner, <-chan error) {
	t.Helper()
	a, err := runner.Load(fixtureAgent(t))
	require.NoError(t, err)
	s, err := a.Open(context.Background(), runner.SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	srv, err := New(s, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, StdioTransport(inR, outW)); outW.Close() }()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	return inW, lines, done
}

func nextLine(t *testing.T, lines *bufio.Scanner) map[string]any {
	t.Helper()
	require.True(t, lines.Scan(), "no response: %v", lines.Err())
	var m map[string]any
	require.NoError(t, json.Unmarshal(lines.Bytes(), &m), "response %q", lines.Text())
	return m
}

func sendLine(t *testing.T, w io.Writer, line string) {
	t.Helper()
	_, err := io.WriteString(w, line+"\n")
	require.NoError(t, err)
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// TestStdioBatchRefused: a JSON-RPC batch (which MCP 2025-06-18 removed)
// gets -32600 and the server keeps serving; it used to reach the SDK, which
// closed the connection.
func TestStdioBatchRefused(t *testing.T) {
	in, lines, _ := stdioServer(t)
	sendLine(t, in, initLine)
	require.Equal(t, 1.0, nextLine(t, lines)["id"])
	sendLine(t, in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sendLine(t, in, `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`)
	m := nextLine(t, lines)
	e, _ := m["error"].(map[string]any)
	require.NotNil(t, e, "%v", m)
	assert.Nil(t, m["id"])
	assert.Equal(t, -32600.0, e["code"])
	assert.Equal(t, "Invalid Request: JSON-RPC batches are not supported; send one message per line", e["message"])
	sendLine(t, in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Read","arguments":{"path":"/a.txt"}}}`)
	m = nextLine(t, lines)
	assert.Equal(t, 2.0, m["id"])
	got, _ := json.Marshal(m["result"])
	assert.JSONEq(t, `{"content":[{"text":"     1\thi","type":"text"}]}`, string(got))
}

// TestStdioEOFAfterCall: a client that writes a tools/call and closes stdin
// at once still gets the call run and answered before the server ends.
func TestStdioEOFAfterCall(t *testing.T) {
	in, lines, done := stdioServer(t)
	sendLine(t, in, initLine+"\n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Write","arguments":{"path":"/new.txt","contents":"x"}}}`+"\n"+
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Read","arguments":{"path":"/a.txt"}}}`)
	require.NoError(t, in.Close())
	ids := map[float64]string{}
	for lines.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m))
		if id, ok := m["id"].(float64); ok {
			got, _ := json.Marshal(m["result"])
			ids[id] = string(got)
		}
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not end after stdin closed")
	}
	assert.Contains(t, ids, 1.0)
	assert.True(t, strings.Contains(ids[2], "Wrote contents to /new.txt"), "Write: %q", ids[2])
	assert.True(t, strings.Contains(ids[3], `1\thi`), "Read: %q", ids[3])
}
