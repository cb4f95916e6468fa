package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one configured MCP server and its connection, started on
// first use and restarted, with backoff, after it fails.
type server struct {
	name string
	cfg  ServerConfig
	set  *Set

	mu       sync.Mutex
	cs       *mcp.ClientSession
	proc     *process // stdio only
	exp      *expander
	listed   []*mcp.Tool // the tools of the first successful start
	lastErr  error       // why the server is down, nil while it is up
	failures int         // consecutive failed starts or deaths
	retryAt  time.Time   // no restart before this
	closed   bool
}

// ServerError is a server that could not be started or reached.
type ServerError struct {
	// Server is the server's name under mcp:.
	Server string
	// Err says why, with every expanded ${VAR} value redacted.
	Err error
}

func (e *ServerError) Error() string { return fmt.Sprintf("mcp server %s: %v", e.Server, e.Err) }

func (e *ServerError) Unwrap() error { return e.Err }

// connect starts the server and lists its tools; s.mu is held.
func (s *server) connect(ctx context.Context) error {
	if s.closed {
		return errors.New("the session is closed")
	}
	s.exp = &expander{lookup: s.set.opts.lookup()}
	r, err := s.cfg.resolve(s.exp)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.startTimeout())
	defer cancel()
	var t mcp.Transport
	if len(r.command) > 0 {
		p, err := startProcess(r, s.set.opts.Dir)
		if err != nil {
			return fmt.Errorf("starting %s: %v", r.command[0], err)
		}
		s.proc = p
		t = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin, MaxLineLength: s.cfg.maxMessage()}
	} else {
		hc := &http.Client{Transport: headerTransport{headers: r.headers, base: http.DefaultTransport}}
		t = &mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true, MaxEventSize: s.cfg.maxMessage()}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "july", Version: "1"}, nil)
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		err = s.startError(ctx, err)
		s.stop()
		return err
	}
	s.cs = cs
	var listed []*mcp.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			err = s.startError(ctx, fmt.Errorf("listing its tools: %w", err))
			s.stop()
			return err
		}
		if len(listed) == maxTools {
			s.stop()
			return fmt.Errorf("it lists more than %d tools", maxTools)
		}
		listed = append(listed, tool)
	}
	if s.listed == nil {
		s.listed = listed
	}
	go s.watch(cs)
	return nil
}

// maxTools bounds the tools one server may list.
const maxTools = 1000

// startError explains a failed start: a timeout names the bound, a
// process that died says how, with the end of its stderr.
func (s *server) startError(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("it did not start within %s (raise mcp.%s.startTimeout)", s.cfg.startTimeout(), s.name)
	}
	return s.withStderr(s.bounded(err))
}

// bounded names the bound when err is a message over MaxMessageBytes.
func (s *server) bounded(err error) error {
	if strings.Contains(err.Error(), "exceeded the configured maximum") {
		return fmt.Errorf("it sent a message over %d bytes (raise mcp.%s.maxMessageBytes)", s.cfg.maxMessage(), s.name)
	}
	return err
}

// withStderr adds how a stdio server exited and the end of its stderr.
func (s *server) withStderr(err error) error {
	p := s.proc
	if p == nil {
		return err
	}
	select {
	case <-p.done:
		if p.err != nil {
			err = fmt.Errorf("%w (the process exited: %v)", err, p.err)
		} else {
			err = fmt.Errorf("%w (the process exited)", err)
		}
	case <-time.After(time.Second):
	}
	if tail := strings.TrimSpace(p.stderr.String()); tail != "" {
		err = fmt.Errorf("%w; its stderr ends: %s", err, lastLines(tail, 5))
	}
	return err
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// watch marks the server down when its connection ends on its own.
func (s *server) watch(cs *mcp.ClientSession) {
	err := cs.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cs != cs || s.closed {
		return
	}
	if err == nil {
		err = errors.New("the connection closed")
	}
	s.down(s.withStderr(fmt.Errorf("it stopped: %v", s.bounded(err))))
}

// down records a failure and releases the connection; s.mu is held.
func (s *server) down(err error) {
	s.stop()
	s.failures++
	s.lastErr = err
	s.retryAt = time.Now().Add(s.set.opts.backoff(s.failures))
}

// stop closes the connection and the process; s.mu is held.
func (s *server) stop() {
	if s.proc != nil {
		s.proc.close()
		s.proc = nil
	}
	if s.cs != nil {
		cs := s.cs
		s.cs = nil
		go cs.Close() // an HTTP server may be slow to answer the DELETE
	}
}

// session returns a live connection, (re)starting the server when it is
// down and its backoff has passed.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, *expander, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cs != nil {
		return s.cs, s.exp, nil
	}
	if s.lastErr != nil {
		if wait := time.Until(s.retryAt); wait > 0 {
			return nil, s.exp, fmt.Errorf("%v; restarting it in %s", s.lastErr, wait.Round(time.Millisecond))
		}
	}
	if err := s.connect(ctx); err != nil {
		s.down(err)
		return nil, s.exp, err
	}
	s.failures, s.lastErr = 0, nil
	return s.cs, s.exp, nil
}

// due reports whether a restart may be tried now: the server is up, or
// its backoff has passed.
func (s *server) due() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cs != nil || !time.Now().Before(s.retryAt)
}

// tools returns the tools of the server's first successful start.
func (s *server) tools() []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listed
}

// call calls the server's tool; a failure of the connection marks the
// server down, to be restarted by a later call.
func (s *server) call(ctx context.Context, tool string, args any) (*mcp.CallToolResult, error) {
	cs, exp, err := s.session(ctx)
	if err != nil {
		return nil, s.redact(exp, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.callTimeout())
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err == nil {
		return res, nil
	}
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire):
		// The server answered with an error: it is still up.
		return nil, s.redact(exp, fmt.Errorf("the server refused the call: %v", wire.Message))
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("the call took longer than %s (raise mcp.%s.callTimeout)", s.cfg.callTimeout(), s.name)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	s.mu.Lock()
	if s.cs == cs {
		s.down(s.withStderr(fmt.Errorf("it failed: %v", s.bounded(err))))
	}
	lastErr := s.lastErr
	s.mu.Unlock()
	if lastErr == nil {
		lastErr = err
	}
	return nil, s.redact(exp, fmt.Errorf("%v; it is restarted on the next call", lastErr))
}

func (s *server) redact(exp *expander, err error) error {
	if exp == nil {
		return err
	}
	return errors.New(exp.redact(err.Error()))
}

// close stops the server for good.
func (s *server) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.stop()
}

// pid returns the stdio server's process id, or 0.
func (s *server) pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Pid()
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}
