package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/julyfs/julyfs/internal/mdsh"
)

// TestREADME runs every july command in the README's sh blocks from the
// repository root, so the README stays true: each must exit 0. A command
// that serves until stopped (july mcp --http) goes in a text block.
func TestREADME(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	cmds, err := mdsh.Commands(string(readme), "july")
	if err != nil {
		t.Fatalf("README: %v", err)
	}
	for _, c := range cmds {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), c.Args, strings.NewReader(c.Stdin), &stdout, &stderr); code != 0 {
			t.Errorf("README: %s\n  exit %d, stderr %q", c.Line, code, stderr.String())
		}
	}
	if len(cmds) < 3 {
		t.Errorf("ran %d README july commands, want at least 3 (validate, tools, call)", len(cmds))
	}
}
