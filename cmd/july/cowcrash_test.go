package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs/cow"
)

const cowCrashScript = `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /a.txt, contents: "one\n"}}]
      - text: one
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: before the crash}}]
      - sleep: 1h
        text: never
  - replies:
      - calls: [{tool: Read, args: {path: /b.txt}}]
      - expect: [{contains: before the crash}]
        text: continued
`

// TestCowRunKilledMidTurn kills july run --cow with SIGKILL in the middle
// of a turn, after a write: the recorded checkpoint is intact, the tree
// is untouched, the write is in the layer (the next turn reads it and its
// checkpoint holds it), and rewind and apply work after.
func TestCowRunKilledMidTurn(t *testing.T) {
	agent, state := runAgent(t, cowCrashScript)
	treeDir := filepath.Join(agent, "tree")
	run := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, code := julyRun(t, append(args, "--state-root", state)...)
		require.Equal(t, 0, code, "july %s: %s", strings.Join(args, " "), errOut)
		return out, errOut
	}
	run("run", agent, "--cow", "-m", "1")
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	id := list[0].ID
	layer := filepath.Join(state, "sessions", id, checkpoint.LayerDir)
	before, err := os.ReadFile(checkpoint.ManifestPath(layer, 1))
	require.NoError(t, err)

	cmd, events, _ := startRun(t, agent, "--session", id, "-m", "2", "--state-root", state)
	waitEvent(t, events, sessions.TypeActionResult)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()

	after, err := os.ReadFile(checkpoint.ManifestPath(layer, 1))
	require.NoError(t, err)
	assert.Equal(t, before, after, "the recorded checkpoint is intact")
	_, err = checkpoint.Load(layer, 2)
	require.ErrorIs(t, err, checkpoint.ErrNoCheckpoint, "the killed turn has none")
	es, err := cow.ReadEntries(layer)
	require.NoError(t, err)
	var paths []string
	for _, e := range es {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{"/a.txt", "/b.txt"}, paths, "the write the killed process reported done is in the layer")
	assert.Equal(t, map[string]string{"a.txt": "hi\n"}, tree(t, treeDir), "the tree is untouched")

	out, errOut := run("run", agent, "--session", id, "-m", "3")
	assert.Equal(t, "continued\n", out)
	assert.Contains(t, errOut, "had not ended")
	m, err := checkpoint.Load(layer, 3)
	require.NoError(t, err)
	assert.Len(t, m.Entries, 2, "turn 3's checkpoint holds the killed turn's write")
	logOut, _ := run("log", agent, id)
	assert.Contains(t, logOut, "failed")

	run("rewind", agent, id, "--to", "1")
	names, _ := run("diff", agent, id, "--name-only")
	assert.Equal(t, "/a.txt\n", names)
	run("apply", agent, id)
	assert.Equal(t, map[string]string{"a.txt": "one\n"}, tree(t, treeDir))
}

const cowMountScript = `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /tool.txt, contents: "by the tool\n"}}]
      - sleep: 1h
        text: never
`

// TestCowRunMount: july run --cow --mount DIR --mount-rw mounts the
// session's layer; a shell's write on the mount during the turn is in
// the turn's checkpoint beside the tool's, and the tree is not written.
func TestCowRunMount(t *testing.T) {
	if !canMount() {
		t.Skip("no FUSE here: /dev/fuse and root or fusermount3 are needed")
	}
	agent, state := runAgent(t, cowMountScript)
	mnt := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	cmd, events, stderr := startRun(t, agent, "--cow", "--mount", mnt, "--mount-rw", "-m", "go", "--state-root", state)
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	first := waitEvent(t, events, sessions.TypeActionResult)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(mnt, "tool.txt")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the mount shows no tool.txt after 30 s: %s", stderr)
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, os.WriteFile(filepath.Join(mnt, "shell.txt"), []byte("by the shell\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(mnt, "a.txt")))
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	waitEvent(t, events, sessions.TypeTurnFailed)
	cmd.Wait() // exits 1: the turn was interrupted
	assert.Contains(t, stderr.String(), "turn interrupted")

	assert.Equal(t, map[string]string{"a.txt": "hi\n"}, tree(t, filepath.Join(agent, "tree")), "the tree is not written")
	out, errOut, code := julyRun(t, "diff", agent, first.SessionID, "--turn", "1", "--name-only", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "/a.txt\n/shell.txt\n/tool.txt\n", out)
	out, errOut, code = julyRun(t, "diff", agent, first.SessionID, "--turn", "1", "--stat", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "3 files changed, 2 insertions(+), 1 deletions(-)")
}

// getCheckpoints polls GET url/sessions/id/checkpoints (bounded) until it
// lists n checkpoints, and returns them.
func getCheckpoints(t *testing.T, url, id string, n int) []any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + "/sessions/" + id + "/checkpoints")
		require.NoError(t, err)
		var m map[string]any
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		require.NoError(t, err)
		if cps, _ := m["checkpoints"].([]any); len(cps) >= n {
			return cps
		}
		require.True(t, time.Now().Before(deadline), "%d checkpoints after 30 s: %v", n, m)
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeCow: a session july run --cow made continues on its layer
// under july serve; with july serve --cow a new session runs on one. The
// tree is never written.
func TestServeCow(t *testing.T) {
	agent, state := runAgent(t, cowScript)
	treeDir := filepath.Join(agent, "tree")
	_, errOut, code := julyRun(t, "run", agent, "--cow", "-m", "go", "--state-root", state)
	require.Equal(t, 0, code, errOut)
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	id := list[0].ID

	s := startServe(t, agent, "--state-root", state)
	postJSON(t, s.url+"/sessions/"+id+"/messages", `{"message":"go"}`)
	cps := getCheckpoints(t, s.url, id, 2)
	assert.Equal(t, "/b.txt", cps[1].(map[string]any)["files"].([]any)[0].(map[string]any)["path"])
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, s.wait(t), s.log())

	s = startServe(t, agent, "--state-root", state, "--cow")
	m := postJSON(t, s.url+"/sessions", `{"message":"go"}`)
	fresh := m["sessionId"].(string)
	cps = getCheckpoints(t, s.url, fresh, 1)
	assert.Equal(t, []any{map[string]any{"path": "/a.txt", "change": "modified", "added": float64(1), "removed": float64(0)}},
		cps[0].(map[string]any)["files"])
	assert.Equal(t, map[string]string{"a.txt": "hi\n"}, tree(t, treeDir), "the tree is not written")
}
