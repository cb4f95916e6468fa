package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
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
		switch {
		case wantErr != "" && (code != 1 || strings.TrimSpace(stderr.String()) != wantErr):
			t.Errorf("README: %s\n  exit %d, stderr %q; want exit 1 and %q", c.Line, code, stderr.String(), wantErr)
		case wantErr == "" && code != 0:
			t.Errorf("README: %s\n  exit %d, stderr %q", c.Line, code, stderr.String())
		}
	}
	if delegations.Load() == 0 {
		t.Errorf("no README command was handed to julyfsd; index build and search --index should be")
	}
	if len(cmds) < 10 {
		t.Errorf("ran %d README commands; the README's sh blocks were not found", len(cmds))
	}
}
