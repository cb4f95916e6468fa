package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	// MaxRequestBytes bounds a request's body (0: DefaultMaxRequestBytes).
	// A larger one is answered 413 with a JSON-RPC error naming the bound.
	MaxRequestBytes int64
}

// DefaultMaxRequestBytes is the default HTTPOptions.MaxRequestBytes, the
// go-sdk's own default (4 MiB).
const DefaultMaxRequestBytes = mcp.DefaultMaxRequestBodyBytes

// MaxRequestBytesHint is how the message of a request over the bound says
// to raise it.
const MaxRequestBytesHint = "july mcp --max-request-bytes raises it"

// Handler returns the streamable HTTP handler: each MCP session it
// accepts is a turn of this server's session. Every request passes the
// checks july's HTTP servers share (package httpguard): a non-localhost
// Host header on a loopback connection (DNS rebinding) and a browser
// request from another origin are refused with 403, as the MCP
// specification asks servers to validate Origin, and with a token a
// request without it gets 401. Idle sessions are closed after IdleTimeout.
// A body over MaxRequestBytes gets 413 and a JSON-RPC error (see
// limitBody).
func (m *Server) Handler(opts HTTPOptions) http.Handler {
	idle := opts.IdleTimeout
	switch {
	case idle == 0:
		idle = DefaultIdleTimeout
	case idle < 0:
		idle = 0
	}
	limit := opts.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m.srv },
		&mcp.StreamableHTTPOptions{SessionTimeout: idle, MaxRequestBodyBytes: limit})
	h = limitBody(h, limit)
	return httpguard.Handler(h, httpguard.Options{Token: opts.Token})
}

// HTTPHandler is Handler with the default options: no token, the default
// idle timeout.
func (m *Server) HTTPHandler() http.Handler { return m.Handler(HTTPOptions{}) }

// Loopback reports whether a listener's address is a loopback address,
// where a token is optional (httpguard.Loopback).
func Loopback(addr net.Addr) bool { return httpguard.Loopback(addr) }

// limitBody answers a request whose body is over limit bytes with 413 and
// a JSON-RPC invalid-request error (id null: the request was not read)
// naming the limit, where the go-sdk would answer plain text or, when the
// client is still sending, the connection would drop: the answer is
// written first, then the rest of the body is read and discarded (at
// most drainBytes, for at most drainTime) so that a client that reads
// only once it has sent everything gets it, and the connection closes. A
// body with a Content-Length is judged by it before anything is read; a
// chunked one is read up to the limit and handed on from memory.
func limitBody(next http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > limit {
			tooLarge(w, r, fmt.Sprintf("request body of %d bytes is over the %d-byte limit (%s)", r.ContentLength, limit, MaxRequestBytesHint))
			return
		}
		if r.ContentLength < 0 {
			data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
			if err != nil {
				http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
				return
			}
			if int64(len(data)) > limit {
				tooLarge(w, r, fmt.Sprintf("request body over the %d-byte limit (%s)", limit, MaxRequestBytesHint))
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
		}
		next.ServeHTTP(w, r)
	})
}

// drainBytes and drainTime bound what is read of a body refused as too
// large, after the answer.
const (
	drainBytes = 1 << 30
	drainTime  = 10 * time.Second
)

// tooLarge writes the 413 answer, then drains the request's body.
func tooLarge(w http.ResponseWriter, r *http.Request, msg string) {
	data, _ := json.Marshal(struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", nil, jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	w.Write(append(data, '\n'))
	rc := http.NewResponseController(w)
	rc.Flush()
	rc.SetReadDeadline(time.Now().Add(drainTime))
	io.CopyN(io.Discard, r.Body, drainBytes)
}
