// Command july runs agents: it validates an agent directory, lists the
// tools its model would get, calls one, serves them all over MCP, and runs
// the agent loop with a model (july run), keeping durable sessions.
//
//	july validate examples/notes                 # fail-closed combinations exit 1 with a message each
//	july tools examples/notes                    # the served tools, with their JSON schemas
//	july call examples/notes Read '{"path":"/a.txt"}'
//	july mcp examples/notes                      # MCP over stdio
//	july mcp examples/notes --http 127.0.0.1:8765  # MCP over streamable HTTP
//	july call examples/project SemanticSearch '{"query":"greeting"}'  # served by its index
//	july run examples/notes --model script:examples/notes/demo.script.yaml -m "Summarize /a.txt"
//	july sessions examples/notes                 # the agent's sessions
//	july show examples/notes ses_01J...          # a session's transcript
//	july serve examples/notes                    # agents over HTTP (docs/serve.md)
//
// An agent directory holds agent.yaml (name, model, root, tools, ...) and
// instructions.md; see docs/runner.md. Flags may come before or after the
// positional arguments. A tool error prints its message on stderr and
// exits 1; a bad agent exits 1 with every problem; usage errors exit 2.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/internal/clirun"
)

// gcPercent is july's garbage-collection target (Go's default is 100), as
// julyfs's. A tool call keeps little alive but allocates much in the MCP
// SDK's JSON decoding (a 32 KiB buffer for each of its several decodes of
// a request), while the process holds a few MB of long-lived data (the
// compiled patterns of its web tools, the index's automata) that every
// collection marks again: at 100, half of july mcp's CPU per small Read
// was the collector. At 400 a stdio Read costs ~40% less server CPU for a
// few MB more (docs/perf/runner.md). GOGC in the environment wins.
const gcPercent = 400

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	clirun.Main(newApp(os.Stdin, os.Stdout, os.Stderr))
}

// newApp returns the july application wired to the given streams.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "july",
		Usage: "run an agent, or see and call its tools without a model",
		Description: `An agent is a directory with agent.yaml and instructions.md. agent.yaml names
the tree the agent runs on (root:, a mount table; omitted: the host disk at
the working directory) and may narrow its tools (tools:, an allowlist).

   july validate DIR          check the definition; every problem, exit 1
   july tools DIR             the tools july serves, with JSON schemas
   july call DIR TOOL [JSON]  call one tool (JSON '-' reads stdin)
   july mcp DIR [--http ADDR] serve the tools over MCP (stdio, or HTTP)
   july run DIR -m MESSAGE    run a turn: the model, its tool calls, the reply
   july sessions DIR          the agent's sessions
   july show DIR ID           a session's transcript (--json: its events)
   july serve DIR...          serve agents over HTTP: sessions, live events, schedules

A temp root lives as long as the process: each july call starts from the
tree agent.yaml describes, so a second call does not see the first's edit.
Use a local: root (or july mcp) to keep changes.`,
		Commands:                  []*cli.Command{validateCommand(), toolsCommand(), callCommand(), mcpCommand(), runCommand(), sessionsCommand(), showCommand(), diffCommand(), logCommand(), rewindCommand(), forkCommand(), applyCommand(), mountCommand(), serveCommand(), remindersCommand(), evalCommand()},
		Reader:                    stdin,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		DisableSliceFlagSeparator: true,
	}
	clirun.Standard(app, nil)
	return app
}

// usagef returns a usage error for the command of c: exit 2 with a
// pointer to the command's --help.
func usagef(c *cli.Context, format string, args ...any) error {
	return clirun.Usagef(c, format, args...)
}

// errReported is an error already printed: exit 1 without another message.
var errReported = fmt.Errorf("reported: %w", clirun.ErrSilent)

// run runs july with args (args[0] is the program name) and returns the
// exit code: 0, 1 for an error, 2 for a usage error, 130 when interrupted;
// see clirun.Run.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return clirun.Run(ctx, newApp(stdin, stdout, stderr), args)
}
