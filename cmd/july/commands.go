package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/httpguard"
	"github.com/julyfs/julyfs/runner/mcpserver"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs/index"
)

// load loads the agent in the command's first argument, printing every
// validation problem.
func load(c *cli.Context) (*runner.Agent, error) {
	if c.NArg() < 1 {
		return nil, usagef(c, "missing the agent directory")
	}
	a, err := runner.Load(c.Args().First())
	var ve *runner.ValidationError
	if errors.As(err, &ve) {
		fmt.Fprintln(c.App.ErrWriter, ve.Error())
		return nil, errReported
	}
	return a, err
}

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check an agent definition",
		ArgsUsage: "DIR",
		Description: `Loads DIR/agent.yaml and reports every problem at once (exit 1): unknown
fields or tool names, and the fail-closed combinations (a root with shell,
task or readLints; a root with local.cwd, local.workspaceDir, local.sandbox or
a cloud runtime; an authored tools/Read.* named like a synthesized tool;
an authored tools/NAME.yaml with an unknown field, a bad inputSchema or a
command that is not on PATH (tools/x.yaml:LINE: ...);
workspaceFiles under memory/ or, with a root, /tmp). On success it prints
what the agent's model gets, and on stderr a warning for each legal but
probably unintended setting (a root mount under /tmp, shadowed each turn by
the scratch /tmp). A plugin mount whose binary is missing, not executable or
not the one its sha256 pins is a problem here (validate does not run plugins,
so a binary that is not a plugin or refuses its parameters shows only when a
command binds the tree: that mount's calls then fail, the others serve).
The schedules (schedules/*.md with cron: frontmatter) are listed with their
next three fire times; a bad one is a problem (schedules/x.md:2: bad cron
"…": …). Each MCP server under mcp: is started and its tools listed; one
that cannot be reached, or a tool the allowlist names that its server does
not list, is a problem.`,
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usagef(c, "want one agent directory, got %d arguments", c.NArg())
			}
			a, err := load(c)
			if err != nil {
				return err
			}
			if err := checkRun(c, a, ""); err != nil {
				return err
			}
			if ps := append(a.PluginProblems(), a.AuthoredProblems()...); len(ps) > 0 {
				fmt.Fprintln(c.App.ErrWriter, (&runner.ValidationError{Dir: c.Args().First(), Problems: ps}).Error())
				return errReported
			}
			scheds, err := checkSchedules(c, a)
			if err != nil {
				return err
			}
			w := c.App.Writer
			fmt.Fprintf(w, "ok: agent %s\n", a.Config.Name)
			fmt.Fprintf(w, "tree: %s\n", a.TreeDescription())
			fmt.Fprintf(w, "tools: %s\n", list(a.Plan.Served()))
			fmt.Fprintf(w, "authored (tools/*.yaml, always served): %s\n", list(authoredNames(a)))
			fmt.Fprintf(w, "harness (served by july run's agent loop, not by july call or july mcp): %s\n", list(a.Plan.Harness))
			if a.Plan.ScratchTmp {
				fmt.Fprintln(w, "scratch: each turn binds an empty /tmp over the root")
			}
			for _, p := range a.Warnings {
				fmt.Fprintf(c.App.ErrWriter, "warning: %s\n", p)
			}
			validateRun(c, a)
			printSchedules(c, scheds)
			return validateMCP(c, a)
		},
	}
}

