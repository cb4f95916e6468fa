package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/internal/mdsh"
)

// TestREADME runs every julyfs command in the README's sh blocks from the
// repository root, so the README stays true. A command whose comment is a
// contract error ("# read-only mount: /p") must fail with exactly that
// message; every other command must succeed. /tmp/scratch is replaced by
// a temporary directory. Commands the test cannot run (julyfs mount) go
// in a text block. index build and search --index run in the julyfsd built
// for the test, as julyfs hands them on.
func TestREADME(t *testing.T) {
	cmds, err := mdsh.ReadFile("../../README.md", "julyfs")
	require.NoError(t, err)
	scratch := t.TempDir()
	delegations.Store(0)
	t.Chdir("../..")
	for _, c := range cmds {
		var stdout, stderr bytes.Buffer
		args := make([]string, len(c.Args))
		for i, a := range c.Args {
			args[i] = strings.ReplaceAll(a, "/tmp/scratch", scratch)
		}
		code := run(t, context.Background(), args, strings.NewReader(c.Stdin), &stdout, &stderr)
		wantErr := ""
		for _, prefix := range []string{"not found: ", "read-only mount: ", "no mount for path: "} {
			if strings.HasPrefix(c.Comment, prefix) {
				wantErr = c.Comment
			}
		}
		if wantErr != "" {
			assert.Equal(t, 1, code, "README: %s\n  exit; stderr %q", c.Line, stderr.String())
			assert.Equal(t, wantErr, strings.TrimSpace(stderr.String()), "README: %s\n  stderr", c.Line)
		} else {
			assert.Equal(t, 0, code, "README: %s\n  exit; stderr %q", c.Line, stderr.String())
		}
	}
	assert.NotZero(t, delegations.Load(), "no README command was handed to julyfsd; index build and search --index should be")
	assert.GreaterOrEqual(t, len(cmds), 10, "too few README commands ran; the README's sh blocks were not found")
}

// TestREADMETwoCommands checks that every command of the README's first
// section ("The two commands") runs: `go run ./cmd/julyfs ARGS` runs as
// julyfs ARGS in-process and must succeed with output; `scripts/test` is
// the test command running this test, so it must be an executable file.
// A command of any other form fails the test, so a new one in that
// section gets a way to be checked here.
func TestREADMETwoCommands(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## The two commands\n")
	require.True(t, ok, "README.md has no \"## The two commands\" section")
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1)
	require.NotEmpty(t, blocks, "README.md's first section has no sh block")
	t.Chdir("../..")
	n := 0
	for _, blk := range blocks {
		for line := range strings.SplitSeq(blk[1], "\n") {
			text, _, _ := strings.Cut(line, "#")
			text = strings.TrimSpace(text)
			if text == "" {
				continue
			}
			n++
			words, err := mdsh.Words(text)
			require.NoError(t, err, "README: %s", line)
			switch {
			case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/julyfs":
				var stdout, stderr bytes.Buffer
				code := run(t, context.Background(), append([]string{"julyfs"}, words[3:]...), strings.NewReader(""), &stdout, &stderr)
				assert.Equal(t, 0, code, "README: %s\n  exit; stderr %q", line, stderr.String())
				assert.NotEmpty(t, stdout.String(), "README: %s\n  printed nothing", line)
			case text == "scripts/test":
				fi, err := os.Stat("scripts/test")
				if assert.NoError(t, err, "README: %s", line) {
					assert.NotZero(t, fi.Mode()&0o111, "README: %s: not executable", line)
				}
			default:
				t.Errorf("README: %s: the first section's commands are checked here, and this one has no check", line)
			}
		}
	}
	assert.GreaterOrEqual(t, n, 2, "README.md's first section: fewer than two commands found")
}
