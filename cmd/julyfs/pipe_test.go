package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPipeToHead runs julyfs as a process whose stdout is a pipe closed
// after one line, as `julyfs grep ... | head -1` does: it must not print an
// error, and must end (by exit 0 or SIGPIPE, as other Unix tools do).
func TestPipeToHead(t *testing.T) {
	bin, err := exec.LookPath("julyfs") // installed on PATH by testscript.Main
	if err != nil {
		t.Skipf("julyfs not on PATH: %v", err)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("x\n", 200000)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "grep", "x", "/", "--mount", "/=local:"+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	assert.NoError(t, err, "first line")
	assert.Equal(t, "/big.txt:1:x\n", line, "first line")
	out.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		ws, ok := ee.Sys().(syscall.WaitStatus)
		assert.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGPIPE, "julyfs grep | head: %v, want exit 0 or SIGPIPE", err)
	default:
		require.NoError(t, err)
	}
	assert.Empty(t, stderr.String(), "julyfs grep | head printed on stderr")
}
