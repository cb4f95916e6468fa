package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/internal/mdsh"
)

// TestREADME runs every july command in the README's sh blocks from the
// repository root, so the README stays true: each must exit 0. A command
// that serves until stopped (july mcp --http) goes in a text block.
func TestREADME(t *testing.T) {
	cmds, err := mdsh.ReadFile("../../README.md", "july")
	require.NoError(t, err)
	t.Chdir("../..")
	// july run keeps its sessions in the agent's .july: remove what the
	// README's runs leave there.
	for _, agent := range []string{"examples/notes", "examples/project", "examples/host"} {
		state := filepath.Join(agent, ".july")
		if _, err := os.Stat(state); os.IsNotExist(err) {
			t.Cleanup(func() { os.RemoveAll(state) })
		}
	}
	for _, c := range cmds {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), c.Args, strings.NewReader(c.Stdin), &stdout, &stderr)
		assert.Equal(t, 0, code, "README: %s\n  exit; stderr %q", c.Line, stderr.String())
	}
	assert.GreaterOrEqual(t, len(cmds), 3, "README july commands ran, want at least 3 (validate, tools, call)")
}
