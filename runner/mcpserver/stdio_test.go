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

// TestStdioTransportSurvivesBadLines sends a server bad lines between good
// requests: each bad line gets its error response, and the requests after
// it are still served.
func TestStdioTransportSurvivesBadLines(t *testing.T) {
	a, err := runner.Load(fixtureAgent(t))
	require.NoError(t, err)
	s, err := a.Open(context.Background(), runner.SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	srv, err := New(s, Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, StdioTransport(inR, outW)); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			assert.Fail(t, "the server did not end after stdin closed")
		}
	})
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	// next returns the next response line, decoded.
	next := func() map[string]any {
		t.Helper()
		require.True(t, lines.Scan(), "no response: %v", lines.Err())
		var m map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m), "response %q", lines.Text())
		return m
	}
	send := func(line string) {
		t.Helper()
		_, err := io.WriteString(inW, line+"\n")
		require.NoError(t, err)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	resp := next()
	require.Equal(t, 1.0, resp["id"], "initialize: %v", resp)
	require.NotNil(t, resp["result"], "initialize: %v", resp)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for _, tc := range []struct {
		line    string
		id      any
		code    float64
		message string
	}{
		{`this is not json`, nil, -32700, "Parse error: invalid character 'h' in literal true (expecting 'r')"},
		{`{"jsonrpc":"2.0","id":3,`, nil, -32700, "Parse error: unexpected end of JSON input"},
		{`{"id":"x","method":"ping"}`, "x", -32600, `Invalid Request: invalid message version tag ""; expected "2.0"`},
		{`[]`, nil, -32600, "Invalid Request: empty batch"},
		{`42`, nil, -32600, "Invalid Request: "},
	} {
		send(tc.line)
		m := next()
		e, _ := m["error"].(map[string]any)
		assert.Equal(t, tc.id, m["id"], "%s: response %v", tc.line, m)
		if assert.NotNil(t, e, "%s: response %v, want an error", tc.line, m) {
			assert.Equal(t, tc.code, e["code"], "%s: response %v", tc.line, m)
			msg, _ := e["message"].(string)
			assert.True(t, strings.HasPrefix(msg, tc.message), "%s: response %v, want message %q...", tc.line, m, tc.message)
		}
	}
	send("") // blank lines are skipped
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Read","arguments":{"path":"/a.txt"}}}`)
	m := next()
	want := `{"content":[{"text":"     1\thi","type":"text"}]}`
	got, _ := json.Marshal(m["result"])
	assert.Equal(t, 2.0, m["id"], "Read after bad lines: %v", m)
	assert.Equal(t, want, string(got), "Read after bad lines")
}
