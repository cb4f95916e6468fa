package web

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// searxngServer speaks SearXNG's /search?format=json.
func searxngServer(t *testing.T) string {
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "format not allowed", http.StatusForbidden)
			return
		}
		q := r.URL.Query().Get("q")
		json.NewEncoder(w).Encode(map[string]any{
			"query": q, "number_of_results": 3,
			"results": []map[string]any{
				{"title": "FUSE passthrough", "url": "https://docs.kernel.org/filesystems/fuse-passthrough.html", "content": "Passthrough for " + q, "engine": "ddg", "score": 3.1},
				{"title": "go-fuse", "url": "https://github.com/hanwen/go-fuse", "content": "FUSE bindings\nfor Go", "engine": "ddg", "score": 2},
				{"title": "third", "url": "https://example.org/3", "content": "", "engine": "ddg", "score": 1},
			},
		})
	}).URL
}

// braveServer speaks the Brave web search API.
func braveServer(t *testing.T, key string) string {
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != key {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID","status":401}}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"type":  "search",
			"query": map[string]any{"original": r.URL.Query().Get("q")},
			"web": map[string]any{"type": "search", "results": []map[string]any{
				{"title": "FUSE passthrough mode", "url": "https://lwn.net/Articles/fuse", "description": "The <strong>FUSE</strong> passthrough feature", "type": "search_result"},
				{"title": "count was " + r.URL.Query().Get("count"), "url": "https://example.com/count", "description": "x"},
			}},
		})
	}).URL
}

func TestSearXNG(t *testing.T) {
	s, err := NewSearcher(SearchConfig{Provider: ProviderSearXNG, URL: searxngServer(t) + "/"}, nil)
	require.NoError(t, err)
	res, err := s.Search(t.Context(), "fuse passthrough", 2)
	require.NoError(t, err)
	assert.Equal(t, []SearchResult{
		{Title: "FUSE passthrough", URL: "https://docs.kernel.org/filesystems/fuse-passthrough.html", Snippet: "Passthrough for fuse passthrough"},
		{Title: "go-fuse", URL: "https://github.com/hanwen/go-fuse", Snippet: "FUSE bindings\nfor Go"},
	}, res)
}

func TestBrave(t *testing.T) {
	t.Setenv("TEST_BRAVE_KEY", "k-123")
	u := braveServer(t, "k-123")
	s, err := NewSearcher(SearchConfig{Provider: ProviderBrave, URL: u, KeyEnv: "TEST_BRAVE_KEY"}, nil)
	require.NoError(t, err)
	res, err := s.Search(t.Context(), "fuse", 5)
	require.NoError(t, err)
	assert.Equal(t, []SearchResult{
		{Title: "FUSE passthrough mode", URL: "https://lwn.net/Articles/fuse", Snippet: "The FUSE passthrough feature"},
		{Title: "count was 5", URL: "https://example.com/count", Snippet: "x"},
	}, res)

	t.Setenv("TEST_BRAVE_KEY", "wrong")
	s, err = NewSearcher(SearchConfig{Provider: ProviderBrave, URL: u, KeyEnv: "TEST_BRAVE_KEY"}, nil)
	require.NoError(t, err)
	_, err = s.Search(t.Context(), "fuse", 5)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 401 Unauthorized")
}

func TestSearchConfigErrors(t *testing.T) {
	t.Setenv("EMPTY_KEY", "")
	cases := []struct {
		c    SearchConfig
		want string
	}{
		{SearchConfig{}, "no provider: configure a backend in agent.yaml"},
		{SearchConfig{Provider: "google"}, `unknown provider "google"`},
		{SearchConfig{Provider: ProviderSearXNG}, "provider searxng needs url"},
		{SearchConfig{Provider: ProviderSearXNG, URL: "ftp://x"}, `url "ftp://x" is not an http(s) URL`},
		{SearchConfig{Provider: ProviderBrave, KeyEnv: "EMPTY_KEY"}, "needs an API key in $EMPTY_KEY, which is not set"},
	}
	for _, c := range cases {
		_, err := NewSearcher(c.c, nil)
		require.Error(t, err, "%+v", c.c)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestSearchToolSpills(t *testing.T) {
	s, err := NewSearcher(SearchConfig{Provider: ProviderSearXNG, URL: searxngServer(t)}, nil)
	require.NoError(t, err)
	dir := t.TempDir()

	small := NewSearchTool(s, &Spill{Dir: dir})
	r, err := small.Run(t.Context(), json.RawMessage(`{"query":"fuse"}`))
	require.NoError(t, err)
	require.False(t, r.IsError, r.String())
	assert.Equal(t, "1. FUSE passthrough\n   https://docs.kernel.org/filesystems/fuse-passthrough.html\n   Passthrough for fuse\n\n"+
		"2. go-fuse\n   https://github.com/hanwen/go-fuse\n   FUSE bindings for Go\n\n3. third\n   https://example.org/3\n", r.String())
	_, err = os.Stat(filepath.Join(dir, SpillDirName))
	assert.True(t, os.IsNotExist(err), "a small result is not written to disk")

	sp := &Spill{Dir: dir, Inline: 50}
	r, err = NewSearchTool(s, sp).Run(t.Context(), json.RawMessage(`{"query":"fuse"}`))
	require.NoError(t, err)
	text := r.String()
	assert.Contains(t, text, "too large to show here. They were written to "+filepath.Join(dir, SpillDirName)+"/")
	assert.True(t, strings.HasSuffix(text, FollowUpHost), text)
	paths := sp.Claim(text)
	require.Len(t, paths, 1)
	data, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	assert.Contains(t, string(data), "2. go-fuse")
	assert.Empty(t, sp.Claim(text), "a file is claimed once")
}
