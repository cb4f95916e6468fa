package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
)

// bigLines is n bytes of numbered text lines, compressible as logs are.
func bigLines(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %09d of a large blob, mostly the same text\n", i)
	}
	return b.Bytes()[:n]
}

// bigRepo commits one blob of size bytes as /big.log, loose; with the
// git command (fast) when it is installed, else with go-git.
func bigRepo(t *testing.T, size int) (dir string, data []byte) {
	dir = t.TempDir()
	data = bigLines(size)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.log"), data, 0o644))
	defer func() { require.NoError(t, os.Remove(filepath.Join(dir, "big.log"))) }()
	if _, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{{"init", "-q"}, {"add", "big.log"}, {"-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "big"}} {
			out, err := gitCmd(dir, args...).CombinedOutput()
			require.NoError(t, err, "git %s: %s", args, out)
		}
		return dir, data
	}
	repo, err := git.PlainInit(dir, false)
	require.NoError(t, err)
	w, err := repo.Worktree()
	require.NoError(t, err)
	_, err = w.Add("big.log")
	require.NoError(t, err)
	sig := &object.Signature{Name: "t", Email: "t@localhost", When: time.Unix(1700000000, 0)}
	_, err = w.Commit("big", &git.CommitOptions{Author: sig, Committer: sig})
	require.NoError(t, err)
	return dir, data
}

// repack packs the repository's objects (git gc, else go-git).
func repack(t *testing.T, dir string) {
	if _, err := exec.LookPath("git"); err == nil {
		out, err := gitCmd(dir, "gc", "-q").CombinedOutput()
		require.NoError(t, err, "git gc: %s", out)
		return
	}
	repo, err := git.PlainOpen(dir)
	require.NoError(t, err)
	require.NoError(t, repo.RepackObjects(&git.RepackConfig{}))
}

func gitCmd(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return cmd
}

// peakRSS is the peak resident size of process pid (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// TestLargeBlobStreams: a blob far larger than the plugin's memory bound
// is read by range and grepped in pieces, loose and packed: the plugin's
// peak RSS stays far below the blob's size, a whole Read over max-read is
// refused with the bound's name, and max-file-size refuses the blob to
// every read.
func TestLargeBlobStreams(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to measure the plugin")
	}
	const size = 96 << 20
	dir, data := bigRepo(t, size)
	t.Run("loose", func(t *testing.T) { checkLargeBlob(t, dir, data) })
	repack(t, dir)
	packs, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	require.NoError(t, err)
	require.NotEmpty(t, packs, "repacked")
	t.Run("packed", func(t *testing.T) { checkLargeBlob(t, dir, data) })
}

func checkLargeBlob(t *testing.T, dir string, data []byte) {
	size := len(data)
	fsys := openPlugin(t, plugins.Config{Args: map[string]string{"repo": dir}})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	r, err := vfs.OpenFile(ctx, fsys, "/big.log")
	require.NoError(t, err)
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for off := int64(0); ; {
		n, err := r.ReadAt(buf, off)
		h.Write(buf[:n])
		off += int64(n)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	want := sha256.Sum256(data)
	assert.Equal(t, want[:], h.Sum(nil), "the blob read by range")

	var hits []vfs.GrepResult
	for hit, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "line 000999999 ", MaxLineBytes: 200}) {
		require.NoError(t, err)
		hits = append(hits, hit)
	}
	require.Len(t, hits, 1)
	assert.Equal(t, 1000000, hits[0].LineNumber)

	pid := plugins.Unwrap(fsys).Pid()
	require.NotZero(t, pid)
	assert.Less(t, peakRSS(t, pid), int64(size/2), "the plugin's peak RSS after reading and grepping a %d MiB blob", size>>20)

	_, err = fsys.Read(ctx, "/big.log")
	assert.ErrorContains(t, err, "/big.log: the blob is 100663296 bytes, over this mount's max-read=67108864 for a whole read (read it in ranges, as julyfs cat does, or raise it with ?max-read=BYTES)")

	small := openPlugin(t, plugins.Config{Args: map[string]string{"repo": dir, "max-file-size": "1M"}})
	_, err = vfs.ReadAt(ctx, small, "/big.log", buf[:10], 0)
	assert.ErrorContains(t, err, "the blob is 100663296 bytes, over this mount's max-file-size=1048576 (raise it with ?max-file-size=BYTES)")
	for _, err := range small.Grep(ctx, vfs.GrepQuery{Pattern: "line"}) {
		require.NoError(t, err, "grep passes over a blob over max-file-size")
	}
}
