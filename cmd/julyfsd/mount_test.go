package main

import (
	"bytes"
	"context"
	"io"
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

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/internal/julyfscli/full"
)

// run runs julyfsd in-process, its heavy commands included.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return julyfscli.Run(ctx, args, stdin, stdout, stderr, full.Heavy())
}

// canMount says why this machine cannot mount FUSE, or "" when it can.
func canMount() string {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "no /dev/fuse"
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			return "not root and no fusermount3"
		}
	}
	return ""
}

// isMounted reports whether dir is a mountpoint, from the mount table
// (never touching dir itself).
func isMounted(dir string) bool {
	ok, _ := fusemount.Mounted(dir)
	return ok
}

// mountRun is a `julyfs mount` running in this process.
type mountRun struct {
	code   int           // exit code, once done is closed
	done   chan struct{} // closed when the command returned
	stderr *lockedBuffer
	cancel context.CancelFunc // what Ctrl-C does through main's signal.NotifyContext
}

// wait waits (bounded) for the command to return and gives its exit code.
func (r *mountRun) wait(t *testing.T, after string) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(30 * time.Second):
		require.FailNowf(t, "julyfs mount still running", "30s after %s", after)
	}
	return 0
}

// startMount runs `julyfs mount ARGS... DIR` in this process (the shell
// tools the test runs are separate processes) and waits until it is
// mounted.
func startMount(t *testing.T, dir string, args ...string) *mountRun {
	t.Helper()
	return startMountCtx(t, context.Background(), dir, args...)
}

