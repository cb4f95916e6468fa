// Package httpguard holds the access rules every HTTP server of july
// shares (july mcp --http, july serve): where it may listen without a
// token, how the token is read, and the checks each request passes.
//
// # Rules
//
//   - Listen refuses an address that is not loopback (0.0.0.0, ::,
//     ":PORT", a LAN address) unless a bearer token is set: anyone who can
//     reach such a port could drive the agent.
//   - On a loopback connection, a Host header that is not localhost or a
//     loopback address is refused with 403 (DNS rebinding: a web page whose
//     name resolves to 127.0.0.1).
//   - A browser request from another origin (net/http's
//     CrossOriginProtection: Sec-Fetch-Site, or Origin against Host) is
//     refused with 403, unless its method is safe (GET, HEAD, OPTIONS):
//     the server sends no CORS headers, so such a page cannot read the
//     answer.
//   - With a token, a request without "Authorization: Bearer TOKEN" (or
//     with another token, compared in constant time) is refused with 401.
//
// Refusals are written by Options.Deny, so each server answers in its own
// error format.
package httpguard

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
)

// Options configure Handler.
type Options struct {
	// Token, when set, is the bearer token every request must carry.
	Token string
	// Deny writes a refusal (status 401 or 403, code "unauthorized" or
	// "forbidden", and a message); nil writes the message as plain text.
	Deny func(w http.ResponseWriter, r *http.Request, status int, code, message string)
}

// Handler returns h behind the request checks of the package doc, in
// this order: origin, token, Host.
func Handler(h http.Handler, opts Options) http.Handler {
	deny := opts.Deny
	if deny == nil {
		deny = func(w http.ResponseWriter, _ *http.Request, status int, _, msg string) { http.Error(w, msg, status) }
	}
	cop := http.NewCrossOriginProtection()
	want := []byte(opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := cop.Check(r); err != nil {
			deny(w, r, http.StatusForbidden, "forbidden", err.Error()+": a browser page from another origin may not call this server")
			return
		}
		if len(want) > 0 {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok {
				w.Header().Set("WWW-Authenticate", "Bearer")
				deny(w, r, http.StatusUnauthorized, "unauthorized", "missing bearer token: send Authorization: Bearer TOKEN")
				return
			}
			if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), want) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				deny(w, r, http.StatusUnauthorized, "unauthorized", "invalid token: wrong bearer token")
				return
			}
		}
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
			if loopbackHost(la.String()) && !loopbackHost(r.Host) {
				deny(w, r, http.StatusForbidden, "forbidden", fmt.Sprintf("invalid Host header %q: a loopback server answers only localhost names (DNS rebinding protection)", r.Host))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a host or host:port names this machine:
// localhost or a loopback address.
func loopbackHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// Loopback reports whether a listener's address is a loopback address
// (127.0.0.0/8 or ::1), where a token is optional. An unspecified address
// (0.0.0.0, ::, ":PORT") listens on every interface and is not loopback.
func Loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// ReadToken returns the bearer token: the first line of file (trimmed),
// else the environment variable env; "" for none.
func ReadToken(file, env string) (string, error) {
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok, _, _ := strings.Cut(string(data), "\n")
		if tok = strings.TrimSpace(tok); tok == "" {
			return "", fmt.Errorf("--token-file %s: empty token", file)
		}
		return tok, nil
	}
	if env == "" {
		return "", nil
	}
	return strings.TrimSpace(os.Getenv(env)), nil
}

// NeedTokenError is Listen refusing an address that is not loopback
// without a token.
type NeedTokenError struct {
	// Addr is the address as given; Listened the address it resolved to.
	Addr, Listened string
	lo             ListenOptions
}

func (e *NeedTokenError) Error() string {
	env := ""
	if e.lo.Env != "" {
		env = " or $" + e.lo.Env
	}
	return fmt.Sprintf("%s %s listens on %s, not only on loopback: anyone who can reach it could use %s. Set a bearer token with --token-file FILE%s, or listen on 127.0.0.1",
		e.lo.Flag, e.Addr, e.Listened, e.lo.What, env)
}

// ListenOptions name the flag and the environment variable in Listen's
// messages.
type ListenOptions struct {
	// Flag is the flag that gave the address ("--http", "--addr").
	Flag string
	// Env is the environment variable that may hold the token.
	Env string
	// What says what an open port would expose ("the agent's tools").
	What string
}

// Listen listens on the TCP address addr, and refuses (closing it again)
// an address that is not loopback when token is "".
func Listen(addr, token string, lo ListenOptions) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if token == "" && !Loopback(ln.Addr()) {
		ln.Close()
		return nil, &NeedTokenError{Addr: addr, Listened: ln.Addr().String(), lo: lo}
	}
	return ln, nil
}
