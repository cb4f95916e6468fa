package httpapi

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/sessions"
)

const treeScript = `turns:
  - replies:
      - calls:
          - {tool: Write, args: {path: /notes/b.md, contents: "# B\n"}}
          - {tool: Write, args: {path: /pic.png, contents: "PNG"}}
          - {tool: Write, args: {path: /page.html, contents: "<script>parent.x=1</script>"}}
      - text: written
  - replies:
      - sleep: 10m
        text: never
  - replies:
      - text: after
`

// get fetches url and returns the status, the headers and the body.
func get(t *testing.T, url string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(data)
}

// TestTreeAndFile: the tree route lists the session's bound tree with
// sizes, the file route serves its bytes with a safe type, and both
// answer the contract's errors; an idle session viewed is released
// again, and a running one is viewed without disturbing its turn.
func TestTreeAndFile(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: treeScript, maxFile: 100})
	code, m := call(t, "POST", f.url+"/sessions", `{"message":"write"}`)
	require.Equal(t, http.StatusCreated, code, "%v", m)
	id := m["sessionId"].(string)
	openStream(t, f.url+"/sessions/"+id+"/events").until(sessions.TypeTurnCompleted, 0)
	waitIdle(t, f, id)
	base := f.url + "/sessions/" + id

	code, m = call(t, "GET", base+"/tree", "")
	require.Equal(t, http.StatusOK, code, "%v", m)
	assert.Equal(t, map[string]any{"path": "/", "entries": []any{
		map[string]any{"name": "a.txt", "path": "/a.txt", "dir": false, "size": 3.0},
		map[string]any{"name": "notes", "path": "/notes", "dir": true, "size": 0.0},
		map[string]any{"name": "page.html", "path": "/page.html", "dir": false, "size": 27.0},
		map[string]any{"name": "pic.png", "path": "/pic.png", "dir": false, "size": 3.0},
	}}, m)
	code, m = call(t, "GET", base+"/tree?path=/notes", "")
	require.Equal(t, http.StatusOK, code, "%v", m)
	assert.Equal(t, []any{map[string]any{"name": "b.md", "path": "/notes/b.md", "dir": false, "size": 4.0}}, m["entries"])

	code, hdr, body := get(t, base+"/file?path=/notes/b.md")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "# B\n", body)
	assert.Equal(t, "text/plain; charset=utf-8", hdr.Get("Content-Type"))
	assert.Equal(t, "nosniff", hdr.Get("X-Content-Type-Options"))
	assert.Equal(t, "default-src 'none'; sandbox", hdr.Get("Content-Security-Policy"))
	_, hdr, _ = get(t, base+"/file?path=/pic.png")
	assert.Equal(t, "image/png", hdr.Get("Content-Type"))
	_, hdr, _ = get(t, base+"/file?path=/page.html")
	assert.Equal(t, "text/plain; charset=utf-8", hdr.Get("Content-Type"), "HTML is never served as HTML")

	for _, tc := range []struct{ url, code, msg string }{
		{base + "/file?path=/missing", "not_found", "not found: /missing"},
		{base + "/file?path=/notes", "is_dir", "is a directory: /notes"},
		{base + "/tree?path=/a.txt", "not_dir", "not a directory: /a.txt"},
		{base + "/tree?path=/nope", "not_found", "not found: /nope"},
		{f.url + "/sessions/ses_01M8VYDGHWECHAV7CQFN9GG56K/tree", "not_found", ""},
		{f.url + "/sessions/..%2Fx/file?path=/a.txt", "not_found", ""},
	} {
		code, m := call(t, "GET", tc.url, "")
		assert.Equal(t, tc.code, errCode(m), "%s: %v", tc.url, m)
		assert.True(t, code == 404 || code == 400, "%s: %d", tc.url, code)
		if tc.msg != "" {
			assert.Equal(t, tc.msg, m["error"].(map[string]any)["message"], tc.url)
		}
	}
	waitIdle(t, f, id) // the views released the session

	// A running session is viewed while its turn runs.
	code, m = call(t, "POST", base+"/messages", `{"message":"slow"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", m)
	s := openStream(t, base+"/events?after=-1")
	s.until(sessions.TypeTurnStarted, 1)
	code, m = call(t, "GET", base+"/tree?path=/notes", "")
	require.Equal(t, http.StatusOK, code, "%v", m)
	info, err := f.host.Get(id)
	require.NoError(t, err)
	assert.Equal(t, host.StateRunning, info.State)
	code, _ = call(t, "POST", base+"/cancel", "")
	require.Equal(t, http.StatusAccepted, code)
	s.until(sessions.TypeTurnFailed, 0)
	code, m = call(t, "POST", base+"/messages", `{"message":"again"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", m)
	assert.Equal(t, []string{"after"}, texts(t, s.until(sessions.TypeTurnCompleted, 0), sessions.TypeTurnCompleted))
}

// TestTreeBounds: a file over MaxFileBytes and a directory over
// MaxTreeEntries are refused, naming the bound and its flag.
func TestTreeBounds(t *testing.T) {
	f := newFixture(t, fixtureOptions{script: treeScript, maxFile: 3, maxEntries: 2})
	code, m := call(t, "POST", f.url+"/sessions", `{"message":"write"}`)
	require.Equal(t, http.StatusCreated, code, "%v", m)
	id := m["sessionId"].(string)
	openStream(t, f.url+"/sessions/"+id+"/events").until(sessions.TypeTurnCompleted, 0)
	base := f.url + "/sessions/" + id
	code, m = call(t, "GET", base+"/file?path=/notes/b.md", "")
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
	assert.Equal(t, "file_too_large", errCode(m))
	assert.Contains(t, m["error"].(map[string]any)["message"], "/notes/b.md is 4 bytes, over the viewer's limit of 3 (july serve --max-file-bytes)")
	code, _, body := get(t, base+"/file?path=/a.txt")
	assert.Equal(t, http.StatusOK, code, "a file at the limit is served")
	assert.Equal(t, "hi\n", body)
	code, m = call(t, "GET", base+"/tree", "")
	assert.Equal(t, http.StatusRequestEntityTooLarge, code)
	assert.Equal(t, "too_many_entries", errCode(m))
	assert.Contains(t, m["error"].(map[string]any)["message"], "over 2 entries")
	code, m = call(t, "GET", base+"/tree?path=/notes", "")
	assert.Equal(t, http.StatusOK, code, "%v", m)
}

// TestPageRoutes: the page is served at /, /<slug>/ and
// /<slug>/sessions/{id} and under PageAssets without the token (the API
// still needs it), other-origin and rebinding rules still apply, and
// /v1/agents lists the agents.
func TestPageRoutes(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page "+r.URL.Path) })
	f := newFixture(t, fixtureOptions{script: echoScript, token: "sekrit", dev: true, page: page})
	root := strings.TrimSuffix(f.url, "/t/v1")
	for _, p := range []string{"/", "/t/", "/t/sessions/ses_01M8VYDGHWECHAV7CQFN9GG56K", PageAssets + "app.js"} {
		code, _, body := get(t, root+p)
		assert.Equal(t, http.StatusOK, code, p)
		assert.Equal(t, "page "+p, body)
	}
	code, _, _ := get(t, root+"/t/v1/info")
	assert.Equal(t, http.StatusUnauthorized, code, "the API keeps its token")
	code, _, _ = get(t, root+"/other/", "Authorization", "Bearer sekrit")
	assert.Equal(t, http.StatusNotFound, code, "an unknown agent has no page")
	req, err := http.NewRequest("GET", root+"/", nil)
	require.NoError(t, err)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the page keeps the DNS-rebinding rule")
	code, m := call(t, "GET", root+"/v1/agents", "", "Authorization", "Bearer sekrit")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, map[string]any{"agents": []any{map[string]any{"name": "t", "model": "script:test.script.yaml"}}, "dev": true}, m)
}
