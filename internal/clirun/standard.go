package clirun

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/internal/buildinfo"
)

// Standard gives app the commands every julyfs program has, appended to
// its own: version (the build, from package buildinfo), completion SHELL
// (a bash, zsh or fish completion script generated from app's commands
// and flags) and man (a manual page generated the same way), and a
// --version flag on the program itself. Call it once, after app's
// commands are set; the completion and man commands describe the
// commands app has at the time they run.
//
// values maps a flag name to the words its value completes to (julyfs's
// --mount to its mount kinds); other flags complete file names.
func Standard(app *cli.App, values map[string][]string) {
	app.Commands = append(app.Commands, versionCommand(), completionCommand(values), manCommand())
	app.Flags = append(app.Flags, &cli.BoolFlag{Name: "version", Usage: "print the version and exit"})
	app.HideVersion = true // cli's own --version would take -v, which july run uses
	if app.Action == nil {
		app.Action = func(c *cli.Context) error {
			if c.Bool("version") {
				_, err := fmt.Fprintf(c.App.Writer, "%s %s\n", c.App.Name, buildinfo.Read().Short())
				return err
			}
			return DefaultAction(c)
		}
	}
}

// DefaultAction is what a program without an action of its own does when
// no command is named: with arguments, the first is an unknown command (a
// usage error); without, it shows the help.
func DefaultAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return Usagef(c, "unknown command %q", c.Args().First())
	}
	return cli.ShowAppHelp(c)
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, the commit and the Go version this binary was built from",
		Description: `Prints what the binary's build information records: the module version
(or "(devel)" for a build in a work tree), the commit and its date, whether
the work tree had changes, the Go version and platform. --short prints the
version and commit on one line, as --version on the program does.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "short", Usage: "one line: version and commit"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usagef(c, "version takes no arguments")
			}
			in := buildinfo.Read()
			if c.Bool("short") {
				_, err := fmt.Fprintf(c.App.Writer, "%s %s\n", c.App.Name, in.Short())
				return err
			}
			_, err := fmt.Fprint(c.App.Writer, in.String(c.App.Name))
			return err
		},
	}
}

// Shells are the shells completion writes scripts for.
var shells = []string{"bash", "zsh", "fish"}

func completionCommand(values map[string][]string) *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "SHELL",
		Description: `Prints a completion script for SHELL, generated from this program's
commands and flags. Install it where the shell looks:

   PROG completion bash > /etc/bash_completion.d/PROG       # or ~/.local/share/bash-completion/completions/PROG
   PROG completion zsh  > "${fpath[1]}/_PROG"
   PROG completion fish > ~/.config/fish/completions/PROG.fish

or load it into the running shell: source <(PROG completion bash).`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || !slices.Contains(shells, c.Args().First()) {
				return Usagef(c, "completion takes one shell: %s", strings.Join(shells, ", "))
			}
			var script string
			switch c.Args().First() {
			case "bash":
				script = bashCompletion(c.App, values)
			case "zsh":
				script = zshCompletion(c.App, values)
			case "fish":
				var err error
				if script, err = fishCompletion(c.App, values); err != nil {
					return err
				}
			}
			_, err := fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

func manCommand() *cli.Command {
	return &cli.Command{
		Name:  "man",
		Usage: "print the manual page (roff), generated from the commands and flags",
		Description: `Prints PROG(1) in roff, generated from the same definitions --help shows.
Install it with

   PROG man > /usr/local/share/man/man1/PROG.1 && mandb -q

then read it with man PROG.`,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usagef(c, "man takes no arguments")
			}
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return fmt.Errorf("writing the manual page: %w", err)
			}
			_, err = fmt.Fprint(c.App.Writer, page)
			return err
		},
	}
}
