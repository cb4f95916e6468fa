// Package mcpserver serves an agent's tools over the Model Context
// Protocol (github.com/modelcontextprotocol/go-sdk), on stdio or streamable
// HTTP, so any MCP client (Claude Code, Cursor, the MCP inspector) gets the
// same tools over the same tree as the agent's model.
//
// Every tools/call goes through the runner's Dispatcher: the same alias
// mapping, schema validation and error results as july call. A tool error
// is an MCP result with isError set, never a protocol error. Each tool
// carries annotations derived from its effect: readOnlyHint for read tools,
// destructiveHint for writes, openWorldHint for the host shell.
//
// # Sessions and turns
//
// Each MCP session (one stdio connection; one Mcp-Session-Id over HTTP) is
// one runner turn: it gets its own dispatcher and, when the agent's plan
// binds scratch, its own empty /tmp, dropped when the session ends. The
// session's tree itself (the agent's root) is shared by all MCP sessions of
// the process, as a static root is shared by all of an agent's sessions.
//
// # Hardening
//
// On stdio ([StdioTransport]) a bad line or a JSON-RPC batch gets an error
// response and the server keeps serving, and requests read before stdin
// ends are answered before the server sees the end. Over HTTP
// ([Server.Handler]) requests pass cross-origin protection and, with a
// token, bearer authentication; idle sessions are closed after
// [HTTPOptions].IdleTimeout, and a body over [HTTPOptions].MaxRequestBytes
// gets 413 with a JSON-RPC error. A turn's /tmp quota is the session's
// (runner.SessionOptions.ScratchQuota).
//
// # Concurrency
//
// A Server is safe for concurrent use; calls of different MCP sessions run
// in parallel.
package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/tools"
)

// Options configure a Server.
type Options struct {
	// Logger receives the MCP SDK's logs; nil discards them.
	Logger *slog.Logger
	// OpenSession, when set, opens a runner session for each MCP session
	// (an agent with a live root: each MCP session its own tree), closed
	// when the MCP session ends. Without it every MCP session is a turn of
	// the server's session.
	OpenSession func(ctx context.Context) (*runner.Session, error)
}

// Server is an MCP server over one runner session.
type Server struct {
	session *runner.Session
	srv     *mcp.Server
	open    func(ctx context.Context) (*runner.Session, error)

	mu    sync.Mutex
	turns map[*mcp.ServerSession]*runner.Turn
}

// New returns a server offering the tools july serves for the session's
// agent (its synthesized file tools and, on the host default, Shell). The
// agent's instructions become the server's instructions.
func New(s *runner.Session, opts Options) (*Server, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := s.Agent()
	m := &Server{session: s, open: opts.OpenSession, turns: map[*mcp.ServerSession]*runner.Turn{}}
	m.srv = mcp.NewServer(&mcp.Implementation{Name: "july/" + a.Config.Name, Title: a.Config.Name, Version: version()}, &mcp.ServerOptions{
		Instructions: a.Instructions,
		Logger:       logger,
	})
	// The tool list is the same for every turn: take it from one.
	t, err := s.Turn()
	if err != nil {
		return nil, err
	}
	for _, tool := range t.Tools() {
		m.srv.AddTool(describe(tool), m.handle)
	}
	return m, nil
}

// MCP returns the underlying go-sdk server.
func (m *Server) MCP() *mcp.Server { return m.srv }

// Run serves one MCP session over t (for example &mcp.StdioTransport{})
// until the client disconnects or ctx is done.
func (m *Server) Run(ctx context.Context, t mcp.Transport) error {
	return m.srv.Run(ctx, t)
}

// handle is the tools/call handler of every tool.
func (m *Server) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	turn, err := m.turn(req.Session)
	if err != nil {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}, IsError: true}, nil
	}
	return toMCP(turn.Call(ctx, req.Params.Name, req.Params.Arguments)), nil
}

// turn returns the turn of an MCP session, starting it on first use and
// dropping it when the session ends.
func (m *Server) turn(ss *mcp.ServerSession) (*runner.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.turns[ss]; t != nil {
		return t, nil
	}
	rs, closeRS := m.session, func() {}
	if m.open != nil {
		var err error
		if rs, err = m.open(context.Background()); err != nil {
			return nil, fmt.Errorf("opening the session's tree: %w", err)
		}
		closeRS = func() { rs.Close() }
	}
	t, err := rs.Turn()
	if err != nil {
		closeRS()
		return nil, fmt.Errorf("starting a turn: %w", err)
	}
	m.turns[ss] = t
	if ss != nil {
		go func() {
			ss.Wait()
			m.mu.Lock()
			delete(m.turns, ss)
			m.mu.Unlock()
			closeRS()
		}()
	}
	return t, nil
}

// describe turns a runner tool into an MCP tool with annotations from its
// effect.
func describe(t *tools.Tool) *mcp.Tool {
	ann := &mcp.ToolAnnotations{Title: t.Name, ReadOnlyHint: t.Effect == tools.EffectRead}
	if t.Effect == tools.EffectWrite {
		ann.DestructiveHint = &t.Destructive
	}
	open := t.OpenWorld
	ann.OpenWorldHint = &open
	mt := &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Schema, Annotations: ann}
	if t.OutputSchema != nil {
		mt.OutputSchema = t.OutputSchema
	}
	return mt
}

// toMCP converts a runner result.
func toMCP(r *tools.Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{}}
	for _, p := range r.Content {
		switch p.Type {
		case "image":
			out.Content = append(out.Content, &mcp.ImageContent{Data: p.Data, MIMEType: p.MIMEType})
		default:
			out.Content = append(out.Content, &mcp.TextContent{Text: p.Text})
		}
	}
	if r.Structured != nil && !r.IsError {
		out.StructuredContent = r.Structured
	}
	return out
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
