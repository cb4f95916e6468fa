package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/fusemount"
)

// TestDeps checks that julyfs links neither FUSE nor the search index:
// their packages' init functions would slow every julyfs run.
func TestDeps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-deps", "github.com/julyfs/julyfs/cmd/julyfs").Output()
	require.NoError(t, err, "go list -deps")
	deps := strings.Fields(string(out))
	require.GreaterOrEqual(t, len(deps), 10, "go list -deps printed too few packages")
	for _, p := range deps {
		for _, heavy := range []string{"github.com/blevesearch/", "github.com/hanwen/go-fuse", "github.com/julyfs/julyfs/third_party/go-fuse/", "github.com/julyfs/julyfs/vfs/index", "github.com/julyfs/julyfs/fusemount", "github.com/julyfs/julyfs/internal/julyfscli/full"} {
			assert.False(t, strings.HasPrefix(p, heavy), "cmd/julyfs links %s; only cmd/julyfsd may", p)
		}
	}
}

// julyfsRun is a finished run of a built julyfs.
type julyfsRun struct {
	code           int
	stdout, stderr string
}

// runBuilt runs the executable bin with args in dir and the environment
// env (and nothing else of this process's), bounded by a minute.
func runBuilt(t *testing.T, bin, dir string, env []string, stdin string, args ...string) julyfsRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		require.NoError(t, err, "julyfs %q", args)
	}
	return julyfsRun{code, stdout.String(), stderr.String()}
}

// smallTree writes a few files to search into a new directory.
func smallTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"src/merge.go": "package src\n\n// Merge k-way merges sorted streams into one sorted stream.\nfunc Merge() {}\n",
		"src/walk.go":  "package src\n\n// Walk visits every path.\nfunc Walk() {}\n",
		"notes.md":     "# Notes\n\nNothing about streams here.\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

// TestDelegateToJulyfsd runs the built julyfs for index build and search
// --index, which it hands to julyfsd: found through JULYFSD, then beside
// julyfs, then on PATH. Output and exit status come through unchanged.
func TestDelegateToJulyfsd(t *testing.T) {
	julyfs, julyfsd := built(t)
	tree := smallTree(t)
	empty := t.TempDir() // a PATH with no julyfsd on it

	// A julyfs and a julyfsd side by side, as go install leaves them.
	side := t.TempDir()
	for _, bin := range []string{julyfs, julyfsd} {
		if err := os.Link(bin, filepath.Join(side, filepath.Base(bin))); err != nil {
			data, err := os.ReadFile(bin)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(side, filepath.Base(bin)), data, 0o755))
		}
	}

	for _, setup := range []struct {
		name   string
		julyfs string
		env    []string
	}{
		{"JULYFSD", julyfs, []string{"PATH=" + empty, "JULYFSD=" + julyfsd}},
		{"beside julyfs", filepath.Join(side, "julyfs"), []string{"PATH=" + empty}},
		{"PATH", julyfs, []string{"PATH=" + empty + ":" + filepath.Dir(julyfsd)}},
	} {
		t.Run(setup.name, func(t *testing.T) {
			idx := filepath.Join(t.TempDir(), "idx")
			r := runBuilt(t, setup.julyfs, tree, setup.env, "", "index", "build", "--mount", "/repo=local:.", "--index", idx)
			assert.Equal(t, 0, r.code, "julyfs index build: exit; stderr %q", r.stderr)
			assert.True(t, strings.HasPrefix(r.stdout, "3 files: 3 indexed "), "julyfs index build: stdout %q", r.stdout)
			assert.Empty(t, r.stderr, "julyfs index build: stderr")
			r = runBuilt(t, setup.julyfs, tree, setup.env, "", "search", "merge sorted streams", "--mount", "/repo=local:.", "--index", idx, "--max", "1")
			assert.Equal(t, 0, r.code, "julyfs search --index: exit; stderr %q", r.stderr)
			assert.True(t, strings.HasPrefix(r.stdout, "/repo/src/merge.go  "), "julyfs search --index: stdout %q", r.stdout)
			assert.Equal(t, 1, strings.Count(r.stdout, "\n"), "julyfs search --index: lines of stdout %q", r.stdout)
			assert.Empty(t, r.stderr, "julyfs search --index: stderr")
			// julyfsd's errors and exit status come through as they are.
			r = runBuilt(t, setup.julyfs, tree, setup.env, "", "search", "x", "--mount", "/repo=local:.", "--index", tree)
			assert.Equal(t, 1, r.code, "julyfs search --index on a non-index: exit; stderr %q", r.stderr)
			assert.Contains(t, r.stderr, "is not a julyfs index", "julyfs search --index on a non-index: stderr")
			assert.Empty(t, r.stdout, "julyfs search --index on a non-index: stdout")
		})
	}
}