func list(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// toolJSON is one tool in `july tools` output.
type toolJSON struct {
	Name         string            `json:"name"`
	Description  string            `json:"description"`
	Effect       tools.Effect      `json:"effect"`
	Destructive  bool              `json:"destructive,omitempty"`
	OpenWorld    bool              `json:"openWorld,omitempty"`
	InputSchema  any               `json:"inputSchema"`
	OutputSchema any               `json:"outputSchema,omitempty"`
	Aliases      map[string]string `json:"aliases,omitempty"`
}

func toolsCommand() *cli.Command {
	return &cli.Command{
		Name:      "tools",
		Usage:     "list the tools july serves for an agent, with their JSON schemas",
		ArgsUsage: "DIR",
		Description: `Prints one JSON document: the agent, its tree, the tools july serves (the
tools synthesized from the tree, on the host default Shell, and the authored
tools of tools/*.yaml) with their
effect, input schema and accepted argument aliases, and the harness builtins
the plan grants that belong to the agent loop. The tools of agent.yaml's mcp:
servers (mcp__<server>__<tool>, served by the agent loop) are listed too:
july connects to each server, and mcpServers says what each one offers or
why it could not be reached.`,
		Action: func(c *cli.Context) error {
			a, err := load(c)
			if err != nil {
				return err
			}
			turn, closeFn, err := openTurn(c.Context, a, runner.SessionOptions{NoIndex: true})
			if err != nil {
				return err
			}
			defer closeFn()
			out := struct {
				Agent      string     `json:"agent"`
				Tree       string     `json:"tree"`
				Tools      []toolJSON `json:"tools"`
				Harness    []string   `json:"harness"`
				MCP        bool       `json:"mcp"`
				ScratchTmp bool       `json:"scratchTmp"`
				// MCPServers are agent.yaml's mcp: servers, connected to
				// list their tools (which are in Tools).
				MCPServers []mcpServerJSON `json:"mcpServers,omitempty"`
			}{Agent: a.Config.Name, Tree: a.TreeDescription(), Tools: []toolJSON{}, Harness: a.Plan.Harness, MCP: a.Plan.MCP, ScratchTmp: a.Plan.ScratchTmp}
			if out.Harness == nil {
				out.Harness = []string{}
			}
			mts, status, closeMCP := connectMCP(c, a)
			defer closeMCP()
			if status != nil {
				out.MCPServers = mcpServersJSON(status)
			}
			for _, t := range append(turn.Tools(), mts...) {
				tj := toolJSON{Name: t.Name, Description: t.Description, Effect: t.Effect, Destructive: t.Destructive,
					OpenWorld: t.OpenWorld, InputSchema: t.Schema, Aliases: t.Aliases}
				if t.OutputSchema != nil {
					tj.OutputSchema = t.OutputSchema
				}
				out.Tools = append(out.Tools, tj)
			}
			enc := json.NewEncoder(c.App.Writer)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(out)
		},
	}
}

func callCommand() *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "call one of an agent's tools",
		ArgsUsage: "DIR TOOL [JSON|-]",
		Description: `Calls TOOL with the JSON object of arguments (default {}; - reads it from
stdin) through the same dispatcher the MCP server and the agent loop use:
argument aliases (old_string, file_path, ...) map onto the schema's names,
the arguments are validated, and the result is printed: text as is, an
image as a one-line description. A tool error prints its message on stderr
and exits 1. --json prints the whole result as JSON instead.

The tree is bound for this one call: a temp root starts from agent.yaml's
contents every time, so an edit is not seen by the next july call.

SemanticSearch finds results only with a search index: agent.yaml's index:,
or --index DIR. The index is brought up to date with the tree before the
call and held exclusively while it runs.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "run read tools, stub write tools"},
			&cli.BoolFlag{Name: "json", Usage: "print the whole result as JSON"},
			indexFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() < 2 || c.NArg() > 3 {
				return usagef(c, "want DIR TOOL [JSON], got %d arguments", c.NArg())
			}
			args := []byte("{}")
			if c.NArg() == 3 {
				args = []byte(c.Args().Get(2))
				if string(args) == "-" {
					var err error
					if args, err = io.ReadAll(c.App.Reader); err != nil {
						return err
					}
				}
			}
			a, err := load(c)
			if err != nil {
				return err
			}
			// One call: the index is brought up to date at open and not
			// followed (watching every directory would cost more than the call).
			idx := indexOptions(c)
			idx.Follow = false
			turn, closeFn, err := openTurn(c.Context, a, runner.SessionOptions{DryRun: c.Bool("dry-run"),
				IndexDir: c.String("index"), Index: idx})
			if err != nil {
				return err
			}
			defer closeFn()
			r := turn.Call(c.Context, c.Args().Get(1), args)
			if c.Bool("json") {
				enc := json.NewEncoder(c.App.Writer)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(r); err != nil {
					return err
				}
				if r.IsError {
					return errReported
				}
				return nil
			}
			if r.IsError {
				fmt.Fprintln(c.App.ErrWriter, r.String())
				return errReported
			}
			_, err = fmt.Fprintln(c.App.Writer, r.String())
			return err
		},
	}
}

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve an agent's tools over MCP (stdio, or streamable HTTP)",
		ArgsUsage: "DIR",
		Description: `Serves the tools july call can call, over the Model Context Protocol: on
stdin/stdout by default, or as streamable HTTP at --http ADDR (for example
127.0.0.1:8765; port 0 picks a free port, printed on stderr). Every MCP
session is one turn: with a root, it gets its own empty /tmp. The tree is
bound once and shared by every session of the process, and so is its search
index (agent.yaml's index:, or --index DIR), held until the server ends. On
stdio a line that is not JSON-RPC gets an error response and the server
keeps serving. Each session's /tmp holds at most --tmp-quota bytes.

Over HTTP, a bearer token (--token-file FILE, or the JULY_MCP_TOKEN
environment variable) is required on any address but loopback: --http :PORT
or 0.0.0.0:PORT without one is refused. On 127.0.0.1 or [::1] the token is
optional. Browser requests from another origin are refused (403), and a
session idle for --idle-timeout is closed and its /tmp dropped. A request
body over --max-request-bytes gets 413 with a JSON-RPC error.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "http", Usage: "serve streamable HTTP at `ADDR` instead of stdio"},
			&cli.StringFlag{Name: "token-file", Usage: "require the bearer token in `FILE` (its first line) on HTTP; default $" + mcpserver.TokenEnv},
			&cli.DurationFlag{Name: "idle-timeout", Value: mcpserver.DefaultIdleTimeout, Usage: "close an HTTP session idle this long (0: never)"},
			&cli.Int64Flag{Name: "max-request-bytes", Value: mcpserver.DefaultMaxRequestBytes, Usage: "bytes an HTTP request body may hold (larger: 413)"},
			&cli.Int64Flag{Name: "tmp-quota", Value: DefaultTmpQuota, Usage: "bytes each MCP session may keep in its /tmp scratch (0: no limit)"},
			indexFlag,
			watchFlags[0], watchFlags[1],
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef(c, "want one agent directory, got %d arguments", c.NArg())
			}
			a, err := load(c)
			if err != nil {
				return err
			}
			sopts := runner.SessionOptions{IndexDir: c.String("index"), Index: indexOptions(c), SessionID: liveSessionID(a), ScratchQuota: c.Int64("tmp-quota")}
			s, err := a.Open(c.Context, sopts)
			if err != nil {
				return err
			}
			defer s.Close()
			unmount, err := mountWatch(c, s)
			if err != nil {
				return err
			}
			defer unmount()
			var mopts mcpserver.Options
			if a.Live() {
				// Each MCP session its own live root, under its own id.
				mopts.OpenSession = func(ctx context.Context) (*runner.Session, error) {
					o := sopts
					o.SessionID = sessions.NewID()
					return a.Open(ctx, o)
				}
			}
			srv, err := mcpserver.New(s, mopts)
			if err != nil {
				return err
			}
			addr := c.String("http")
			if addr == "" {
				err := srv.Run(c.Context, mcpserver.StdioTransport(c.App.Reader, c.App.Writer))
				if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			return serveHTTP(c, srv, a.Config.Name, addr)
		},
	}
}

