package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/cowsession"
	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/model/script"
	"github.com/julyfs/julyfs/runner/sessions"
)

// cowAgentYAML is an agent whose root is a copy-on-write tree over
// ./tree: every session runs on a layer.
const cowAgentYAML = `name: t
root:
  /:
    cow:
      base:
        local: ./tree
`

const cowHTTPScript = `turns:
  - replies:
      - calls: [{tool: Write, args: {path: /a.txt, contents: "hi\nfrom turn 1\n"}}]
      - text: one
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: "b\n"}}, {tool: Delete, args: {path: /old.txt}}]
      - text: two
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: "b\nb2\n"}}]
      - text: three
  - replies:
      - sleep: 10m
        text: never
`

// newCowFixture serves an agent with a cow: root over a host directory,
// its sessions on layers as july serve runs them.
func newCowFixture(t *testing.T, agentYAML, scriptYAML string) (*fixture, string) {
	t.Helper()
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	require.NoError(t, os.MkdirAll(tree, 0o755))
	for name, data := range map[string]string{"agent.yaml": agentYAML, "tree/a.txt": "hi\n", "tree/old.txt": "old\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	a, err := runner.Load(dir)
	require.NoError(t, err)
	m, err := script.Parse([]byte(scriptYAML), "test.script.yaml")
	require.NoError(t, err)
	st := sessions.New(filepath.Join(dir, ".july"))
	h, err := host.New(host.Options{Agent: a, Store: st, Model: m, Logf: t.Logf, NewLayer: a.Cow,
		Layer: cowsession.Hook(a, cowsession.HookOptions{New: a.Cow, Require: a.Cow, Warnf: t.Logf})})
	require.NoError(t, err)
	api, err := New(Options{Agents: []Agent{{Host: h}}})
	require.NoError(t, err)
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		h.Shutdown(ctx, 10*time.Second)
		api.CloseStreams()
		hs.Close()
	})
	return &fixture{url: hs.URL + "/t/v1", host: h, store: st, api: api, dir: dir}, tree
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	des, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, de := range des {
		data, err := os.ReadFile(filepath.Join(dir, de.Name()))
		require.NoError(t, err)
		out[de.Name()] = string(data)
	}
	return out
}

func files(t *testing.T, m map[string]any, key string) []map[string]any {
	t.Helper()
	list, ok := m[key].([]any)
	require.True(t, ok, "%s in %v", key, m)
	out := make([]map[string]any, len(list))
	for i, v := range list {
		out[i] = v.(map[string]any)
	}
	return out
}

