package playground

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	resp := rec.Result()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

// TestPageFiles: every page path gets index.html, which links its
// stylesheet and module from the page's own files with no inline script
// or style, and both files are served with their types under the CSP.
func TestPageFiles(t *testing.T) {
	for _, p := range []string{"/", "/notes/", "/notes/sessions/01J"} {
		resp, body := get(t, p)
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
		assert.Equal(t, CSP, resp.Header.Get("Content-Security-Policy"), p)
		assert.Contains(t, body, `<link rel="stylesheet" href="/_play/app.css">`, p)
		assert.Contains(t, body, `<script type="module" src="/_play/app.js"></script>`, p)
		assert.NotRegexp(t, regexp.MustCompile(`<style|style=|<script>|<script [^>]*>[^<]|\son[a-z]+=`), body, p)
	}
	for name, typ := range map[string]string{"app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8"} {
		resp, body := get(t, "/_play/"+name)
		require.Equal(t, http.StatusOK, resp.StatusCode, name)
		assert.Equal(t, typ, resp.Header.Get("Content-Type"), name)
		assert.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), name)
		assert.Equal(t, CSP, resp.Header.Get("Content-Security-Policy"), name)
		assert.NotEmpty(t, body, name)
	}
	resp, _ := get(t, "/_play/index.html")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = get(t, "/_play/../../etc/passwd")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Less(t, Size(), int64(150<<10), "the page's own weight is over 150 KiB")
}
