// Package julyfscli is the julyfs command line: the application, its
// commands, the tree flags and the output conventions, shared by the two
// executables that serve it.
//
//   - cmd/julyfs is the command users type. It runs every verb in-process
//     except the ones that need FUSE or the search index, and starts fast
//     because it links neither (Go runs every linked package's init at
//     start-up, and the index's alone costs milliseconds).
//   - cmd/julyfsd is its companion, the same CLI with those commands
//     implemented (package full). julyfs hands them to julyfsd by exec, with
//     the same arguments, so stdio, signals and the exit status pass
//     through untouched; see Heavy and ExecCompanion.
//
// The commands are urfave/cli/v2 commands run through internal/clirun:
// flags may follow positional arguments, errors print the contract string
// on stderr and exit 1, usage errors exit 2, grep exits 1 when nothing
// matched. See docs/cli.md.
package julyfscli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/internal/clirun"
)

// Main runs the julyfs CLI with the program's arguments and streams, the
// heavy commands carried out by h, and exits with its status.
//
// Called by the name mount(8) gives its helper (mount.fuse.julyfs, see
// install-helper), julyfs acts as that helper instead.
func Main(h Heavy) {
	if IsMountHelper(os.Args[0]) {
		os.Exit(RunMountHelper(context.Background(), os.Args[1:], os.Stderr))
	}
	app := NewApp(os.Stdin, os.Stdout, os.Stderr, h)
	setArgs(app, os.Args)
	clirun.Main(app)
}

// Run runs the julyfs CLI with args (args[0] is the program name) and
// returns the exit code: 0, 1 for an error (grep: no match), 2 for a usage
// error, 130 when interrupted; see clirun.Run.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, h Heavy) int {
	app := NewApp(stdin, stdout, stderr, h)
	setArgs(app, args)
	return clirun.Run(ctx, app, args)
}

// setArgs records the command line app runs, for a delegate to pass on.
func setArgs(app *cli.App, args []string) {
	app.Metadata = map[string]any{argsKey: args}
}

const argsKey = "julyfscli.args"

// commandLine returns the arguments c's application was run with, without
// the program name.
func commandLine(c *cli.Context) []string {
	if args, ok := c.App.Metadata[argsKey].([]string); ok && len(args) > 0 {
		return args[1:]
	}
	return os.Args[1:]
}

// commands returns the command list, in the order --help shows it.
// Commands that read or write a tree use treeFlags and OpenTree.
func commands(h Heavy) []*cli.Command {
	return []*cli.Command{
		tourCommand(h),
		lsCommand(),
		statCommand(),
		catCommand(),
		globCommand(),
		grepCommand(),
		writeCommand(),
		rmCommand(),
		searchCommand(h),
		indexCommand(h),
		mountsCommand(),
		mountCommand(h),
		unmountCommand(h),
		installHelperCommand(),
		conformanceCommand(),
	}
}

// NewApp returns the julyfs application wired to the given streams, its
// heavy commands carried out by h.
func NewApp(stdin io.Reader, stdout, stderr io.Writer, h Heavy) *cli.App {
	app := &cli.App{
		Name:     "julyfs",
		HelpName: "julyfs", // julyfsd is julyfs too: help and errors name the command users type
		Usage:    "a virtual filesystem for AI agents, from the shell",
		Description: `julyfs composes one tree from host directories and in-memory trees and runs
the filesystem verbs on it: list, stat, read, glob, grep, write, delete, search.

Start with the tour, which runs every verb on a small tree built into julyfs:

   julyfs tour

Then point it at your own files. A tree is described by --mount flags,
PREFIX=KIND:ARG, one per mount (repeat the flag to compose several):

   julyfs ls   --mount /=local:. /                       # this directory at /
   julyfs grep --mount /=local:. 'TODO' / --glob '*.go'
   julyfs ls   --mount /repo=local:./src --mount /notes=temp: --mount /docs=local:./docs?ro /

Kinds: local:DIR (a host directory), temp: (an empty in-memory tree),
hostfiles:DIR or hostfiles:postgres://... (durable files shared by hosts).
plugin:PATH?K=V&... (a plugin binary: julyfs-git, julyfs-archive).
Append ?ro to make a mount read-only. A --config FILE (YAML) describes what
flags cannot: overlays, nested unions, seeded temp trees; see 'julyfs help mounts'.

Paths inside the tree are absolute and /-separated: /repo/main.go.
Errors print the contract message (not found: /p, read-only mount: /p,
no mount for path: /p) on stderr and exit 1; usage errors exit 2.`,
		Commands:                  commands(h),
		Reader:                    stdin,
		Writer:                    stdout,
		ErrWriter:                 stderr,
		DisableSliceFlagSeparator: true,
	}
	clirun.Standard(app, map[string][]string{"mount": MountKindWords})
	return app
}

// MountKindWords are the words `julyfs completion` offers for a --mount
// value: the root mounted as each kind.
var MountKindWords = []string{"/=local:", "/=temp:", "/=hostfiles:", "/=plugin:"}

// Usagef returns a usage error for the command of c: exit 2 with a
// pointer to the command's --help.
func Usagef(c *cli.Context, format string, args ...any) error {
	return clirun.Usagef(c, format, args...)
}

// errNoMatch is grep's "nothing matched": exit 1 without a message.
var errNoMatch = fmt.Errorf("no match: %w", clirun.ErrSilent)
