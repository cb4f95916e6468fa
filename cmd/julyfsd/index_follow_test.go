package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

// julyfsProcess runs this test binary as julyfs (testscript.Main in
// TestMain runs a command named julyfs) in a separate process.
func julyfsProcess(t *testing.T, args ...string) (string, int) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "julyfs")
	require.NoError(t, os.Symlink(self, bin))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%s", out)
		code = ee.ExitCode()
	}
	return string(out), code
}

// TestSearchAsksMount: while `julyfs mount --index DIR` runs (it holds the
// index and follows the tree), `julyfs search --index DIR` in another
// process asks it, and finds a change made just before, without syncing
// itself; `julyfs index build` on that index says it is in use.
func TestSearchAsksMount(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "x.go"), []byte("package x\n\nfunc Alpha() {}\n"), 0o644))
	idx := filepath.Join(t.TempDir(), "idx")
	mnt := t.TempDir()
	startMount(t, mnt, "--mount", "/repo=local:"+src, "--index", idx)

	out, code := julyfsProcess(t, "search", "--mount", "/repo=local:"+src, "--index", idx, "alpha")
	assert.Equal(t, 0, code, out)
	// (The mount's process holds the index: opening it here would fail.)
	assert.Regexp(t, `^/repo/x.go  [0-9.]+  L3: func Alpha\(\) \{\}\n$`, out)

	// An in-place edit (its directory untouched), searched right after;
	// --sync=never: the answer comes from the mount's process.
	require.NoError(t, os.WriteFile(filepath.Join(src, "x.go"), []byte("package x\n\nfunc Foxtrot() {}\n"), 0o644))
	out, code = julyfsProcess(t, "search", "--mount", "/repo=local:"+src, "--index", idx, "--sync=never", "foxtrot")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "/repo/x.go")
	assert.Contains(t, out, "L3: func Foxtrot() {}")

	out, code = julyfsProcess(t, "index", "build", "--mount", "/repo=local:"+src, "--index", idx)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "in use")
}

// TestIndexFollow: `julyfs index follow` keeps the index and answers the
// searches of other processes (each sees an in-place edit made just
// before) until interrupted, then exits 0 and leaves the index to
// whoever opens it next.
func TestIndexFollow(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "x.go"), []byte("package x\n\nfunc Alpha() {}\n"), 0o644))
	idx := filepath.Join(t.TempDir(), "idx")
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "julyfs")
	require.NoError(t, os.Symlink(self, bin))
	follow := exec.Command(bin, "index", "follow", "--mount", "/repo=local:"+src, "--index", idx)
	stderr, err := follow.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, follow.Start())
	exited := make(chan struct{}) // closed once it exited, with waitErr
	var waitErr error
	firstLine := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stderr)
		line, _ := r.ReadString('\n')
		firstLine <- line
		io.Copy(io.Discard, r)
		waitErr = follow.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		follow.Process.Kill()
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
		}
	})
	select {
	case line := <-firstLine:
		require.Contains(t, line, "following /repo=local:"+src+" for index "+idx)
	case <-time.After(time.Minute):
		require.Fail(t, "julyfs index follow did not start within a minute")
	}

	for i := range 3 {
		word := fmt.Sprintf("Foxtrot%dx", i)
		require.NoError(t, os.WriteFile(filepath.Join(src, "x.go"), []byte("package x\n\nfunc "+word+"() {}\n"), 0o644))
		out, code := julyfsProcess(t, "search", "--mount", "/repo=local:"+src, "--index", idx, strings.ToLower(word))
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "/repo/x.go", "search %d", i)
	}
	out, code := julyfsProcess(t, "search", "--mount", "/repo=local:"+t.TempDir(), "--index", idx, "alpha")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "was built for the tree")

	require.NoError(t, follow.Process.Signal(syscall.SIGINT))
	select {
	case <-exited:
		assert.NoError(t, waitErr)
	case <-time.After(30 * time.Second):
		require.Fail(t, "julyfs index follow still running 30s after SIGINT")
	}
	out, code = julyfsProcess(t, "search", "--mount", "/repo=local:"+src, "--index", idx, "foxtrot2x")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "/repo/x.go")
}
