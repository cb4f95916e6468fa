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
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("x\n", 200000)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "grep", "x", "/", "--mount", "/=local:"+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "/big.txt:1:x\n" {
		t.Errorf("first line = %q, %v", line, err)
	}
	out.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		ws, ok := ee.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
			t.Errorf("julyfs grep | head: %v, want exit 0 or SIGPIPE", err)
		}
	default:
		t.Fatal(err)
	}
	if stderr.Len() != 0 {
		t.Errorf("julyfs grep | head printed %q on stderr", stderr.String())
	}
}