// startMountCtx is startMount with the context the command runs in.
func startMountCtx(t *testing.T, ctx context.Context, dir string, args ...string) *mountRun {
	t.Helper()
	if r := canMount(); r != "" {
		t.Skip("cannot mount FUSE here: " + r)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &mountRun{done: make(chan struct{}), stderr: &lockedBuffer{}, cancel: cancel}
	go func() {
		r.code = run(ctx, append(append([]string{"julyfs", "mount"}, args...), dir), nil, &bytes.Buffer{}, r.stderr)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			assert.Fail(t, "julyfs mount did not return 30s after cancel")
		}
		if isMounted(dir) {
			assert.Failf(t, "still mounted", "%s still mounted", dir)
			exec.Command("umount", "-l", dir).Run()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !isMounted(dir) {
		select {
		case <-r.done:
			require.FailNowf(t, "julyfs mount exited before mounting", "exit %d: %s", r.code, r.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			require.FailNowf(t, "not mounted after 30s", "%s", r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r
}

// lockedBuffer is a bytes.Buffer safe for the mount's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// shell runs script with bash in a separate process, outside the mount.
func shell(t *testing.T, script string, env ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestMountUnmount(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "main.go"), []byte("package main // TODO\n"), 0o644)
	dir := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	r := startMount(t, dir, "--mount", "/repo=local:"+src, "--mount", "/notes=temp:")

	out, err := shell(t, `ls "$M"; cat "$M/repo/main.go"; grep -rn TODO "$M"
echo hi > "$M/notes/a.md"; echo more >> "$M/notes/a.md"; mv "$M/notes/a.md" "$M/notes/b.md"; cat "$M/notes/b.md"
mkdir "$M/notes/sub"; ls "$M/notes"; echo x > "$M/repo/new.txt"
if (echo x > "$M/nowhere.txt") 2>/dev/null; then echo wrote outside the mounts; fi`, "M="+dir)
	want := "notes\nrepo\npackage main // TODO\n" + dir + "/repo/main.go:1:package main // TODO\nhi\nmore\nb.md\nsub\n"
	assert.NoError(t, err, "shell")
	assert.Equal(t, want, out, "shell")
	data, err := os.ReadFile(filepath.Join(src, "new.txt"))
	assert.NoError(t, err, "write through the mount reached the host")
	assert.Equal(t, "x\n", string(data), "write through the mount reached the host")

	var ustderr bytes.Buffer
	c := run(context.Background(), []string{"julyfs", "unmount", dir}, nil, &bytes.Buffer{}, &ustderr)
	require.Equal(t, 0, c, "julyfs unmount: %s", ustderr.String())
	assert.Equal(t, 0, r.wait(t, "julyfs unmount"), "julyfs mount exit after unmount: %s", r.stderr.String())
	assert.False(t, isMounted(dir), "%s still mounted", dir)
}

func TestMountInterrupt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	r := startMount(t, dir, "--mount", "/=temp:", "--read-only")
	out, err := shell(t, `echo x > "$M/a"`, "M="+dir)
	assert.Error(t, err, "write on --read-only")
	assert.Contains(t, out, "Read-only file system", "write on --read-only")
	r.cancel()
	assert.Equal(t, 0, r.wait(t, "interrupt"), "julyfs mount exit after interrupt: %s", r.stderr.String())
	assert.False(t, isMounted(dir), "%s still mounted after interrupt", dir)
}

func TestMountErrors(t *testing.T) {
	if r := canMount(); r != "" {
		t.Skip("cannot mount FUSE here: " + r)
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mount", "--mount", "/=temp:"}, 2, "mount takes one directory"},
		{[]string{"mount", "--mount", "/=temp:", filepath.Join(full, "missing")}, 1, "does not exist"},
		{[]string{"mount", "--mount", "/=temp:", full}, 1, "is not empty"},
		{[]string{"unmount", full}, 1, "is not mounted"},
		{[]string{"unmount"}, 2, "unmount takes one directory"},
	} {
		var stderr bytes.Buffer
		c := run(context.Background(), append([]string{"julyfs"}, tt.args...), nil, &bytes.Buffer{}, &stderr)
		assert.Equal(t, tt.code, c, "julyfs %q exit", tt.args)
		assert.Contains(t, stderr.String(), tt.want, "julyfs %q stderr", tt.args)
	}
}

// TestMountAllowOther: `julyfs mount --allow-other` lets other users in
// with the host's permissions enforced: nobody (uid 65534) reads a 0644
// file but not a 0600 one, and cannot write where the host forbids it.
func TestMountAllowOther(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv (util-linux)")
	}
	base, err := os.MkdirTemp("", "julyfsd-allow-other-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	src, dir := filepath.Join(base, "src"), filepath.Join(base, "mnt")
	require.NoError(t, os.Mkdir(src, 0o755))
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "public"), []byte("public\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(src, "secret"), []byte("secret\n"), 0o600))
	startMount(t, dir, "--allow-other", "--mount", "/=local:"+src)

	asNobody := `setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "$S"`
	out, err := shell(t, asNobody, "M="+dir, `S=cat "$M/public"`)
	assert.NoError(t, err, out)
	assert.Equal(t, "public\n", out)
	out, err = shell(t, asNobody+` 2>&1`, "M="+dir, `S=cat "$M/secret"`)
	assert.Error(t, err)
	assert.Contains(t, out, "Permission denied")
	out, err = shell(t, asNobody+` 2>&1`, "M="+dir, `S=echo x > "$M/new"`)
	assert.Error(t, err)
	assert.Contains(t, out, "Permission denied")
	assert.NoFileExists(t, filepath.Join(src, "new"))
}

// TestMountWriteInPlace: with --passthrough --write-in-place, a writer
// opening an existing host file without O_TRUNC writes the host file
// itself (same host inode after); without --write-in-place the same
// writer goes through a staging that is renamed into place at close (a
// new inode). The writer is a separate process, as every test's shell
// tools are: this process serves the mount.
func TestMountWriteInPlace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		inPlace bool
	}{
		{"in place", []string{"--passthrough", "--write-in-place"}, true},
		{"staged", []string{"--passthrough"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			host := filepath.Join(src, "f")
			require.NoError(t, os.WriteFile(host, []byte("0123456789"), 0o644))
			var st0 syscall.Stat_t
			require.NoError(t, syscall.Stat(host, &st0))
			dir := filepath.Join(t.TempDir(), "mnt")
			require.NoError(t, os.Mkdir(dir, 0o755))
			r := startMount(t, dir, append(tc.args, "--debug", "--mount", "/=local:"+src)...)
			out, err := shell(t, `printf XY | dd of="$M/f" bs=2 conv=notrunc status=none; cat "$M/f"`, "M="+dir)
			require.NoError(t, err, out)
			if !strings.Contains(r.stderr.String(), "passthrough: on") {
				t.Skip("passthrough unavailable here: " + r.stderr.String())
			}
			assert.Equal(t, "XY23456789", out)
			data, err := os.ReadFile(host)
			require.NoError(t, err)
			assert.Equal(t, "XY23456789", string(data))
			var st1 syscall.Stat_t
			require.NoError(t, syscall.Stat(host, &st1))
			if tc.inPlace {
				assert.Equal(t, st0.Ino, st1.Ino, "written in place: same host inode")
			} else {
				assert.NotEqual(t, st0.Ino, st1.Ino, "staged: the commit renamed a new file into place")
			}
		})
	}
}

// TestMountPassthroughFlag: `julyfs mount` of a local: tree passes
// through by default (where the kernel allows it: --debug says "on" or
// why not), --passthrough is accepted and changes nothing there, and
// --passthrough=false turns it off.
func TestMountPassthroughFlag(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, "passthrough: on"},
		{"--passthrough", []string{"--passthrough"}, "passthrough: on"},
		{"--passthrough=false", []string{"--passthrough=false"}, "passthrough: off (--passthrough=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(src, "f"), []byte("x\n"), 0o644))
			dir := filepath.Join(t.TempDir(), "mnt")
			require.NoError(t, os.Mkdir(dir, 0o755))
			r := startMount(t, dir, append(tc.args, "--debug", "--mount", "/=local:"+src)...)
			out, err := shell(t, `cat "$M/f"`, "M="+dir)
			require.NoError(t, err, out)
			assert.Equal(t, "x\n", out)
			log := r.stderr.String()
			if strings.Contains(log, "passthrough: off, files are read and written through the daemon") {
				t.Skip("passthrough unavailable here: " + log)
			}
			assert.Contains(t, log, tc.want)
		})
	}
}
