package fusemount

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/local"
)

// TestMain runs the binary as a mount server when JULYFS_SERVE_DIR is set:
// the tests that signal or measure the server run it as a separate process.
func TestMain(m *testing.M) {
	if code, ran := helperChild(); ran {
		os.Exit(code)
	}
	if dir := os.Getenv("JULYFS_SERVE_DIR"); dir != "" {
		os.Exit(serveChild(dir, os.Getenv("JULYFS_SERVE_ROOT")))
	}
	os.Exit(m.Run())
}

// serveChild serves the local tree root on dir until SIGTERM or SIGINT,
// printing "ready" once mounted.
func serveChild(dir, root string) int {
	fsys, err := local.New(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer fsys.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	opts := Options{NoPassthrough: os.Getenv("JULYFS_SERVE_PASSTHROUGH") == "off"}
	err = Serve(ctx, dir, fsys, opts, func(*Server) { fmt.Println("ready") })
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// server is a mount server running in a child process.
type server struct {
	cmd  *exec.Cmd
	dir  string
	conn string
	done chan error
}

// startServer serves the host directory root on a fresh mountpoint from a
// child process (with env added: JULYFS_SERVE_PASSTHROUGH=off turns
// passthrough off), and makes sure at cleanup that it is gone and nothing is
// left mounted.
func startServer(t *testing.T, root string, env ...string) *server {
	t.Helper()
	requireFUSE(t)
	dir := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "JULYFS_SERVE_DIR="+dir, "JULYFS_SERVE_ROOT="+root), env...)
	cmd.Dir = t.TempDir()
	cmd.Stderr = &testWriter{t: t, prefix: "server: "}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &server{cmd: cmd, dir: dir, done: make(chan error, 1)}
	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line == "ready\n"
		io.Copy(io.Discard, stdout)
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
		default:
			cmd.Process.Kill()
			if err, ok := s.waitKilled(t); ok {
				s.done <- err
			} else {
				assert.Fail(t, "server did not exit after SIGKILL")
			}
		}
		if mounted, _, _ := mountedAt(dir); !assert.False(t, mounted, "%s is still mounted after the server exited", dir) {
			abortConnection(s.conn)
			Unmount(dir, true)
		}
	})
	select {
	case ok := <-ready:
		require.True(t, ok, "server did not report ready")
	case <-time.After(30 * time.Second):
		require.Fail(t, "server not ready after 30s")
	}
	s.conn = connectionID(dir)
	return s
}

// stop sends sig and waits for the server to exit, returning its error.
func (s *server) stop(t *testing.T, sig os.Signal) error {
	t.Helper()
	s.cmd.Process.Signal(sig)
	select {
	case err := <-s.done:
		s.done <- err // for cleanup
		return err
	case <-time.After(30 * time.Second):
		require.Failf(t, "server did not exit", "server did not exit 30s after %v", sig)
	}
	return nil
}

// peakRSS is the server's peak resident set size in bytes.
func (s *server) peakRSS(t *testing.T) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	require.Fail(t, "no VmHWM in /proc/pid/status")
	return 0
}

// testWriter copies a child's output to the test log.
type testWriter struct {
	t      *testing.T
	prefix string
}

func (w *testWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(w.prefix + line)
	}
	return len(p), nil
}

