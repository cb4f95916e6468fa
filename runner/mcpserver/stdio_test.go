package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/julyfs/julyfs/runner"
)

// TestStdioTransportSurvivesBadLines sends a server bad lines between good
// requests: each bad line gets its error response, and the requests after
// it are still served.
func TestStdioTransportSurvivesBadLines(t *testing.T) {
	a, err := runner.Load(fixtureAgent(t))
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Open(context.Background(), runner.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
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
			t.Error("the server did not end after stdin closed")
		}
	})
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	// next returns the next response line, decoded.
	next := func() map[string]any {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no response: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("response %q: %v", lines.Text(), err)
		}
		return m
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
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
		if m["id"] != tc.id || e == nil || e["code"] != tc.code || !strings.HasPrefix(e["message"].(string), tc.message) {
			t.Errorf("%s: response %v, want id %v, code %v, message %q...", tc.line, m, tc.id, tc.code, tc.message)
		}
	}
	send("") // blank lines are skipped
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Read","arguments":{"path":"/a.txt"}}}`)
	m := next()
	want := `{"content":[{"text":"     1\thi","type":"text"}]}`
	if got, _ := json.Marshal(m["result"]); m["id"] != 2.0 || string(got) != want {
		t.Errorf("Read after bad lines: %v, want id 2 and %s", m, want)
	}
}
