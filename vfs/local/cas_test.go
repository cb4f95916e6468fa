package local_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// The environment of a TestCASWorker run: the tree's host directory and
// how many increments to make.
const (
	casRootEnv  = "JULYFS_CAS_ROOT"
	casCountEnv = "JULYFS_CAS_COUNT"
	casModeEnv  = "JULYFS_CAS_MODE" // "stage": through a staging's CommitIf, as a mount commits
)

// TestCASAcrossProcesses runs separate processes (copies of this test
// binary running TestCASWorker), each adding one to a counter file k
// times with a read-modify-WriteIf loop that retries on conflict, the way
// StrReplace edits; half of them through a staging (Stage with keep, then
// CommitIf on the etag it started from), as a FUSE mount commits a file.
// Every reported success must be in the file at the end: exactly N*k
// increments.
func TestCASAcrossProcesses(t *testing.T) {
	const procs, k = 4, 150
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "counter"), []byte("0\n"), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for i := range cmds {
		cmd := exec.CommandContext(ctx, exe, "-test.run=^TestCASWorker$", "-test.count=1", "-test.v")
		mode := "writeif"
		if i%2 == 1 {
			mode = "stage"
		}
		cmd.Env = append(os.Environ(), casRootEnv+"="+dir, casCountEnv+"="+strconv.Itoa(k), casModeEnv+"="+mode, "GOCOVERDIR="+t.TempDir())
		cmd.Stdout = &outs[i]
		cmd.Stderr = &outs[i]
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		err := cmd.Wait()
		require.NoError(t, err, "worker %d:\n%s", i, outs[i].String())
		require.Contains(t, outs[i].String(), "--- PASS: TestCASWorker", "worker %d did not run:\n%s", i, outs[i].String())
		if _, line, ok := strings.Cut(outs[i].String(), "increments, "); ok {
			t.Logf("worker %d: %s", i, strings.SplitN(line, "\n", 2)[0])
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "counter"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(procs*k)+"\n", string(data), "lost updates: every worker reported %d successes", k)
	leftovers, err := filepath.Glob(filepath.Join(dir, ".julyfs-tmp-*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers, "temporary files left behind")
}

// TestCASWorker is one process of TestCASAcrossProcesses; it skips unless
// that test started it.
func TestCASWorker(t *testing.T) {
	root := os.Getenv(casRootEnv)
	if root == "" {
		t.Skip("run by TestCASAcrossProcesses")
	}
	k, err := strconv.Atoi(os.Getenv(casCountEnv))
	require.NoError(t, err)
	fsys, err := local.New(root)
	require.NoError(t, err)
	defer fsys.Close()
	ctx := context.Background()
	conflicts := 0
	if os.Getenv(casModeEnv) == "stage" {
		for done := 0; done < k; {
			s, err := fsys.Stage(ctx, "/counter", true)
			require.NoError(t, err)
			buf := make([]byte, s.Size())
			_, err = s.ReadAt(buf, 0)
			require.NoError(t, err)
			n, err := strconv.Atoi(strings.TrimSpace(string(buf)))
			require.NoError(t, err, "counter holds %q", buf)
			next := fmt.Appendf(nil, "%d\n", n+1)
			require.NoError(t, s.Truncate(0))
			_, err = s.WriteAt(next, 0)
			require.NoError(t, err)
			err = vfs.CommitIf(ctx, s, vfs.Precondition{IfMatch: vfs.BaseETag(s)})
			if errors.Is(err, vfs.ErrConflict) {
				require.EqualError(t, err, "conflict: /counter")
				require.NoError(t, s.Abort())
				conflicts++
				continue
			}
			require.NoError(t, err)
			done++
		}
		t.Logf("%d increments, %d conflicts", k, conflicts)
		return
	}
	for done := 0; done < k; {
		// Stat before Read, as StrReplace does: a newer file read with an
		// older etag conflicts, never the other way round.
		st, err := fsys.Stat(ctx, "/counter")
		require.NoError(t, err)
		data, err := fsys.Read(ctx, "/counter")
		require.NoError(t, err)
		n, err := strconv.Atoi(strings.TrimSpace(string(data)))
		require.NoError(t, err, "counter holds %q", data)
		_, err = fsys.WriteIf(ctx, "/counter", fmt.Appendf(nil, "%d\n", n+1), vfs.Precondition{IfMatch: st.ETag})
		if errors.Is(err, vfs.ErrConflict) {
			require.EqualError(t, err, "conflict: /counter")
			conflicts++
			continue
		}
		require.NoError(t, err)
		done++
	}
	t.Logf("%d increments, %d conflicts", k, conflicts)
}