// TestNoJulyfsd checks that without julyfsd the heavy commands fail with a
// message saying how to get it, and everything else still works.
func TestNoJulyfsd(t *testing.T) {
	julyfs, _ := built(t)
	tree := smallTree(t)
	env := []string{"PATH=" + t.TempDir()}
	want := " needs julyfsd, the companion that holds FUSE and the search index: " +
		"go install github.com/julyfs/julyfs/cmd/julyfsd@latest (or set JULYFSD to its path)\n"
	for _, tt := range []struct {
		what string
		args []string
	}{
		{"julyfs index build", []string{"index", "build", "--mount", "/=local:.", "--index", "idx"}},
		{"julyfs search --index", []string{"search", "x", "--mount", "/=local:.", "--index", "idx"}},
		{"julyfs mount", []string{"mount", "--mount", "/=local:.", "mnt"}},
		{"julyfs unmount", []string{"unmount", "mnt"}},
	} {
		r := runBuilt(t, julyfs, tree, env, "", tt.args...)
		assert.Equal(t, 1, r.code, "julyfs %q without julyfsd: exit; stderr %q", tt.args, r.stderr)
		assert.Equal(t, tt.what+want, r.stderr, "julyfs %q without julyfsd: stderr", tt.args)
		assert.Empty(t, r.stdout, "julyfs %q without julyfsd: stdout", tt.args)
	}
	r := runBuilt(t, julyfs, tree, append(env, "JULYFSD=/nonexistent/julyfsd"), "", "index", "build", "--mount", "/=local:.", "--index", "idx")
	assert.Equal(t, 1, r.code, "julyfs index build with JULYFSD naming nothing: exit; stderr %q", r.stderr)
	assert.True(t, strings.HasPrefix(r.stderr, "julyfs index build needs julyfsd: JULYFSD=/nonexistent/julyfsd: "), "julyfs index build with JULYFSD naming nothing: stderr %q", r.stderr)
	// A julyfs that julyfs would hand a command to again refuses.
	r = runBuilt(t, julyfs, tree, append(env, "JULYFSD="+julyfs), "", "index", "build", "--mount", "/=local:.", "--index", "idx")
	assert.Equal(t, 1, r.code, "julyfs index build with JULYFSD=julyfs: exit; stderr %q", r.stderr)
	assert.Contains(t, r.stderr, "must be the julyfsd executable, not julyfs", "julyfs index build with JULYFSD=julyfs: stderr")
	for _, args := range [][]string{
		{"--help"}, {"mount", "--help"}, {"index", "--help"}, {"index", "build", "--help"}, {"unmount", "--help"},
		{"search", "merge", "--mount", "/=local:."}, // no index: no results, exit 0
		{"grep", "Merge", "/src", "--mount", "/=local:."},
	} {
		r := runBuilt(t, julyfs, tree, env, "", args...)
		assert.Equal(t, 0, r.code, "julyfs %q without julyfsd: exit; stderr %q", args, r.stderr)
		assert.Empty(t, r.stderr, "julyfs %q without julyfsd: stderr", args)
	}
}

// TestMountSignal mounts with the built julyfs, which execs julyfsd in its
// place: the process julyfs started is the server, so SIGINT to it
// unmounts and it exits 0.
func TestMountSignal(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("cannot mount FUSE here: no /dev/fuse")
	}
	if _, err := exec.LookPath("fusermount3"); err != nil && os.Geteuid() != 0 {
		t.Skip("cannot mount FUSE here: not root and no fusermount3")
	}
	julyfs, julyfsd := built(t)
	dir := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	cmd := exec.Command(julyfs, "mount", "--mount", "/=temp:", dir)
	cmd.Env = append(os.Environ(), "JULYFSD="+julyfsd)
	var stderr bytes.Buffer
	cmd.Stderr, cmd.Stdout = &stderr, io.Discard
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			assert.Fail(t, "julyfs mount did not exit 30s after kill")
		}
		if isMounted(dir) {
			exec.Command("umount", "-l", dir).Run()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !isMounted(dir) {
		select {
		case err := <-done:
			done <- err
			require.Fail(t, "julyfs mount exited before mounting", "%v: %s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			require.Fail(t, "not mounted after 30s", "%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/comm")
	assert.NoError(t, err, "reading the julyfs mount process's comm")
	assert.Equal(t, "julyfsd", strings.TrimSpace(string(comm)), "the julyfs mount process runs this, want julyfsd in its place")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-done:
		done <- err
		assert.NoError(t, err, "julyfs mount after SIGINT: %s", stderr.String())
	case <-time.After(30 * time.Second):
		require.Fail(t, "julyfs mount still running 30s after SIGINT")
	}
	assert.False(t, isMounted(dir), "%s still mounted after SIGINT", dir)
}

// isMounted reports whether dir is a mountpoint, from the mount table
// (never touching dir itself).
func isMounted(dir string) bool {
	ok, _ := fusemount.Mounted(dir)
	return ok
}
