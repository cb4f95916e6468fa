package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/runner/sessions"
)

// TestRunHarnessTools runs july run with the web and todo tools against a
// local page server (agent.yaml allows private addresses), then july show
// prints the tool results and the todo list.
func TestRunHarnessTools(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><head><title>Go 1.26</title></head><body><article><h1>Go 1.26</h1><p>New APIs: errors.AsType, a generic version of errors.As, and many more things worth reading about here.</p></article></body></html>`)
	}))
	t.Cleanup(srv.Close)
	agent, state := runAgent(t, fmt.Sprintf(`
turns:
  - replies:
      - calls:
          - {tool: WebFetch, args: {url: %[1]q}}
      - expect:
          - {tool: WebFetch, error: true, contains: "127.0.0.1 is a loopback address"}
        text: refused
  - replies:
      - calls:
          - {tool: WebFetch, args: {url: %[1]q}}
          - {tool: UpdateTodos, args: {todos: [{id: a, content: list the new APIs, status: completed}]}}
      - expect:
          - {tool: WebFetch, contains: "errors.AsType"}
          - {tool: UpdateTodos, contains: "1 of 1 completed"}
        text: done
`, srv.URL+"/doc/go1.26"))
	// By default the local server is refused; the turn goes on.
	out, errOut, code := julyRun(t, "run", agent, "-m", "fetch", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "refused\n", out)
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	id := list[0].ID

	yaml := filepath.Join(agent, "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(yaml, append(data, "web: {allowPrivateAddresses: true}\n"...), 0o644))
	out, errOut, code = julyRun(t, "run", agent, "--session", id, "-m", "fetch again", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "done\n", out)

	show, _, code := julyRun(t, "show", agent, id, "--state-root", state)
	require.Equal(t, 0, code)
	assert.Contains(t, show, "tool WebFetch {\"url\":\""+srv.URL+"/doc/go1.26\"} (error)\n  fetching "+srv.URL+"/doc/go1.26: refused: 127.0.0.1 is a loopback address")
	assert.Contains(t, show, "tool WebFetch {\"url\":\""+srv.URL+"/doc/go1.26\"}\n  URL: "+srv.URL+"/doc/go1.26\n  Title: Go 1.26\n")
	assert.Contains(t, show, "\n## todo list\n\n  Todos (1 of 1 completed):\n  - [x] a: list the new APIs\n")
}

// TestRunLiveRoot runs the journal example twice: each session writes to
// its own ./state/<session id>.
func TestRunLiveRoot(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "..", "examples", "journal"))
	require.NoError(t, err)
	agent := filepath.Join(t.TempDir(), "journal")
	require.NoError(t, os.CopyFS(agent, os.DirFS(src)))
	os.RemoveAll(filepath.Join(agent, "state"))
	state := filepath.Join(t.TempDir(), "state")
	for range 2 {
		out, errOut, code := julyRun(t, "run", agent, "--model", "script:"+filepath.Join(agent, "demo.script.yaml"), "-m", "Add today's entry", "--state-root", state)
		require.Equal(t, 0, code, errOut)
		assert.Equal(t, "Added /entries/today.md.\n", out)
	}
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	require.Len(t, list, 2)
	for _, m := range list {
		data, err := os.ReadFile(filepath.Join(agent, "state", m.ID, "entries", "today.md"))
		require.NoError(t, err)
		assert.Equal(t, "Started the journal. Next: keep it up.\n", string(data))
	}
	out, _, code := julyRun(t, "validate", agent)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "tree: /=./state/{sessionId} (per session), /prompts=local:"+filepath.Join(agent, "prompts")+"?ro\n")
}

// TestMCPLiveRootPerSession serves the journal agent over streamable
// HTTP: two MCP sessions write the same path, each into its own tree.
func TestMCPLiveRootPerSession(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "..", "examples", "journal"))
	require.NoError(t, err)
	agent := filepath.Join(t.TempDir(), "journal")
	require.NoError(t, os.CopyFS(agent, os.DirFS(src)))
	os.RemoveAll(filepath.Join(agent, "state"))

	cmd := julyCommand(t, "mcp", agent, "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	m := regexp.MustCompile(`at (http://\S+/)`).FindStringSubmatch(line)
	require.NotNil(t, m, line)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var clients []*mcp.ClientSession
	for i := range 2 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: fmt.Sprint("c", i)}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: m[1]}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		clients = append(clients, cs)
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Write", Arguments: map[string]any{"path": "/mine.md", "contents": fmt.Sprint("client ", i)}})
		require.NoError(t, err)
		require.False(t, r.IsError)
	}
	for i, cs := range clients {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"path": "/mine.md"}})
		require.NoError(t, err)
		assert.Contains(t, r.Content[0].(*mcp.TextContent).Text, fmt.Sprint("client ", i))
	}
	dirs, err := os.ReadDir(filepath.Join(agent, "state"))
	require.NoError(t, err)
	n := 0
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(agent, "state", d.Name(), "mine.md")); err == nil {
			n++
		}
	}
	assert.Equal(t, 2, n, "two session directories with a /mine.md each")
}

