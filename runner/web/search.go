package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// This file is web search behind a small provider interface: SearXNG's
// JSON API (self-hosted) and the Brave Search API (hosted, key from the
// environment). The backend is the author's choice in agent.yaml, so its
// address is trusted: search requests do not go through the fetch guard.

// SearchResult is one hit.
type SearchResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// Searcher is a search backend.
type Searcher interface {
	// Search returns at most n results for query, best first.
	Search(ctx context.Context, query string, n int) ([]SearchResult, error)
	// Name names the backend in messages ("searxng at http://...").
	Name() string
}

// The providers SearchConfig.Provider accepts.
const (
	ProviderSearXNG = "searxng"
	ProviderBrave   = "brave"
)

// DefaultBraveURL is the Brave Search API's web search endpoint.
const DefaultBraveURL = "https://api.search.brave.com/res/v1/web/search"

// DefaultBraveKeyEnv names the environment variable that holds the Brave
// Search API key.
const DefaultBraveKeyEnv = "BRAVE_SEARCH_API_KEY"

// SearchConfig is agent.yaml's web.search.
type SearchConfig struct {
	// Provider is searxng or brave.
	Provider string `yaml:"provider"`
	// URL is the SearXNG instance (required for searxng), or the Brave API
	// endpoint (default DefaultBraveURL).
	URL string `yaml:"url"`
	// KeyEnv names the environment variable holding the API key (brave;
	// default BRAVE_SEARCH_API_KEY). The key itself never goes in
	// agent.yaml.
	KeyEnv string `yaml:"keyEnv"`
}

// HowToConfigure says how to configure a search backend, for messages.
const HowToConfigure = `configure a backend in agent.yaml: web: { search: { provider: searxng, url: http://127.0.0.1:8888 } } (a SearXNG instance with format=json enabled), or web: { search: { provider: brave } } with the API key in $` + DefaultBraveKeyEnv

// Check reports what is wrong with the configuration, without looking at
// the environment.
func (c SearchConfig) Check() error {
	switch c.Provider {
	case ProviderSearXNG:
		if c.URL == "" {
			return errors.New("provider searxng needs url: the SearXNG instance, for example http://127.0.0.1:8888")
		}
	case ProviderBrave:
	case "":
		return errors.New("no provider: " + HowToConfigure)
	default:
		return fmt.Errorf("unknown provider %q: want %s or %s", c.Provider, ProviderSearXNG, ProviderBrave)
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q is not an http(s) URL", c.URL)
		}
	}
	return nil
}

// NewSearcher returns the configured backend. A brave backend whose key
// variable is unset is an error that names the variable.
func NewSearcher(c SearchConfig, client *http.Client) (Searcher, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	switch c.Provider {
	case ProviderSearXNG:
		return &searxng{base: strings.TrimRight(c.URL, "/"), client: client}, nil
	default:
		env := c.KeyEnv
		if env == "" {
			env = DefaultBraveKeyEnv
		}
		key := os.Getenv(env)
		if key == "" {
			return nil, fmt.Errorf("provider brave needs an API key in $%s, which is not set", env)
		}
		u := c.URL
		if u == "" {
			u = DefaultBraveURL
		}
		return &brave{endpoint: u, key: key, client: client}, nil
	}
}

type searxng struct {
	base   string
	client *http.Client
}

func (s *searxng) Name() string { return "searxng at " + s.base }

// Search asks SearXNG's /search?format=json.
func (s *searxng) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	q := url.Values{"q": {query}, "format": {"json"}}
	var body struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := getJSON(ctx, s.client, s.base+"/search?"+q.Encode(), nil, &body, s.Name()); err != nil {
		return nil, err
	}
	var out []SearchResult
	for _, r := range body.Results {
		if len(out) == n {
			break
		}
		out = append(out, SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return out, nil
}

type brave struct {
	endpoint string
	key      string
	client   *http.Client
}

func (b *brave) Name() string { return "brave search" }

// Search asks the Brave web search API.
func (b *brave) Search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	q := url.Values{"q": {query}, "count": {strconv.Itoa(min(max(n, 1), 20))}}
	var body struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	h := http.Header{"X-Subscription-Token": {b.key}, "Accept": {"application/json"}}
	if err := getJSON(ctx, b.client, b.endpoint+"?"+q.Encode(), h, &body, b.Name()); err != nil {
		return nil, err
	}
	var out []SearchResult
	for _, r := range body.Web.Results {
		if len(out) == n {
			break
		}
		out = append(out, SearchResult{Title: r.Title, URL: r.URL, Snippet: stripTags(r.Description)})
	}
	return out, nil
}

// maxSearchBody caps a search response.
const maxSearchBody = 4 << 20

func getJSON(ctx context.Context, c *http.Client, u string, h http.Header, v any, name string) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %v", name, unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return fmt.Errorf("%s: reading the response: %v", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := strings.TrimSpace(string(data))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return fmt.Errorf("%s: HTTP %s: %s", name, resp.Status, strings.ToValidUTF8(msg, "?"))
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: the response is not the expected JSON: %v", name, err)
	}
	return nil
}

// stripTags drops the <strong> highlighting Brave puts in descriptions.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
