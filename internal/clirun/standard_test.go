package clirun

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v2"
)

// stdApp is a small program with the standard commands: a command with
// subcommands, flags with and without values, an alias.
func stdApp(out, errw *bytes.Buffer) *cli.App {
	app := &cli.App{
		Name:      "prog",
		Usage:     "a test program",
		Writer:    out,
		ErrWriter: errw,
		Commands: []*cli.Command{
			{Name: "ls", Usage: "list", Flags: []cli.Flag{
				&cli.StringSliceFlag{Name: "mount", Usage: "a mount"},
				&cli.BoolFlag{Name: "long", Aliases: []string{"l"}},
			}, Action: func(*cli.Context) error { return nil }},
			{Name: "index", Usage: "index things", Subcommands: []*cli.Command{
				{Name: "build", Flags: []cli.Flag{&cli.StringFlag{Name: "index"}}, Action: func(*cli.Context) error { return nil }},
			}},
			{Name: "secret", Hidden: true, Action: func(*cli.Context) error { return nil }},
		},
	}
	Standard(app, map[string][]string{"mount": {"/=local:", "/=temp:"}})
	return app
}

func runApp(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errw bytes.Buffer
	code := Run(context.Background(), stdApp(&out, &errw), append([]string{"prog"}, args...))
	return out.String(), errw.String(), code
}

func TestVersion(t *testing.T) {
	out, _, code := runApp(t, "version")
	require.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "prog "), "version: %q", out)
	assert.Contains(t, out, "\ngo       go1.")

	out, _, code = runApp(t, "--version")
	require.Equal(t, 0, code)
	assert.Equal(t, 1, strings.Count(out, "\n"), "--version is one line: %q", out)
	assert.True(t, strings.HasPrefix(out, "prog "), "--version: %q", out)

	_, errs, code := runApp(t, "version", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "version takes no arguments")

	// No command still shows the help; an unknown one is a usage error.
	out, _, code = runApp(t)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "completion")
	_, errs, code = runApp(t, "nope")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `unknown command "nope"`)
}

func TestCompletionUsage(t *testing.T) {
	_, errs, code := runApp(t, "completion", "tcsh")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "completion takes one shell: bash, zsh, fish")
	_, _, code = runApp(t, "completion")
	assert.Equal(t, 2, code)
}

// complete runs the bash completion script for the words typed so far
// (the last one being completed) in a real bash and returns COMPREPLY.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "prog.bash")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shQuote(w)
	}
	prog := `source "$1"
COMP_WORDS=(` + strings.Join(quoted, " ") + `)
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_prog_complete
printf '%s\n' "${COMPREPLY[@]}"`
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", "-c", prog, "bash", path).CombinedOutput()
	require.NoError(t, err, "bash: %s", out)
	s := strings.TrimRight(string(out), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, _, code := runApp(t, "completion", "bash")
	require.Equal(t, 0, code)
	assert.Contains(t, script, "complete -o default -F _prog_complete prog\n")

	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"prog", ""}, []string{"ls", "index", "version", "completion", "man", "help", "h"}},
		{[]string{"prog", "i"}, []string{"index"}},
		{[]string{"prog", "--v"}, []string{"--version"}},
		{[]string{"prog", "ls", "--"}, []string{"--help", "--long", "--mount"}},
		{[]string{"prog", "ls", "-"}, []string{"--help", "--long", "--mount", "-l"}},
		// Positionals are file names (bash's default): nothing offered.
		{[]string{"prog", "ls", ""}, nil},
		{[]string{"prog", "ls", "--mount", ""}, []string{"/=local:", "/=temp:"}},
		{[]string{"prog", "ls", "-l", "--mount", "/=t"}, []string{"/=temp:"}},
		{[]string{"prog", "index", ""}, []string{"build"}},
		{[]string{"prog", "index", "build", "--"}, []string{"--help", "--index"}},
		{[]string{"prog", "completion", "--"}, []string{"--help"}},
		// A hidden command is not offered, nor are its flags.
		{[]string{"prog", "s"}, nil},
	} {
		assert.Equal(t, tc.want, complete(t, script, tc.words...), "completing %q", tc.words)
	}
}

func TestZshAndFishCompletion(t *testing.T) {
	zsh, _, code := runApp(t, "completion", "zsh")
	require.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(zsh, "#compdef prog\n"), "zsh script: %q", zsh[:40])
	assert.Contains(t, zsh, "bashcompinit")
	assert.Contains(t, zsh, "complete -o default -F _prog_complete prog\n")
	fish, _, code := runApp(t, "completion", "fish")
	require.Equal(t, 0, code)
	assert.Contains(t, fish, "complete -c prog")
	assert.Contains(t, fish, `complete -c prog -l mount -r -f -a '/=local: /=temp:'`)
	assert.NotContains(t, fish, "secret")
	// Where the shells are installed, the scripts must at least parse.
	for shell, script := range map[string]string{"zsh": zsh, "fish": fish} {
		if _, err := exec.LookPath(shell); err != nil {
			continue
		}
		f := filepath.Join(t.TempDir(), "script")
		require.NoError(t, os.WriteFile(f, []byte(script), 0o644))
		out, err := exec.Command(shell, "-n", f).CombinedOutput()
		assert.NoError(t, err, "%s -n: %s", shell, out)
	}
}

func TestMan(t *testing.T) {
	page, _, code := runApp(t, "man")
	require.Equal(t, 0, code)
	assert.Contains(t, page, ".TH prog 1")
	assert.Contains(t, page, ".SH index\nindex things\n\n.SS build")
	assert.NotContains(t, page, "secret")
	assert.Contains(t, page, "--mount")
}