// TestRunMountWatch mounts the session's tree with july run --mount while
// a scripted agent works: separate processes ls, cat and grep -r what it
// wrote, including this turn's /tmp; the mount is read-only, and gone
// when july exits.
func TestRunMountWatch(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs /dev/fuse and root")
	}
	agent, state := runAgent(t, `
turns:
  - replies:
      - calls:
          - {tool: Write, args: {path: /notes/a.md, contents: "hello watcher\n"}}
          - {tool: Write, args: {path: /tmp/scratch.txt, contents: "scratch of this turn\n"}}
      - sleep: 5s
        calls:
          - {tool: Write, args: {path: /notes/a.md, contents: "changed by the agent\n"}}
      - sleep: 1m
        text: never
`)
	dir := filepath.Join(t.TempDir(), "watch")
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() {
		if ok, _ := fusemount.Mounted(dir); ok {
			fusemount.Unmount(dir, true)
		}
	})
	cmd, events, stderr := startRun(t, "--mount", dir, agent, "-m", "write", "--state-root", state)
	waitEvent(t, events, sessions.TypeActionResult)
	waitEvent(t, events, sessions.TypeActionResult)

	sh := exec.Command("bash", "-euo", "pipefail", "-c", `ls "$M"; ls "$M/tmp"; cat "$M/notes/a.md"; grep -r watcher "$M"
if (echo x > "$M/b.txt") 2>/dev/null; then echo wrote through a read-only mount; fi`)
	sh.Env = append(os.Environ(), "M="+dir)
	out, err := sh.CombinedOutput()
	assert.NoError(t, err, "%s", out)
	assert.Equal(t, "a.txt\nnotes\ntmp\nscratch.txt\nhello watcher\n"+dir+"/notes/a.md:hello watcher\n", string(out))

	// The agent changes the file the mount has cached: the mount shows the
	// change at once (the tree's notification invalidates the kernel's
	// cache; without it the cached page would be served for a second).
	waitEvent(t, events, sessions.TypeActionResult)
	data, err := os.ReadFile(filepath.Join(dir, "notes", "a.md"))
	require.NoError(t, err)
	assert.Equal(t, "changed by the agent\n", string(data))

	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	waitEvent(t, events, sessions.TypeTurnFailed)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		require.Fail(t, "july run did not exit after Ctrl-C")
	}
	assert.Contains(t, stderr.String(), "july: the session's tree is mounted on "+dir+" (read-only)")
	mounted, err := fusemount.Mounted(dir)
	require.NoError(t, err)
	assert.False(t, mounted, "unmounted when july exits")
}

// TestRunMountBadDir: a --mount directory that is not empty, or missing,
// is an error before the turn, and leaves no session behind.
func TestRunMountBadDir(t *testing.T) {
	agent, state := runAgent(t, "turns:\n  - replies:\n      - text: never\n")
	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "x"), nil, 0o644))
	for _, dir := range []string{full, filepath.Join(t.TempDir(), "missing")} {
		_, errOut, code := julyRun(t, "run", "--mount", dir, agent, "-m", "x", "--state-root", state)
		assert.Equal(t, 1, code)
		assert.Contains(t, errOut, "--mount: ")
		assert.Contains(t, errOut, dir)
	}
	_, errOut, code := julyRun(t, "run", "--mount-rw", agent, "-m", "x", "--state-root", state)
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--mount-rw needs --mount DIR")
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	assert.Empty(t, list)
}

// TestMCPMountWatch: july mcp --mount mounts the tree while the server
// runs, and unmounts it when stdin closes.
func TestMCPMountWatch(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs /dev/fuse and root")
	}
	dir := filepath.Join(t.TempDir(), "watch")
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() {
		if ok, _ := fusemount.Mounted(dir); ok {
			fusemount.Unmount(dir, true)
		}
	})
	cmd := julyCommand(t, "mcp", "--mount", dir, julyAgent(t))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	assert.Contains(t, line, "mounted on "+dir+" (read-only)")
	data, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(data))
	assert.Error(t, os.WriteFile(filepath.Join(dir, "b.txt"), nil, 0o644), "read-only")
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(30 * time.Second):
		require.Fail(t, "july mcp did not exit when stdin closed")
	}
	mounted, err := fusemount.Mounted(dir)
	require.NoError(t, err)
	assert.False(t, mounted)
}