// DefaultTmpQuota is july mcp's default --tmp-quota.
const DefaultTmpQuota = 64 << 20

func serveHTTP(c *cli.Context, srv *mcpserver.Server, name, addr string) error {
	token, err := httpguard.ReadToken(c.String("token-file"), mcpserver.TokenEnv)
	if err != nil {
		return err
	}
	ln, err := httpguard.Listen(addr, token, httpguard.ListenOptions{Flag: "--http", Env: mcpserver.TokenEnv, What: "the agent's tools"})
	if err != nil {
		return err
	}
	idle := c.Duration("idle-timeout")
	if idle == 0 {
		idle = -1 // never
	}
	hs := &http.Server{Handler: srv.Handler(mcpserver.HTTPOptions{Token: token, IdleTimeout: idle, MaxRequestBytes: c.Int64("max-request-bytes")}), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(c.App.ErrWriter, "july mcp: serving agent %s at http://%s/\n", name, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-c.Context.Done():
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
		return nil
	}
}

// indexFlag overrides agent.yaml's index.
var indexFlag = &cli.StringFlag{Name: "index", Usage: "back SemanticSearch with the search index in `DIR` (built or brought up to date first; overrides agent.yaml's index)"}

// indexProgressFiles is the number of files to read above which opening
// the index says so on stderr.
const indexProgressFiles = 200

// indexOptions reports index messages on stderr: a rebuild, and one line
// when the open has many files to read. The index follows the tree's
// changes (including those made behind its back on local: mounts) for as
// long as the session lives: july run and july mcp serve many calls.
func indexOptions(c *cli.Context) index.Options {
	said := false
	return index.Options{
		Follow: true,
		Log:    func(msg string) { fmt.Fprintf(c.App.ErrWriter, "july: %s\n", msg) },
		Progress: func(p index.Progress) {
			if p.Phase == index.PhaseIndex && p.Total >= indexProgressFiles && !said {
				said = true
				fmt.Fprintf(c.App.ErrWriter, "july: indexing %d files...\n", p.Total)
			}
		},
	}
}

// liveSessionID returns a new session id for an agent with a live root
// (its tree is built per session), else "".
func liveSessionID(a *runner.Agent) string {
	if a.Live() {
		return sessions.NewID()
	}
	return ""
}

// openTurn binds the agent's tree and starts one turn.
func openTurn(ctx context.Context, a *runner.Agent, opts runner.SessionOptions) (*runner.Turn, func(), error) {
	if opts.SessionID == "" {
		opts.SessionID = liveSessionID(a)
	}
	s, err := a.Open(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.Turn()
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return t, func() { s.Close() }, nil
}