// TestSIGTERMDuringWrites stops the server while a separate process keeps
// writing files (each synced and closed before it is logged as committed):
// nothing is left mounted and every committed file is on disk.
func TestSIGTERMDuringWrites(t *testing.T) {
	root := t.TempDir()
	// The writer writes under sub/, which only the mount has: once the
	// mount is gone its writes fail instead of landing in the bare
	// mountpoint directory.
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o755))
	s := startServer(t, root)
	logFile := filepath.Join(t.TempDir(), "committed")
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	writer := exec.CommandContext(ctx, "bash", "-c",
		`for i in $(seq 1 100000); do printf 'data %d\n' $i | dd of="$M/sub/f$i" conv=fsync status=none 2>/dev/null && echo f$i >> "$LOG" || exit 0; done`)
	writer.Env = append(os.Environ(), "M="+s.dir, "LOG="+logFile)
	writer.Dir = t.TempDir()
	require.NoError(t, writer.Start())
	defer writer.Process.Kill()
	// Let it commit some files first.
	deadline := time.Now().Add(time.Minute)
	for {
		data, _ := os.ReadFile(logFile)
		if strings.Count(string(data), "\n") >= 50 {
			break
		}
		if time.Now().After(deadline) {
			require.Failf(t, "the writer is stuck", "the writer committed %d files in a minute", strings.Count(string(data), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.NoError(t, s.stop(t, syscall.SIGTERM), "server exit after SIGTERM")
	mounted, _, _ := mountedAt(s.dir)
	require.False(t, mounted, "%s still mounted after SIGTERM", s.dir)
	writer.Process.Kill()
	writer.Wait()
	data, err := os.ReadFile(logFile)
	require.NoError(t, err)
	committed := strings.Fields(string(data))
	for _, name := range committed {
		got, err := os.ReadFile(filepath.Join(root, "sub", name))
		want := fmt.Sprintf("data %s\n", strings.TrimPrefix(name, "f"))
		assert.NoError(t, err, "committed file %s", name)
		assert.Equal(t, want, string(got), "committed file %s", name)
	}
	t.Logf("%d files committed before SIGTERM, all on disk", len(committed))
}

// TestLargeFileRSS reads a 1 GiB file through a local: mount: the server
// reads it range by range, so its peak RSS stays far below the file size.
func TestLargeFileRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1 GiB")
	}
	root := t.TempDir()
	const size = 1 << 30
	f, err := os.Create(filepath.Join(root, "big"))
	require.NoError(t, err)
	// A pattern that is not all zeros, written in 1 MiB blocks.
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = byte(i % 251)
	}
	for off := 0; off < size; off += len(block) {
		_, err := f.Write(block)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())
	s := startServer(t, root)
	before := s.peakRSS(t)
	out := sh(t, `cat "$M/big" | wc -c`, "M="+s.dir)
	require.Equal(t, strconv.Itoa(size), strings.TrimSpace(out), "cat | wc -c")
	peak := s.peakRSS(t)
	t.Logf("server peak RSS: %d MiB before, %d MiB after reading 1 GiB", before>>20, peak>>20)
	assert.LessOrEqual(t, peak, int64(100<<20), "server peak RSS %d MiB after cat of a 1 GiB file, want under 100 MiB", peak>>20)
	assert.NoError(t, s.stop(t, syscall.SIGINT), "server exit after SIGINT")
}

// killServer kills the mount's server with SIGKILL, as a crash would, and
// unmounts the mount the dead server leaves behind (as any killed FUSE
// server does).
func killServer(t *testing.T, s *server) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Kill())
	err, ok := s.waitKilled(t)
	require.True(t, ok, "server still running %v after SIGKILL", killTimeout)
	s.done <- err // for startServer's cleanup
	require.NoError(t, Unmount(s.dir, true))
}

// killTimeout bounds how long a server killed by SIGKILL may take to
// exit. A thread of a killed process in a host system call that cannot be
// interrupted (an fsync on a loaded disk: ext4 commits its whole journal)
// finishes it first, and on a busy machine that takes seconds.
const killTimeout = 2 * time.Minute

// waitKilled waits for s, sent SIGKILL, to exit: it aborts the mount's
// connection at once (so that nothing waits on the dead server's
// requests) and, if the server is still there after unmountTimeout, logs
// what its threads wait on in the kernel. ok is false if it has not
// exited within killTimeout.
func (s *server) waitKilled(t *testing.T) (err error, ok bool) {
	t.Helper()
	abortConnection(s.conn)
	select {
	case err := <-s.done:
		return err, true
	case <-time.After(unmountTimeout):
	}
	t.Logf("server %d still running %v after SIGKILL; its threads:\n%s", s.cmd.Process.Pid, unmountTimeout, kernelStacks(s.cmd.Process.Pid))
	select {
	case err := <-s.done:
		return err, true
	case <-time.After(killTimeout - unmountTimeout):
		t.Logf("server %d still running %v after SIGKILL; its threads:\n%s", s.cmd.Process.Pid, killTimeout, kernelStacks(s.cmd.Process.Pid))
		return nil, false
	}
}

// kernelStacks describes the threads of process pid: state, wait channel
// and, when readable (as root), the kernel stack.
func kernelStacks(pid int) string {
	var b strings.Builder
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		stat, _ := os.ReadFile(task + "/stat")
		wchan, _ := os.ReadFile(task + "/wchan")
		stack, _ := os.ReadFile(task + "/stack")
		fmt.Fprintf(&b, "%s: %s wchan=%s\n%s", filepath.Base(task), strings.TrimSpace(string(stat)), wchan, stack)
	}
	if b.Len() == 0 {
		return "(none readable)"
	}
	return b.String()
}
