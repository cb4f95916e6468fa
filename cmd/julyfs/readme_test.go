package main

import (
	"bytes"
	"context"
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
