package mcpserver

import (
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/julyfs/julyfs/runner/httpguard"
)

// DefaultIdleTimeout is how long an HTTP MCP session may go without a
// request before it is closed and its turn (with its /tmp) dropped.
const DefaultIdleTimeout = 5 * time.Minute

// TokenEnv is the environment variable july mcp reads a bearer token from
// when --token-file is not given.
const TokenEnv = "JULY_MCP_TOKEN"

// HTTPOptions configure the streamable HTTP handler.
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN); others get 401.
	Token string
	// IdleTimeout closes a session that has had no request for this long
	// (0: DefaultIdleTimeout; negative: never).
	IdleTimeout time.Duration
}

// Handler returns the streamable HTTP handler: each MCP session it
// accepts is a turn of this server's session. Every request passes the
// checks july's HTTP servers share (package httpguard): a non-localhost
// Host header on a loopback connection (DNS rebinding) and a browser
// request from another origin are refused with 403, as the MCP
// specification asks servers to validate Origin, and with a token a
// request without it gets 401. Idle sessions are closed after IdleTimeout.
func (m *Server) Handler(opts HTTPOptions) http.Handler {
	idle := opts.IdleTimeout
	switch {
	case idle == 0:
		idle = DefaultIdleTimeout
	case idle < 0:
		idle = 0
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m.srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: idle})
	return httpguard.Handler(h, httpguard.Options{Token: opts.Token})
}

// HTTPHandler is Handler with the default options: no token, the default
// idle timeout.
func (m *Server) HTTPHandler() http.Handler { return m.Handler(HTTPOptions{}) }

// Loopback reports whether a listener's address is a loopback address,
// where a token is optional (httpguard.Loopback).
func Loopback(addr net.Addr) bool { return httpguard.Loopback(addr) }