// TestCowRoutes: a session of an agent with a cow: root, driven over
// HTTP with the scripted model: its checkpoints and diffs, a rewind
// refused while a turn runs and then done (the events stream sees it),
// a fork, and an apply with a conflict, dry run first.
func TestCowRoutes(t *testing.T) {
	f, tree := newCowFixture(t, cowAgentYAML, cowHTTPScript)
	code, m := call(t, "POST", f.url+"/sessions", `{"message":"first"}`)
	require.Equal(t, http.StatusCreated, code, m)
	id := m["sessionId"].(string)
	s := openStream(t, f.url+"/sessions/"+id+"/events")
	defer s.close()
	waitIdle(t, f, id)
	for _, msg := range []string{"second", "third"} {
		code, m = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"`+msg+`"}`)
		require.Equal(t, http.StatusAccepted, code, m)
		waitIdle(t, f, id)
	}
	assert.Equal(t, map[string]string{"a.txt": "hi\n", "old.txt": "old\n"}, readTree(t, tree), "the tree is not written")

	code, m = call(t, "GET", f.url+"/sessions/"+id+"/checkpoints", "")
	require.Equal(t, http.StatusOK, code, m)
	cps := files(t, m, "checkpoints")
	require.Len(t, cps, 3)
	assert.Equal(t, float64(1), cps[0]["turn"])
	assert.Equal(t, "first", cps[0]["message"])
	assert.NotEmpty(t, cps[0]["turnId"])
	assert.Equal(t, []any{map[string]any{"path": "/a.txt", "change": "modified", "added": float64(1), "removed": float64(0)}}, cps[0]["files"])
	assert.Equal(t, []any{
		map[string]any{"path": "/b.txt", "change": "added", "added": float64(1), "removed": float64(0)},
		map[string]any{"path": "/old.txt", "change": "deleted", "added": float64(0), "removed": float64(1)},
	}, cps[1]["files"])

	code, m = call(t, "GET", f.url+"/sessions/"+id+"/diff?turn=3", "")
	require.Equal(t, http.StatusOK, code, m)
	assert.Equal(t, []map[string]any{{"path": "/b.txt", "change": "modified", "added": float64(1), "removed": float64(0), "binary": false,
		"patch": "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1,2 @@\n b\n+b2\n"}}, files(t, m, "files"))
	code, m = call(t, "GET", f.url+"/sessions/"+id+"/diff", "")
	require.Equal(t, http.StatusOK, code, m)
	var paths []string
	for _, fl := range files(t, m, "files") {
		paths = append(paths, fl["path"].(string))
	}
	assert.Equal(t, []string{"/a.txt", "/b.txt", "/old.txt"}, paths)
	code, m = call(t, "GET", f.url+"/sessions/"+id+"/diff?from=1&to=2", "")
	require.Equal(t, http.StatusOK, code, m)
	assert.Len(t, files(t, m, "files"), 2)

	// A rewind while a turn runs is refused; the turn is then cancelled.
	code, m = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"fourth"}`)
	require.Equal(t, http.StatusAccepted, code, m)
	s.until(sessions.TypeTurnStarted, 3)
	code, m = call(t, "POST", f.url+"/sessions/"+id+"/rewind", `{"to":2}`)
	assert.Equal(t, http.StatusConflict, code, m)
	assert.Equal(t, "session_in_use", errCode(m))
	code, m = call(t, "POST", f.url+"/sessions/"+id+"/apply", `{"dryRun":true}`)
	assert.Equal(t, http.StatusConflict, code, m)
	code, _ = call(t, "POST", f.url+"/sessions/"+id+"/cancel", "")
	require.Equal(t, http.StatusAccepted, code)
	waitIdle(t, f, id)

	code, m = call(t, "POST", f.url+"/sessions/"+id+"/rewind", `{"to":2}`)
	require.Equal(t, http.StatusOK, code, m)
	assert.Equal(t, id, m["id"])
	assert.Equal(t, host.StateIdle, m["state"])
	rewound := s.until(sessions.TypeSessionRewound, 0)
	assert.Equal(t, sessions.TypeSessionRewound, rewound[len(rewound)-1].Type, "the stream sees the rewind")
	code, m = call(t, "GET", f.url+"/sessions/"+id+"/diff", "")
	require.Equal(t, http.StatusOK, code, m)
	whole := files(t, m, "files")
	require.Len(t, whole, 3)
	assert.Equal(t, "diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n", whole[1]["patch"])

	// The next turn follows turn 2's conversation: script turn 3 again.
	code, _ = call(t, "POST", f.url+"/sessions/"+id+"/messages", `{"message":"again"}`)
	require.Equal(t, http.StatusAccepted, code)
	evs := s.until(sessions.TypeTurnCompleted, 0)
	assert.Equal(t, []string{"three"}, texts(t, evs, sessions.TypeTurnCompleted))
	waitIdle(t, f, id)

	code, m = call(t, "POST", f.url+"/sessions/"+id+"/fork", `{"at":2}`)
	require.Equal(t, http.StatusCreated, code, m)
	forkID := m["sessionId"].(string)
	require.True(t, sessions.ValidID(forkID), forkID)
	code, m = call(t, "GET", f.url+"/sessions/"+forkID+"/checkpoints", "")
	require.Equal(t, http.StatusOK, code, m)
	assert.Len(t, files(t, m, "checkpoints"), 2)
	code, m = call(t, "GET", f.url+"/sessions/"+forkID, "")
	require.Equal(t, http.StatusOK, code, m)
	assert.Equal(t, map[string]any{"session": id, "turn": float64(2)}, m["forkOf"])

	// Apply, the tree's /a.txt edited behind the session's back.
	require.NoError(t, os.WriteFile(filepath.Join(tree, "a.txt"), []byte("edited on the host\n"), 0o644))
	code, m = call(t, "POST", f.url+"/sessions/"+id+"/apply", `{"dryRun":true}`)
	require.Equal(t, http.StatusOK, code, m)
	assert.Equal(t, true, m["dryRun"])
	assert.Equal(t, []map[string]any{{"path": "/b.txt", "op": "write"}, {"path": "/old.txt", "op": "delete"}}, files(t, m, "applied"))
	conflicts := files(t, m, "conflicts")
	require.Len(t, conflicts, 1)
	assert.Equal(t, "/a.txt", conflicts[0]["path"])
	assert.Equal(t, map[string]any{"baseKept": true,
		"tree":    "--- base\n+++ tree\n@@ -1 +1 @@\n-hi\n+edited on the host\n",
		"session": "--- base\n+++ session\n@@ -1 +1,2 @@\n hi\n+from turn 1\n"}, conflicts[0]["threeWay"])
	assert.Equal(t, map[string]string{"a.txt": "edited on the host\n", "old.txt": "old\n"}, readTree(t, tree), "a dry run writes nothing")
	code, m = call(t, "POST", f.url+"/sessions/"+id+"/apply", `{}`)
	require.Equal(t, http.StatusOK, code, m)
	assert.Len(t, files(t, m, "conflicts"), 1)
	assert.Equal(t, map[string]string{"a.txt": "edited on the host\n", "b.txt": "b\nb2\n"}, readTree(t, tree))
	code, m = call(t, "GET", f.url+"/sessions/"+id+"/diff", "")
	require.Equal(t, http.StatusOK, code, m)
	assert.Len(t, files(t, m, "files"), 1, "the conflict stays in the session")
}

