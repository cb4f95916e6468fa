// Command julyfs runs the julyfs filesystem verbs from a shell against a
// tree composed from --mount flags and --config files, without mounting
// anything.
//
//	julyfs tour                                   # a guided run on a built-in tree
//	julyfs ls   --mount /=local:./docs /
//	julyfs grep --mount /repo=local:./src --mount /notes=temp: 'TODO' / --glob '*.go'
//
// Every command that reads or writes a tree takes repeatable --mount
// PREFIX=KIND:ARG[?ro] flags and an optional --config FILE (see package
// rootspec); flags may come before or after the positional arguments.
// Errors print the contract string ("not found: /p") on stderr and exit 1;
// usage errors exit 2; grep exits 1 when nothing matched. See
// docs/cli.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// commands returns the command list, in the order --help shows it.
// Commands that read or write a tree use treeFlags and openTree.
func commands() []*cli.Command {
	return []*cli.Command{
		tourCommand(),
		lsCommand(),
		statCommand(),
		catCommand(),
		globCommand(),
		grepCommand(),
		writeCommand(),
		rmCommand(),
		searchCommand(),
		indexCommand(),
		mountsCommand(),
		mountCommand(),
		unmountCommand(),
	}
}

// newApp returns the julyfs application wired to the given streams.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "julyfs",
		Usage: "a virtual filesystem for AI agents, from the shell",
		Description: `julyfs composes one tree from host directories and in-memory trees and runs
the filesystem verbs on it: list, stat, read, glob, grep, write, delete, search.

Start with the tour, which runs every verb on a small tree built into julyfs:

   julyfs tour

Then point it at your own files. A tree is described by --mount flags,
PREFIX=KIND:ARG, one per mount (repeat the flag to compose several):

   julyfs ls   --mount /=local:. /                       # this directory at /
   julyfs grep --mount /=local:. 'TODO' / --glob '*.go'
   julyfs ls   --mount /repo=local:./src --mount /notes=temp: --mount /docs=local:./docs?ro /

Kinds: local:DIR (a host directory), temp: (an empty in-memory tree).
Append ?ro to make a mount read-only. A --config FILE (YAML) describes what
flags cannot: overlays, nested unions, seeded temp trees; see 'julyfs help mounts'.

Paths inside the tree are absolute and /-separated: /repo/main.go.
Errors print the contract message (not found: /p, read-only mount: /p,
no mount for path: /p) on stderr and exit 1; usage errors exit 2.`,
		Commands:                  commands(),
		Reader:                    stdin,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		HideVersion:               true,
		DisableSliceFlagSeparator: true,
		EnableBashCompletion:      false,
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
		setUsageErrors(c)
	}
	return app
}

// setUsageErrors makes flag errors of c and its subcommands usage errors.
func setUsageErrors(c *cli.Command) {
	if c.OnUsageError == nil {
		c.OnUsageError = onUsageError
	}
	for _, s := range c.Subcommands {
		setUsageErrors(s)
	}
}

// usageError is a command line that does not fit the command: exit 2
// with a pointer to --help.
type usageError struct {
	cmd string // the command's full name, "" for the app
	msg string
}

func (e *usageError) Error() string { return e.msg }

func onUsageError(c *cli.Context, err error, _ bool) error {
	name := ""
	if c.Command != nil {
		name = c.Command.FullName()
	}
	return &usageError{cmd: name, msg: err.Error()}
}

// usagef returns a usage error for the command of c.
func usagef(c *cli.Context, format string, args ...any) error {
	return &usageError{cmd: c.Command.FullName(), msg: fmt.Sprintf(format, args...)}
}

// errNoMatch is grep's "nothing matched": exit 1 without a message.
var errNoMatch = errors.New("no match")

// run runs julyfs with args (args[0] is the program name) and returns the
// exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	err := app.RunContext(ctx, reorderArgs(app, args))
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return 130 // interrupted: the shell's code for SIGINT, no message
	}
	return exitCode(err, stderr)
}

// exitCode reports err on stderr and returns the exit code for it.
func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errNoMatch):
		return 1
	case errors.Is(err, syscall.EPIPE):
		// The reader went away (julyfs glob ... | head): not an error.
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, ue.msg)
		if ue.cmd != "" {
			fmt.Fprintf(stderr, "Run 'julyfs %s --help' for usage.\n", ue.cmd)
		} else {
			fmt.Fprintln(stderr, "Run 'julyfs --help' for usage.")
		}
		return 2
	}
	fmt.Fprintln(stderr, err)
	return 1
}
