package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
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
		require.FailNow(t, "the server did not end after stdin closed")
	}
	assert.Contains(t, ids, 1.0)
	assert.True(t, strings.Contains(ids[2], "Wrote contents to /new.txt"), "Write: %q", ids[2])
	assert.True(t, strings.Contains(ids[3], `1\thi`), "Read: %q", ids[3])
}

// startJulyHTTP starts `july ARGS...` with extra environment, waits
// (bounded) for the address it prints, and stops it at cleanup. It
// returns the URL, or "" and the process's stderr when it exited first.
func startJulyHTTP(t *testing.T, july string, env []string, args ...string) (url, stderrText string) {
	t.Helper()
	cmd := exec.Command(july, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	var text strings.Builder
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			text.WriteString(sc.Text() + "\n")
			if _, u, ok := strings.Cut(sc.Text(), " at "); ok && strings.HasPrefix(u, "http://") {
				urls <- u
				break
			}
		}
		io.Copy(io.Discard, stderr)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case u := <-urls:
		return u, ""
	case err := <-exited:
		exited <- err
		return "", text.String()
	case <-time.After(time.Minute):
		require.FailNow(t, "july mcp --http printed nothing within a minute")
	}
	return "", ""
}

// TestHTTPTokenRequiredOffLoopback: --http on every interface without a
// token is refused; with one it serves.
func TestHTTPTokenRequiredOffLoopback(t *testing.T) {
	july := buildJuly(t)
	dir := fixtureAgent(t)
	url, stderr := startJulyHTTP(t, july, []string{TokenEnv + "="}, "mcp", "--http", ":0", dir)
	assert.Empty(t, url)
	assert.Contains(t, stderr, "--http :0 listens on ")
	assert.Contains(t, stderr, "not only on loopback: anyone who can reach it could use the agent's tools. Set a bearer token with --token-file FILE or $JULY_MCP_TOKEN, or listen on 127.0.0.1")
	url, _ = startJulyHTTP(t, july, []string{TokenEnv + "="}, "mcp", "--http", "0.0.0.0:0", dir)
	assert.Empty(t, url)

	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600))
	url, stderr = startJulyHTTP(t, july, nil, "mcp", "--http", "0.0.0.0:0", "--token-file", tokenFile, dir)
	require.NotEmpty(t, url, stderr)
	resp, err := http.Post(url, "application/json", strings.NewReader(initLine))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// TestNPMClientHTTPToken: the official TypeScript client with the bearer
// token is served; without it, it cannot connect.
func TestNPMClientHTTPToken(t *testing.T) {
	node := nodeClient(t)
	url, stderr := startJulyHTTP(t, buildJuly(t), []string{TokenEnv + "=tok-123"}, "mcp", "--http", "127.0.0.1:0", fixtureAgent(t))
	require.NotEmpty(t, url, stderr)
	t.Setenv("MCP_TOKEN", "tok-123")
	checkClientOutput(t, runClient(t, node, map[string]any{"calls": wantCalls}, "http", url))

	t.Setenv("MCP_TOKEN", "wrong")
	calls := filepath.Join(t.TempDir(), "calls.json")
	require.NoError(t, os.WriteFile(calls, []byte(`{"calls":[]}`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "client.mjs", "http", calls, url)
	cmd.Dir = clientDir
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "a client with the wrong token connected: %s", out)
	assert.Contains(t, string(out), "401")
}

// httpServer serves the fixture agent's MCP handler with opts.
func httpServer(t *testing.T, opts HTTPOptions, sopts runner.SessionOptions) string {
	t.Helper()
	a, err := runner.Load(fixtureAgent(t))
	require.NoError(t, err)
	s, err := a.Open(context.Background(), sopts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	srv, err := New(s, Options{})
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler(opts))
	t.Cleanup(hs.Close)
	return hs.URL
}

// post sends one JSON-RPC message and returns the response and its body.
func post(t *testing.T, url, body string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

// TestHTTPTokenAndOrigin: plain HTTP requests: no or a wrong token is
// 401; a cross-origin browser request is 403; the right token from the
// same origin is served.
func TestHTTPTokenAndOrigin(t *testing.T) {
	url := httpServer(t, HTTPOptions{Token: "abc"}, runner.SessionOptions{})
	resp, _ := post(t, url, initLine, nil)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = post(t, url, initLine, map[string]string{"Authorization": "Bearer abd"})
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, _ = post(t, url, initLine, map[string]string{"Authorization": "Bearer abc", "Sec-Fetch-Site": "cross-site"})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = post(t, url, initLine, map[string]string{"Authorization": "Bearer abc", "Origin": "http://evil.example"})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, body := post(t, url, initLine, map[string]string{"Authorization": "Bearer abc"})
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))

	// Without a token (loopback), no Authorization is needed, but the
	// origin check still holds.
	open := httpServer(t, HTTPOptions{}, runner.SessionOptions{})
	resp, body = post(t, open, initLine, nil)
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	resp, _ = post(t, open, initLine, map[string]string{"Sec-Fetch-Site": "cross-site"})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// TestHTTPIdleSessionClosed: a session with no request for IdleTimeout is
// closed (its id is then unknown: 404), and its turn dropped.
func TestHTTPIdleSessionClosed(t *testing.T) {
	url := httpServer(t, HTTPOptions{IdleTimeout: 200 * time.Millisecond}, runner.SessionOptions{})
	resp, body := post(t, url, initLine, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	id := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	hdr := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}
	resp, body = post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	require.Less(t, resp.StatusCode, 300, body)
	deadline := time.Now().Add(30 * time.Second)
	for {
		time.Sleep(250 * time.Millisecond)
		resp, _ = post(t, url, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, hdr)
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		require.True(t, time.Now().Before(deadline), "session still open after 30 s idle: status %d", resp.StatusCode)
	}
}

// TestScratchQuota: each session's /tmp holds at most the quota; a write
// over it fails and changes nothing, and deleting frees the bytes.
func TestScratchQuota(t *testing.T) {
	a, err := runner.Load(fixtureAgent(t))
	require.NoError(t, err)
	s, err := a.Open(context.Background(), runner.SessionOptions{ScratchQuota: 10})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	turn, err := s.Turn()
	require.NoError(t, err)
	ctx := context.Background()
	call := func(name, args string) string { return turn.Call(ctx, name, json.RawMessage(args)).String() }
	assert.Equal(t, "Wrote contents to /tmp/a", call("Write", `{"path":"/tmp/a","contents":"12345678"}`))
	assert.Equal(t, "write failed: /tmp/b", call("Write", `{"path":"/tmp/b","contents":"123"}`))
	assert.Equal(t, "not found: /tmp/b", call("Read", `{"path":"/tmp/b"}`))
	assert.Equal(t, "Wrote contents to /tmp/a", call("Write", `{"path":"/tmp/a","contents":"1234567890"}`), "an overwrite counts the new size only")
	assert.Equal(t, "Deleted /tmp/a", call("Delete", `{"path":"/tmp/a"}`))
	assert.Equal(t, "Wrote contents to /tmp/b", call("Write", `{"path":"/tmp/b","contents":"123"}`))
	// Another turn (another MCP session) has its own quota.
	other, err := s.Turn()
	require.NoError(t, err)
	assert.Equal(t, "Wrote contents to /tmp/c", other.Call(ctx, "Write", json.RawMessage(`{"path":"/tmp/c","contents":"1234567890"}`)).String())
}
