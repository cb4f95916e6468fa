package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
