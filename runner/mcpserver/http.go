package mcpserver

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// accepts is a turn of this server's session. Every request passes
// cross-origin protection (net/http's CrossOriginProtection: a browser
// request from another origin is refused with 403, as the MCP
// specification asks servers to validate Origin) and, with a token, bearer
// authentication; the go-sdk also refuses a non-localhost Host header on a
// loopback connection (DNS rebinding). Idle sessions are closed after
// IdleTimeout.
func (m *Server) Handler(opts HTTPOptions) http.Handler {
	idle := opts.IdleTimeout
	switch {
	case idle == 0:
		idle = DefaultIdleTimeout
	case idle < 0:
		idle = 0
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m.srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: idle})
	if opts.Token != "" {
		want := []byte(opts.Token)
		verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			if subtle.ConstantTimeCompare([]byte(token), want) != 1 {
				return nil, fmt.Errorf("%w: wrong bearer token", auth.ErrInvalidToken)
			}
			return &auth.TokenInfo{}, nil
		}
		h = auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
	}
	return http.NewCrossOriginProtection().Handler(h)
}

// HTTPHandler is Handler with the default options: no token, the default
// idle timeout.
func (m *Server) HTTPHandler() http.Handler { return m.Handler(HTTPOptions{}) }

// Loopback reports whether a listener's address is a loopback address
// (127.0.0.0/8 or ::1), where a token is optional. An unspecified address
// (0.0.0.0, ::, ":PORT") listens on every interface and is not loopback.
func Loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
