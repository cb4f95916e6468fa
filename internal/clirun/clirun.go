// Package clirun runs the julyfs command-line programs (julyfs, july),
// which are urfave/cli/v2 applications, with the conventions they share:
// flags may follow positional arguments, usage errors exit 2 with a
// pointer to --help, other errors print their message on stderr and exit
// 1, a closed stdout (EPIPE, as in `julyfs grep ... | head`) is not an
// error, and an interrupted command exits 130 without a message.
//
// Main (or Run, in tests) is the entry point; a command's action reports a command line that
// does not fit it with Usagef, and an error it has already reported (or a
// failure with nothing to say, as grep without a match) with ErrSilent.
//
// The package keeps no state of its own: Run sets the error handlers of
// the application it is given, which must not be run concurrently.
package clirun

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

// ErrSilent ends the program with exit status 1 and no message: the
// command has already said what went wrong on stderr, or has nothing to
// say (grep without a match). Wrap it to name the reason:
// fmt.Errorf("no match: %w", clirun.ErrSilent).
var ErrSilent = errors.New("failed (already reported)")

// UsageError is a command line that does not fit the command: Run prints
// Msg and a pointer to the command's --help, and exits 2.
type UsageError struct {
	HelpName string // the program and command, as help names them: "julyfs index build"
	Msg      string
}

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a usage error for the command of c, with a message
// formatted as fmt.Sprintf does.
func Usagef(c *cli.Context, format string, args ...any) error {
	name := c.App.HelpName
	if c.Command != nil && c.Command.HelpName != "" {
		name = c.Command.HelpName
	}
	return &UsageError{HelpName: name, Msg: fmt.Sprintf(format, args...)}
}

// onUsageError turns cli's flag errors into usage errors.
func onUsageError(c *cli.Context, err error, _ bool) error {
	return Usagef(c, "%s", err.Error())
}

// Main runs app with the program's arguments and exits with the status
// Run returns. SIGINT and SIGTERM cancel the command's context.
func Main(app *cli.App) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, app, os.Args)
	stop()
	os.Exit(code)
}

// Run runs app with args (args[0] is the program name) and returns the
// exit status, having printed any error on app.ErrWriter (os.Stderr when
// nil):
//
//   - 0: success, or stdout closed by its reader (EPIPE);
//   - 1: an error, its message printed as is; ErrSilent prints nothing;
//   - 2: a usage error (UsageError, an unknown flag or command), its
//     message and "Run 'PROG CMD --help' for usage.";
//   - 130: ctx was cancelled (Ctrl-C) and the command ended with its error.
//
// Flags may come after the positional arguments (see ReorderArgs). Run
// sets app.ExitErrHandler (errors are reported here, not by cli), and
// where they are unset the OnUsageError of the application and of every
// command and subcommand, and app.Action: with no arguments it shows the
// help, with an unknown command it is a usage error.
func Run(ctx context.Context, app *cli.App, args []string) int {
	app.ExitErrHandler = func(*cli.Context, error) {}
	if app.OnUsageError == nil {
		app.OnUsageError = onUsageError
	}
	for _, c := range app.Commands {
		setUsageErrors(c)
	}
	if app.Action == nil {
		app.Action = DefaultAction
	}
	stderr := app.ErrWriter
	if stderr == nil {
		stderr = os.Stderr
	}
	err := app.RunContext(ctx, ReorderArgs(app, args))
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return 130 // interrupted: the shell's code for SIGINT, no message
	}
	return exitCode(app.Name, err, stderr)
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

// exitCode reports err on stderr and returns the exit status for it.
func exitCode(prog string, err error, stderr io.Writer) int {
	var ue *UsageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrSilent):
		return 1
	case errors.Is(err, syscall.EPIPE):
		// The reader went away (julyfs glob ... | head): not an error.
		return 0
	case errors.As(err, &ue):
		name := ue.HelpName
		if name == "" {
			name = prog
		}
		fmt.Fprintln(stderr, ue.Msg)
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", name)
		return 2
	}
	fmt.Fprintln(stderr, err)
	return 1
}
