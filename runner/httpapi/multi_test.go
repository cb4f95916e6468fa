package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/model/script"
	"github.com/julyfs/julyfs/runner/sessions"
)

func namedHost(t *testing.T, name string) *host.Host {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent.yaml"), []byte(strings.Replace(agentYAML, "name: t", "name: "+name, 1)), 0o644))
	a, err := runner.Load(dir)
	require.NoError(t, err)
	m, err := script.Parse([]byte("turns:\n  - replies:\n      - text: ok\n"), name+".yaml")
	require.NoError(t, err)
	h, err := host.New(host.Options{Agent: a, Store: sessions.New(filepath.Join(dir, ".july")), Model: m})
	require.NoError(t, err)
	return h
}

// syncBuffer is a bytes.Buffer safe for the access log's writer and the
// test's reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSeveralAgents: each agent under its own name, with its own
// sessions; one name twice is refused; the access log has a JSON line per
// request.
func TestSeveralAgents(t *testing.T) {
	a, b := namedHost(t, "alpha"), namedHost(t, "beta")
	var log syncBuffer
	api, err := New(Options{Agents: []Agent{{Host: a}, {Host: b}}, AccessLog: &log})
	require.NoError(t, err)
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(hs.Close)
	code, m := call(t, "GET", hs.URL+"/alpha/v1/info", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "alpha", m["agent"])
	assert.Equal(t, []any{}, m["tools"])
	code, m = call(t, "GET", hs.URL+"/beta/v1/info", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "beta", m["agent"])
	code, m = call(t, "POST", hs.URL+"/alpha/v1/sessions", `{"message":"x"}`)
	require.Equal(t, http.StatusCreated, code)
	id := m["sessionId"].(string)
	code, _ = call(t, "GET", hs.URL+"/beta/v1/sessions/"+id, "")
	assert.Equal(t, http.StatusNotFound, code, "beta has no alpha session")
	code, _ = call(t, "GET", hs.URL+"/gamma/v1/info", "")
	assert.Equal(t, http.StatusNotFound, code)

	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	require.Len(t, lines, 5)
	var e accessEntry
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &e))
	assert.Equal(t, "POST", e.Method)
	assert.Equal(t, "/alpha/v1/sessions", e.Path)
	assert.Equal(t, http.StatusCreated, e.Status)
	assert.Positive(t, e.Bytes)

	_, err = New(Options{Agents: []Agent{{Host: a}, {Host: namedHost(t, "alpha")}}})
	assert.ErrorContains(t, err, `are both named "alpha"`)
	t.Cleanup(func() {
		ctx, cancel := contextDone()
		defer cancel()
		a.Shutdown(ctx, 10*time.Second)
		b.Shutdown(ctx, 10*time.Second)
	})
}

// contextDone returns a context that has already ended: Shutdown then
// interrupts at once.
func contextDone() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx, cancel
}
