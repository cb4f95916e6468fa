package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEvalProgressOnATerminal runs july eval on a pseudo-terminal
// (util-linux script(1)): a progress line per case on stderr, cleared
// before the table. Piped, there is none (the eval script test checks
// that stderr is empty).
func TestEvalProgressOnATerminal(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("needs script(1) for a pseudo-terminal")
	}
	july, err := exec.LookPath("july")
	require.NoError(t, err)
	notes, err := filepath.Abs(filepath.Join("..", "..", "examples", "notes"))
	require.NoError(t, err)
	cmd := julyCommand(t)
	cmd.Path, cmd.Args = scriptBin, []string{"script", "-qec", july + " eval " + notes + " --state-root " + t.TempDir(), "/dev/null"}
	out, err := cmd.Output()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `^\r\x1b\[K\[\.{20}\] 0/2 followup\r\x1b\[K\[#{10}\.{10}\] 1/2 summary\r\x1b\[KCASE +RESULT`, string(out))
	assert.Contains(t, string(out), "2 passed, 0 failed")
}
