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
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/internal/clirun"
)

func main() {
	clirun.Main(newApp(os.Stdin, os.Stdout, os.Stderr))
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
	return &cli.App{
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
	}
}

// usagef returns a usage error for the command of c: exit 2 with a
// pointer to the command's --help.
func usagef(c *cli.Context, format string, args ...any) error {
	return clirun.Usagef(c, format, args...)
}

// errNoMatch is grep's "nothing matched": exit 1 without a message.
var errNoMatch = fmt.Errorf("no match: %w", clirun.ErrSilent)

// run runs julyfs with args (args[0] is the program name) and returns the
// exit code: 0, 1 for an error (grep: no match), 2 for a usage error, 130
// when interrupted; see clirun.Run.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return clirun.Run(ctx, newApp(stdin, stdout, stderr), args)
}
