package fusemount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// Bounds on every wait of the tests: a hung FUSE request must fail the test,
// never hang CI.
const (
	toolTimeout    = 2 * time.Minute
	unmountTimeout = 15 * time.Second
)

// fuseReason says why this machine cannot mount, or "" when it can.
func fuseReason() string {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "no /dev/fuse"
	}
	if os.Geteuid() == 0 {
		return ""
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		return "not root and no fusermount3 (Debian package fuse3)"
	}
	return ""
}

func requireFUSE(t testing.TB) {
	t.Helper()
	if r := fuseReason(); r != "" {
		t.Skip("cannot mount FUSE here: " + r)
	}
}

// mountT mounts fsys on a fresh directory and unmounts it at cleanup; if a
// plain unmount fails or hangs it aborts the FUSE connection and detaches
// the mount, so a broken test never leaves a mount behind.
func mountT(t testing.TB, fsys vfs.FileSystem, opts Options) *Server {
	t.Helper()
	requireFUSE(t)
	dir := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	if opts.Logger == nil {
		opts.Logger = newTestLog(t).logger()
	}
	s, err := Mount(dir, fsys, opts)
	require.NoError(t, err, "Mount")
	conn := connectionID(s.Dir())
	t.Cleanup(func() { unmountT(t, s, conn) })
	return s
}

func unmountT(t testing.TB, s *Server, conn string) {
	done := make(chan error, 1)
	go func() {
		// A process the test ran may still be closing its files on the
		// mount (the kernel sends RELEASE after the process is gone):
		// retry a busy unmount for a moment before calling it a failure.
		var err error
		for range 20 {
			if err = s.Unmount(); err == nil || !strings.Contains(err.Error(), "busy") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		done <- err
	}()
	select {
	case err := <-done:
		if assert.NoError(t, err, "Unmount") {
			return
		}
	case <-time.After(unmountTimeout):
		assert.Failf(t, "Unmount hung", "Unmount of %s hung for %v; aborting the connection", s.Dir(), unmountTimeout)
	}
	abortConnection(conn)
	if err := Unmount(s.Dir(), true); err != nil {
		t.Logf("lazy unmount: %v", err)
	}
}

// connectionID is the FUSE connection number of the mount at dir (the minor
// device number in /proc/self/mountinfo), read without touching the mount.
func connectionID(dir string) string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && unescapeMount(f[4]) == dir {
			if _, minor, ok := strings.Cut(f[2], ":"); ok {
				return minor
			}
		}
	}
	return ""
}

// abortConnection fails every pending request of a FUSE connection (root
// only; it mounts the fusectl filesystem if needed).
func abortConnection(conn string) {
	if conn == "" {
		return
	}
	const dir = "/sys/fs/fuse/connections"
	if _, err := os.Stat(dir + "/" + conn); err != nil {
		syscall.Mount("fusectl", dir, "fusectl", 0, "")
	}
	os.WriteFile(dir+"/"+conn+"/abort", []byte("1"), 0)
}

// testLog collects a mount's log lines and copies them to the test log.
type testLog struct {
	t      testing.TB
	mu     sync.Mutex
	lines  []string
	closed bool
}

func newTestLog(t testing.TB) *testLog {
	l := &testLog{t: t}
	t.Cleanup(func() {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
	})
	return l
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := strings.TrimRight(string(p), "\n")
	l.lines = append(l.lines, line)
	if !l.closed {
		l.t.Log("mount: " + line)
	}
	return len(p), nil
}

func (l *testLog) logger() *log.Logger { return log.New(l, "", 0) }

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// sh runs script with bash in a separate process, outside the mount (the
// server must not fork with its cwd or descriptors on the mount), with env
// added, and returns its standard output. It fails the test on a non-zero
// exit or a timeout.
func sh(t testing.TB, script string, env ...string) string {
	t.Helper()
	out, errOut, err := shErr(t, script, env...)
	require.NoError(t, err, "sh %q\nstdout:\n%s\nstderr:\n%s", script, out, errOut)
	return out
}

// shErr is sh that returns the error and standard error instead of failing.
func shErr(t testing.TB, script string, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "LC_ALL=C"), env...)
	cmd.WaitDelay = 5 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after %v: %w", toolTimeout, err)
	}
	return o.String(), e.String(), err
}

// runChild runs the test function name of this test binary in a separate
// process with env added, and fails t with the child's output if it fails.
func runChild(t testing.TB, name string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1", "-test.timeout="+toolTimeout.String())
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if ctx.Err() != nil || !errors.As(err, &ee) {
			require.Failf(t, "child did not run", "child %s: %v\n%s", name, err, out)
		}
		require.Failf(t, "child failed", "child %s failed:\n%s", name, out)
	}
	require.False(t, bytes.Contains(out, []byte("--- SKIP")), "child %s did not run:\n%s", name, out)
	require.True(t, bytes.Contains(out, []byte("--- PASS")), "child %s did not run:\n%s", name, out)
	return string(out)
}