// TestCowRoutesBadInput: each bad request gets a clear JSON error and
// the server keeps serving.
func TestCowRoutesBadInput(t *testing.T) {
	f, _ := newCowFixture(t, cowAgentYAML, cowHTTPScript)
	code, m := call(t, "POST", f.url+"/sessions", `{"message":"first"}`)
	require.Equal(t, http.StatusCreated, code, m)
	id := m["sessionId"].(string)
	waitIdle(t, f, id)
	plain, err := f.store.Create(sessions.Meta{Agent: "t"})
	require.NoError(t, err)
	require.NoError(t, plain.Close())

	for _, c := range []struct {
		method, path, body string
		status             int
		code, contains     string
	}{
		{"GET", "/sessions/" + plain.ID() + "/checkpoints", "", 404, "no_checkpoints", "made without --cow"},
		{"GET", "/sessions/" + plain.ID() + "/diff", "", 404, "no_checkpoints", "no layer"},
		{"POST", "/sessions/" + plain.ID() + "/rewind", `{"to":0}`, 404, "no_checkpoints", "made without --cow"},
		{"POST", "/sessions/" + plain.ID() + "/apply", `{}`, 404, "no_checkpoints", ""},
		{"GET", "/sessions/ses_nope/checkpoints", "", 404, "not_found", ""},
		{"POST", "/sessions/" + id + "/rewind", `{"to":9}`, 400, "no_such_turn", "has no turn 9 (it has 1)"},
		{"POST", "/sessions/" + id + "/rewind", `{}`, 400, "bad_request", `"to"`},
		{"POST", "/sessions/" + id + "/rewind", `{"to":"x"}`, 400, "bad_request", ""},
		{"POST", "/sessions/" + id + "/fork", `{"at":0}`, 400, "bad_request", `"at"`},
		{"POST", "/sessions/" + id + "/fork", `{"at":5}`, 400, "no_such_turn", "has no turn 5"},
		{"POST", "/sessions/" + id + "/apply", `{"dry":true}`, 400, "bad_request", "unknown field"},
		{"GET", "/sessions/" + id + "/diff?turn=x", "", 400, "bad_request", "turn="},
		{"GET", "/sessions/" + id + "/diff?turn=2", "", 400, "no_such_turn", ""},
		{"GET", "/sessions/" + id + "/diff?turn=1&from=0", "", 400, "bad_request", "not both"},
		{"GET", "/sessions/" + id + "/diff?to=-3", "", 400, "bad_request", "at least 0"},
	} {
		code, m := call(t, c.method, f.url+c.path, c.body)
		assert.Equal(t, c.status, code, "%s %s %s: %v", c.method, c.path, c.body, m)
		assert.Equal(t, c.code, errCode(m), "%s %s %s", c.method, c.path, c.body)
		if c.contains != "" {
			e, _ := m["error"].(map[string]any)
			assert.Contains(t, e["message"], c.contains, "%s %s %s", c.method, c.path, c.body)
		}
	}
	code, m = call(t, "GET", f.url+"/sessions/"+id+"/checkpoints", "")
	assert.Equal(t, http.StatusOK, code, m)
}
