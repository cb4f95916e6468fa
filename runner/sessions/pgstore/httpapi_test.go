package pgstore_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/httpapi"
	"github.com/julyfs/julyfs/runner/model/script"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/sessions/pgstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// call sends a request to the API and returns the status and the body.
func call(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, data
}

// TestDatabaseRestartOverHTTP stops the database under a server: every
// call that needs it answers 503 state_unavailable with a JSON error
// naming the state root (without its password), the routes that do not
// need it keep answering, and once the database is back the same server
// serves the old session and makes new ones.
func TestDatabaseRestartOverHTTP(t *testing.T) {
	srv := pgtest.Start(t, "fsync=off")
	db, err := pgstore.Open(context.Background(), srv.URL, pgstore.Options{Timeout: 10 * time.Second})
	require.NoError(t, err)
	t.Cleanup(db.Close)
	name := freshScope()
	a, err := runner.Load(agentDir(t, name))
	require.NoError(t, err)
	m, err := script.Parse([]byte("turns:\n  - replies:\n      - text: one\n  - replies:\n      - text: two\n"), "restart.script.yaml")
	require.NoError(t, err)
	h, err := host.New(host.Options{Agent: a, Store: sessions.NewWithBackend(db.Sessions(name, t.TempDir())), Model: m, Logf: t.Logf})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.Shutdown(ctx, 10*time.Second)
	})
	api, err := httpapi.New(httpapi.Options{Agents: []httpapi.Agent{{Host: h}}})
	require.NoError(t, err)
	ts := httptest.NewServer(api.Handler())
	t.Cleanup(ts.Close)
	base := ts.URL + "/" + name + "/v1"

	status, body := call(t, "POST", base+"/sessions", `{"message":"hi"}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	var started struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.Unmarshal(body, &started))
	id := started.SessionID
	waitIdle := func(turns int) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			status, body := call(t, "GET", base+"/sessions/"+id, "")
			require.Equal(t, http.StatusOK, status, "%s", body)
			var info host.Info
			require.NoError(t, json.Unmarshal(body, &info))
			if info.State == host.StateIdle && info.Turns == turns {
				return
			}
			require.False(t, time.Now().After(deadline), "session %s not idle after %d turns within a minute: %s", id, turns, body)
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitIdle(1)

	require.NoError(t, srv.Stop())
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/sessions", ""},
		{"POST", "/sessions", `{"message":"while down"}`},
		{"GET", "/sessions/" + id, ""},
		{"POST", "/sessions/" + id + "/messages", `{"message":"while down"}`},
		{"GET", "/sessions/" + id + "/events", ""},
	} {
		status, body := call(t, c.method, base+c.path, c.body)
		assert.Equal(t, http.StatusServiceUnavailable, status, "%s %s: %s", c.method, c.path, body)
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &e), "%s %s: %s", c.method, c.path, body)
		assert.Equal(t, "state_unavailable", e.Error.Code, "%s %s", c.method, c.path)
		assert.Contains(t, e.Error.Message, pgstore.Redact(srv.URL), "%s %s", c.method, c.path)
		assert.NotContains(t, string(body), pgtest.Password, "%s %s", c.method, c.path)
	}
	status, body = call(t, "GET", base+"/info", "")
	assert.Equal(t, http.StatusOK, status, "the server keeps serving: %s", body)

	require.NoError(t, srv.Start())
	status, body = call(t, "POST", base+"/sessions/"+id+"/messages", `{"message":"again"}`)
	require.Less(t, status, 300, "the session made before the restart: %s", body)
	waitIdle(2)
	status, body = call(t, "POST", base+"/sessions", `{"message":"after"}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	status, body = call(t, "GET", base+"/sessions", "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	var list struct {
		Sessions []host.Info `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal(body, &list))
	assert.Len(t, list.Sessions, 2)
}
