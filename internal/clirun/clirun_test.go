package clirun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/urfave/cli/v2"
)

// testApp returns an application shaped like julyfs: commands with
// boolean and valued flags, and one with a subcommand. Each action records
// the flags and arguments it got in *got, and fails as its first argument
// says.
func testApp(stdout, stderr *bytes.Buffer, got *string) *cli.App {
	action := func(c *cli.Context) error {
		*got = fmt.Sprintf("max=%d l=%v mount=%q args=%q", c.Int("max"), c.Bool("l"), c.StringSlice("mount"), c.Args().Slice())
		switch c.Args().First() {
		case "usage":
			return Usagef(c, "%s takes no %s", c.Command.Name, "usage")
		case "silent":
			return fmt.Errorf("no match: %w", ErrSilent)
		case "fail":
			return errors.New("not found: /fail")
		case "epipe":
			return fmt.Errorf("write /dev/stdout: %w", syscall.EPIPE)
		case "cancel":
			<-c.Context.Done()
			return fmt.Errorf("walk: %w", c.Context.Err())
		}
		return nil
	}
	mount := &cli.StringSliceFlag{Name: "mount"}
	return &cli.App{
		Name:                      "prog",
		Writer:                    stdout,
		ErrWriter:                 stderr,
		HideVersion:               true,
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			{Name: "ls", Flags: []cli.Flag{&cli.BoolFlag{Name: "l"}, mount}, Action: action},
			{Name: "grep", Flags: []cli.Flag{
				&cli.StringFlag{Name: "glob", Aliases: []string{"g"}},
				&cli.BoolFlag{Name: "ignore-case", Aliases: []string{"i"}},
				&cli.IntFlag{Name: "max"},
				mount,
			}, Action: action},
			{Name: "write", Flags: []cli.Flag{mount}, Action: action},
			{Name: "index", Subcommands: []*cli.Command{
				{Name: "build", Flags: []cli.Flag{&cli.StringFlag{Name: "index"}, &cli.IntFlag{Name: "max"}}, Action: action},
			}},
		},
	}
}

func TestReorderArgs(t *testing.T) {
	var got string
	app := testApp(nil, nil, &got)
	tests := []struct{ in, want string }{
		{"prog", "prog"},
		{"prog --help", "prog --help"},
		{"prog ls /", "prog ls -- /"},
		{"prog ls / -l --mount /=temp:", "prog ls -l --mount /=temp: -- /"},
		{"prog grep TODO / --glob *.md -i --max 5 --mount /=temp:", "prog grep --glob *.md -i --max 5 --mount /=temp: -- TODO /"},
		{"prog grep TODO / -g *.md", "prog grep -g *.md -- TODO /"},
		{"prog grep --max=5 TODO --glob=*.md /", "prog grep --max=5 --glob=*.md -- TODO /"},
		{"prog grep -i -- -x- / --mount /=temp:", "prog grep -i -- -x- / --mount /=temp:"},
		{"prog write /a - --mount /=temp:", "prog write --mount /=temp: -- /a -"},
		{"prog grep TODO / --help", "prog grep --help"},
		{"prog grep TODO / -h", "prog grep -h"},
		{"prog grep TODO / --bogus x", "prog grep --bogus -- TODO / x"},
		{"prog index build x --index dir --max 3", "prog index build --index dir --max 3 -- x"},
		{"prog index nope --index dir", "prog index nope --index dir"},
		{"prog --help ls / -l", "prog --help ls -l -- /"},
		{"prog nope a -b", "prog nope a -b"},
		{"prog ls --mount", "prog ls --mount"},
	}
	for _, tt := range tests {
		got := strings.Join(ReorderArgs(app, strings.Fields(tt.in)), " ")
		assert.Equal(t, tt.want, got, "ReorderArgs(%q)", tt.in)
	}
}

// TestRun checks what the command gets and the exit status and stderr Run
// gives for each kind of outcome.
func TestRun(t *testing.T) {
	tests := []struct {
		args   string
		code   int
		stderr string
		got    string // what the action saw; "" when it did not run
	}{
		{"ls /a -l --mount /=temp:", 0, "", `max=0 l=true mount=["/=temp:"] args=["/a"]`},
		{"grep x --max 3 -- -y", 0, "", `max=3 l=false mount=[] args=["x" "-y"]`},
		{"index build --max 2 x", 0, "", `max=2 l=false mount=[] args=["x"]`},
		{"ls fail", 1, "not found: /fail\n", `max=0 l=false mount=[] args=["fail"]`},
		{"ls silent", 1, "", `max=0 l=false mount=[] args=["silent"]`},
		{"ls epipe", 0, "", `max=0 l=false mount=[] args=["epipe"]`},
		{"ls usage", 2, "ls takes no usage\nRun 'prog ls --help' for usage.\n", `max=0 l=false mount=[] args=["usage"]`},
		{"index build usage", 2, "build takes no usage\nRun 'prog index build --help' for usage.\n", `max=0 l=false mount=[] args=["usage"]`},
		{"grep x --max y", 2, "invalid value \"y\" for flag -max: parse error\nRun 'prog grep --help' for usage.\n", ""},
		{"ls --nope", 2, "flag provided but not defined: -nope\nRun 'prog ls --help' for usage.\n", ""},
		{"index build --nope", 2, "flag provided but not defined: -nope\nRun 'prog index build --help' for usage.\n", ""},
		{"frob", 2, "unknown command \"frob\"\nRun 'prog --help' for usage.\n", ""},
		{"--nope", 2, "flag provided but not defined: -nope\nRun 'prog --help' for usage.\n", ""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		var got string
		code := Run(context.Background(), testApp(&stdout, &stderr, &got), append([]string{"prog"}, strings.Fields(tt.args)...))
		assert.Equal(t, tt.code, code, "prog %s: exit", tt.args)
		assert.Equal(t, tt.stderr, stderr.String(), "prog %s: stderr", tt.args)
		assert.Equal(t, tt.got, got, "prog %s: action saw", tt.args)
	}
}

// TestRunHelp checks that the program without arguments shows its help.
func TestRunHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	var got string
	code := Run(context.Background(), testApp(&stdout, &stderr, &got), []string{"prog"})
	assert.Equal(t, 0, code, "prog: exit, want 0 and the help")
	assert.Contains(t, stdout.String(), "COMMANDS:", "prog: stdout, want the help")
	assert.Empty(t, stderr.String(), "prog: stderr")
}

// TestRunInterrupted checks that a command ended by the cancellation of
// its context (Ctrl-C) exits 130 without a message, and that an error
// unrelated to the cancellation is still reported.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	var got string
	code := Run(ctx, testApp(&stdout, &stderr, &got), []string{"prog", "ls", "cancel"})
	assert.Equal(t, 130, code, "interrupted: exit")
	assert.Empty(t, stderr.String(), "interrupted: stderr, want nothing")
	code = Run(ctx, testApp(&stdout, &stderr, &got), []string{"prog", "ls", "fail"})
	assert.Equal(t, 1, code, "failed after the interrupt: exit")
	assert.Equal(t, "not found: /fail\n", stderr.String(), "failed after the interrupt: stderr")
}
