package julyfscli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/vfs"
)

// alphaMount returns a --mount flag for a host directory holding a.txt
// ("alpha\n").
func alphaMount(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644))
	return "--mount=/=local:" + dir
}

// TestExitCodes checks the exit status and stderr of run: 0 on success, 1
// for a contract error (its message as is) and for grep without a match
// (silently), 2 for usage errors.
func TestExitCodes(t *testing.T) {
	mount := alphaMount(t)
	tests := []struct {
		args   []string
		code   int
		stderr string // first line
	}{
		{[]string{"cat", mount, "/a.txt"}, 0, ""},
		{[]string{"cat", "--mount", "/=temp:", "/nope"}, 1, "not found: /nope"},
		{[]string{"grep", mount, "alpha", "/"}, 0, ""},
		{[]string{"grep", mount, "beta", "/"}, 1, ""},
		{[]string{"grep", mount, "(", "/"}, 1, "invalid grep pattern: ("},
		{[]string{"glob", mount, "[", "/"}, 1, "invalid glob pattern: ["},
		{[]string{"write", mount + "?ro", "/b"}, 1, "read-only mount: /b"},
		{[]string{"ls", "/"}, 2, "no mounts: pass --mount PREFIX=KIND:ARG (for example --mount /=local:.) or --config FILE"},
		{[]string{"ls", "--mount", "/x", "/"}, 1, `invalid --mount "/x": missing '=': want PREFIX=KIND:ARG, e.g. /repo=local:./src or /=temp:`},
		{[]string{"grep", mount}, 2, "grep takes PATTERN [PATH], got 0 arguments"},
		{[]string{"grep", mount, "--max", "-1", "x"}, 2, "--max must not be negative"},
		{[]string{"grep", mount, "--nope", "x"}, 2, "flag provided but not defined: -nope"},
		{[]string{"frob"}, 2, `unknown command "frob"`},
		{[]string{"search", mount, "alpha"}, 0, ""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"julyfs"}, tt.args...), strings.NewReader("data"), &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		assert.Equal(t, tt.code, code, "julyfs %q: exit", tt.args)
		assert.Equal(t, tt.stderr, first, "julyfs %q: stderr", tt.args)
	}
}

// brokenWriter accepts n writes, then fails every write with EPIPE, as a
// pipe whose reader has gone does.
type brokenWriter struct {
	n, calls int
}

func (w *brokenWriter) Write(p []byte) (int, error) {
	w.calls++
	if w.calls > w.n {
		return 0, syscall.EPIPE
	}
	return len(p), nil
}

// TestEPIPEStops checks that a closed stdout stops the stream at once and
// is not reported as an error.
func TestEPIPEStops(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("x\n", 200000) // 2.4 MB of grep output
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644))
	for _, args := range [][]string{
		{"grep", "x", "/", "--mount", "/=local:" + dir},
		{"cat", "/big.txt", "/big.txt", "--mount", "/=local:" + dir},
	} {
		w := &brokenWriter{n: 1}
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"julyfs"}, args...), nil, w, &stderr)
		assert.Equal(t, 0, code, "julyfs %q to a broken pipe: exit", args)
		assert.Empty(t, stderr.String(), "julyfs %q to a broken pipe: stderr, want nothing", args)
		assert.Equal(t, 2, w.calls, "julyfs %q to a broken pipe: writes (it must stop at the first failure)", args)
	}
}

func TestSearchLine(t *testing.T) {
	tests := []struct {
		r    vfs.SearchResult
		want string
	}{
		{vfs.SearchResult{Path: "/repo/net/http/header.go", Score: 12.4149, LineNumber: 118, Snippet: "func (h Header) Write(w io.Writer) error {"},
			"/repo/net/http/header.go  12.41  L118: func (h Header) Write(w io.Writer) error {"},
		{vfs.SearchResult{Path: "/a.md", Score: 0.046, LineNumber: 0, Snippet: "ignored"}, "/a.md  0.05"},
		{vfs.SearchResult{Path: "/a.md", Score: 3, LineNumber: 2}, "/a.md  3.00  L2:"},
		{vfs.SearchResult{Path: "/a.md", Score: 1.5, LineNumber: 7, Snippet: "two\r\nlines"}, "/a.md  1.50  L7: two  lines"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, searchLine(tt.r), "searchLine(%+v)", tt.r)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"ls": "ls", "/a/b.go": "/a/b.go", "**/*.go": "'**/*.go'", "func ": "'func '", "it's": `'it'\''s'`, "": "''",
	} {
		assert.Equal(t, want, shellQuote(in), "shellQuote(%q)", in)
	}
}

// TestTourSteps checks that every tour step names a command that exists,
// so the tour stays in step with the command list.
func TestTourSteps(t *testing.T) {
	app := NewApp(nil, nil, nil, Heavy{})
	for _, s := range tourSteps {
		assert.NotNil(t, app.Command(s.args[0]), "tour step %q: no such command", s.args)
	}
	assert.True(t, slices.ContainsFunc(tourSteps, func(s tourStep) bool { return s.args[0] == "write" }), "the tour does not show write")
}

// TestInterrupted checks that a cancelled context (Ctrl-C) ends a command
// with exit 130 and no message.
func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x\n"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"julyfs", "grep", "x", "/", "--mount", "/=local:" + dir}, nil, &stdout, &stderr)
	assert.Equal(t, 130, code, "interrupted grep: exit")
	assert.Empty(t, stderr.String(), "interrupted grep: stderr, want nothing")
}

// run runs julyfs in-process with no heavy commands: one that would be
// handed to julyfsd fails the test.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	h := Heavy{Delegate: func(c *cli.Context, args []string) error {
		return fmt.Errorf("unexpected delegation to julyfsd: %q", args)
	}}
	return Run(ctx, args, stdin, stdout, stderr, h)
}
