package httpapi

import (
	"net/http"

	"github.com/julyfs/julyfs/runner/httpguard"
)

// PageAssets is the path prefix of Options.Page's own files (scripts,
// styles). No agent name starts with "_", so it never shadows an agent.
const PageAssets = "/_play/"

// AgentSummary is one agent of GET /v1/agents.
type AgentSummary struct {
	Name  string `json:"name"`
	Model string `json:"model"`
}

// agents is GET /v1/agents: the agents served, in the order given, and
// whether the dev routes are served.
func (s *Server) agents(w http.ResponseWriter, _ *http.Request) {
	list := make([]AgentSummary, 0, len(s.opts.Agents))
	for _, ag := range s.opts.Agents {
		list = append(list, AgentSummary{Name: ag.Host.Agent().Config.Name, Model: ag.Host.Model().Name()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": list, "dev": s.opts.Dev})
}

// withPage puts Options.Page in front of the API: GET /, GET /<slug>/,
// GET /<slug>/sessions/{id} and GET PageAssets... go to the page, which
// is public (a browser cannot send a bearer token on navigation; the page
// asks for it and sends it on each API call); it still passes the Origin
// and Host rules. Everything else goes to api. Without a page, api.
func (s *Server) withPage(api http.Handler, slugs []string) http.Handler {
	if s.opts.Page == nil {
		return api
	}
	page := httpguard.Handler(s.opts.Page, httpguard.Options{Deny: func(w http.ResponseWriter, _ *http.Request, status int, code, msg string) {
		writeError(w, status, code, msg)
	}})
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", page)
	mux.Handle("GET "+PageAssets, page)
	for _, slug := range slugs {
		mux.Handle("GET /"+slug+"/{$}", page)
		mux.Handle("GET /"+slug+"/sessions/{id}", page)
	}
	mux.Handle("/", api)
	return mux
}
