package checkpoint_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/local"
)

// The crash tests run this test binary again as a child (TestCrashChild)
// that takes a checkpoint or applies, and kill it with SIGKILL when it
// reaches a phase.
const (
	crashPhaseEnv = "JULYFS_CHECKPOINT_CRASH_PHASE"
	crashDirEnv   = "JULYFS_CHECKPOINT_CRASH_DIR"
)

// bigB is a file large enough that a half-written copy would show.
var bigB = strings.Repeat("b2 is the session's version\n", 16<<10)

// crashBase is the base's files before the session.
var crashBase = map[string]string{"a.txt": "a1\n", "b.txt": "b1\n", "d/old.txt": "old\n"}

func openLocal(t *testing.T, dir, layer string) (*cow.FS, func()) {
	t.Helper()
	base, err := local.New(dir)
	require.NoError(t, err)
	c, err := cow.Open(base, layer)
	require.NoError(t, err)
	return c, func() { c.Close(); base.Close() }
}

// TestCrashChild is the child's side; it does nothing in a plain run.
func TestCrashChild(t *testing.T) {
	want, dir := os.Getenv(crashPhaseEnv), os.Getenv(crashDirEnv)
	if want == "" {
		t.Skip("the child of the crash tests")
	}
	c, done := openLocal(t, filepath.Join(dir, "base"), filepath.Join(dir, "session", checkpoint.LayerDir))
	defer done()
	checkpoint.SetPause(func(phase string) {
		if phase == want {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "reached"), []byte(phase), 0o644))
			select {} // until killed
		}
	})
	defer checkpoint.SetPause(nil)
	if strings.HasPrefix(want, "applied") || want == "base written" {
		_, err := checkpoint.Apply(t.Context(), c, false)
		require.NoError(t, err)
	} else {
		_, _, err := checkpoint.Take(c, filepath.Join(dir, "session"), 2, "t2", nil)
		require.NoError(t, err)
	}
	t.Fatalf("phase %q never reached", want)
}

// crashSetup makes a base and a session whose turn 1 wrote /a.txt
// (checkpointed) and whose turn 2 then wrote /b.txt and /c.txt and
// deleted /d/old.txt (not yet checkpointed).
func crashSetup(t *testing.T) (dir string, cp1 []byte) {
	ctx := t.Context()
	dir = t.TempDir()
	for p, s := range crashBase {
		p = filepath.Join(dir, "base", p)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	sd := filepath.Join(dir, "session")
	c, done := openLocal(t, filepath.Join(dir, "base"), filepath.Join(sd, checkpoint.LayerDir))
	defer done()
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("a2\n")))
	_, _, err := checkpoint.Take(c, sd, 1, "t1", nil)
	require.NoError(t, err)
	require.NoError(t, c.Write(ctx, "/b.txt", []byte(bigB)))
	require.NoError(t, c.Write(ctx, "/c.txt", []byte("c2\n")))
	require.NoError(t, c.Delete(ctx, "/d/old.txt"))
	cp1, err = os.ReadFile(checkpoint.ManifestPath(filepath.Join(sd, checkpoint.LayerDir), 1))
	require.NoError(t, err)
	return dir, cp1
}

// killAt runs the child until it reaches phase, then kills it with
// SIGKILL.
func killAt(t *testing.T, dir, phase string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), crashPhaseEnv+"="+phase, crashDirEnv+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	deadline := time.After(2 * time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(dir, "reached")); err == nil {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the child ended before phase %q (%v): %s", phase, err, out.String())
		case <-deadline:
			t.Fatalf("the child did not reach phase %q in 2 minutes: %s", phase, out.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := <-exited
	exited <- err
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the child was killed")
}

// baseFiles is the base's files, path to contents.
func baseFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(dir, "base")
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	}))
	return out
}

// TestKilledDuringCheckpoint: a process killed with SIGKILL while taking
// a checkpoint, before or after its manifest is written, leaves the
// recorded checkpoint intact and the layer whole; the base is never
// written; taking the checkpoint again works.
func TestKilledDuringCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		phase    string
		recorded bool
	}{{"blobs synced", false}, {"manifest written", true}} {
		t.Run(strings.ReplaceAll(tc.phase, " ", "-"), func(t *testing.T) {
			dir, cp1 := crashSetup(t)
			killAt(t, dir, tc.phase)
			sd := filepath.Join(dir, "session")
			layer := filepath.Join(sd, checkpoint.LayerDir)
			after, err := os.ReadFile(checkpoint.ManifestPath(layer, 1))
			require.NoError(t, err)
			assert.Equal(t, cp1, after, "checkpoint 1 is intact")
			_, err = checkpoint.Load(layer, 2)
			if tc.recorded {
				require.NoError(t, err, "the manifest the killed process wrote is whole")
			} else {
				require.ErrorIs(t, err, checkpoint.ErrNoCheckpoint)
			}
			assert.Equal(t, crashBase, baseFiles(t, dir), "the base is untouched")

			c, done := openLocal(t, filepath.Join(dir, "base"), layer)
			defer done()
			assert.Len(t, c.Entries(), 4, "the layer holds every change")
			b, err := c.Read(t.Context(), "/b.txt")
			require.NoError(t, err)
			assert.Equal(t, bigB, string(b))
			ref, _, err := checkpoint.Take(c, sd, 2, "t2", nil)
			require.NoError(t, err)
			assert.Equal(t, 4, ref.Entries)
			require.NoError(t, checkpoint.Rewind(c, 1))
			a, err := c.Read(t.Context(), "/a.txt")
			require.NoError(t, err)
			assert.Equal(t, "a2\n", string(a), "checkpoint 1 still rewinds")
			turns, err := checkpoint.Turns(layer)
			require.NoError(t, err)
			assert.Equal(t, []int{1, 2}, turns)
		})
	}
}

// TestKilledDuringApply: a process killed with SIGKILL in the middle of
// an apply leaves every base file old or new, never part of one; a rerun
// completes it (what was written counts as done) and the layer then
// shows the base.
func TestKilledDuringApply(t *testing.T) {
	want := map[string]string{"a.txt": "a2\n", "b.txt": bigB, "c.txt": "c2\n"}
	for _, phase := range []string{"applied /a.txt", "applied /b.txt", "base written"} {
		t.Run(strings.ReplaceAll(phase, " /", "-"), func(t *testing.T) {
			dir, _ := crashSetup(t)
			killAt(t, dir, phase)
			got := baseFiles(t, dir)
			for p, s := range got {
				assert.True(t, s == crashBase[p] || s == want[p], "%s is neither the base's nor the session's version (%d bytes)", p, len(s))
			}
			c, done := openLocal(t, filepath.Join(dir, "base"), filepath.Join(dir, "session", checkpoint.LayerDir))
			defer done()
			acts, err := checkpoint.Apply(t.Context(), c, false)
			require.NoError(t, err)
			for _, a := range acts {
				assert.Empty(t, a.Conflict, "%s: a rerun is no conflict", a.Path)
			}
			assert.True(t, acts[0].Path == "/a.txt" && acts[0].Done, "the file written before the kill counts as done: %+v", acts)
			assert.Equal(t, want, baseFiles(t, dir))
			assert.Empty(t, c.Entries(), "the layer shows the base")
		})
	}
}
