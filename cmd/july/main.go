// Command july runs an agent's tools without a model: it validates an
// agent directory, lists the tools its model would get, calls one, or
// serves them all over MCP.
//
//	july validate examples/notes                 # fail-closed combinations exit 1 with a message each
//	july tools examples/notes                    # the served tools, with their JSON schemas
//	july call examples/notes Read '{"path":"/a.txt"}'
//	july mcp examples/notes                      # MCP over stdio
//	july mcp examples/notes --http 127.0.0.1:8765  # MCP over streamable HTTP
//
// An agent directory holds agent.yaml (name, model, root, tools, ...) and
// instructions.md; see docs/runner.md. Flags may come before or after the
// positional arguments. A tool error prints its message on stderr and
// exits 1; a bad agent exits 1 with every problem; usage errors exit 2.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// newApp returns the july application wired to the given streams.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "july",
		Usage: "see and call an agent's tools without a model",
		Description: `An agent is a directory with agent.yaml and instructions.md. agent.yaml names
the tree the agent runs on (root:, a mount table; omitted: the host disk at
the working directory) and may narrow its tools (tools:, an allowlist).

   july validate DIR          check the definition; every problem, exit 1
   july tools DIR             the tools july serves, with JSON schemas
   july call DIR TOOL [JSON]  call one tool (JSON '-' reads stdin)
   july mcp DIR [--http ADDR] serve the tools over MCP (stdio, or HTTP)

A temp root lives as long as the process: each july call starts from the
tree agent.yaml describes, so a second call does not see the first's edit.
Use a local: root (or july mcp) to keep changes.`,
		Commands:                  []*cli.Command{validateCommand(), toolsCommand(), callCommand(), mcpCommand()},
		Reader:                    stdin,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		HideVersion:               true,
		DisableSliceFlagSeparator: true,
		ExitErrHandler:            func(*cli.Context, error) {}, // run reports errors
		OnUsageError:              onUsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return &usageError{msg: fmt.Sprintf("unknown command %q", c.Args().First())}
			}
			return cli.ShowAppHelp(c)
		},
	}
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = onUsageError
		}
	}
	return app
}

// usageError is a command line that does not fit the command: exit 2.
type usageError struct {
	cmd string
	msg string
}

func (e *usageError) Error() string { return e.msg }

func onUsageError(c *cli.Context, err error, _ bool) error {
	name := ""
	if c.Command != nil {
		name = c.Command.Name
	}
	return &usageError{cmd: name, msg: err.Error()}
}

func usagef(c *cli.Context, format string, args ...any) error {
	return &usageError{cmd: c.Command.Name, msg: fmt.Sprintf(format, args...)}
}

// errReported is an error already printed: exit 1 without another message.
var errReported = errors.New("reported")

// run runs july with args (args[0] is the program name) and returns the
// exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, reorderArgs(app, args))
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errReported):
		return 1
	case errors.Is(err, syscall.EPIPE):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, ue.msg)
		if ue.cmd != "" {
			fmt.Fprintf(stderr, "Run 'july %s --help' for usage.\n", ue.cmd)
		} else {
			fmt.Fprintln(stderr, "Run 'july --help' for usage.")
		}
		return 2
	}
	fmt.Fprintln(stderr, err)
	return 1
}

// reorderArgs moves a command's flags in front of its positional
// arguments, so `july mcp DIR --http ADDR` works as well as `july mcp
// --http ADDR DIR`. "--" ends the flags; "-" is positional.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	var cmd *cli.Command
	for _, c := range app.Commands {
		if c.Name == args[1] || slices.Contains(c.Aliases, args[1]) {
			cmd = c
		}
	}
	if cmd == nil {
		return args
	}
	valued := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			valued[n] = !isBool
		}
	}
	valued["help"], valued["h"] = false, false
	var flags, pos []string
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			pos = append(pos, rest[i+1:]...)
			break
		}
		name := strings.TrimLeft(a, "-")
		name, _, hasValue := strings.Cut(name, "=")
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		// An unknown flag moves too, so the command reports it.
		takes := valued[name]
		flags = append(flags, a)
		if takes && !hasValue && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	out := append([]string{args[0], args[1]}, flags...)
	if len(pos) > 0 {
		out = append(out, "--")
		out = append(out, pos...)
	}
	return out
}
