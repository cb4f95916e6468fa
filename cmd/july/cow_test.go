package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

// cowScript is five turns of tool writes; a turn's place in the
// conversation picks its script turn, so after a rewind to 2 the next run
// is script turn 3 again.
const cowScript = `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /a.txt, contents: "hi\nfrom turn 1\n"}}]
      - text: one
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: "b\n"}}, {tool: Delete, args: {path: /old.txt}}]
      - text: two
  - replies:
      - calls: [{tool: Write, args: {path: /c/d.txt, contents: "d\n"}}]
      - text: three
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: "b\nb2\n"}}]
      - text: four
  - replies:
      - calls: [{tool: Delete, args: {path: /c/d.txt}}]
      - text: five
`

// tree returns the files under dir, path to contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	}))
	return out
}

func TestCowSession(t *testing.T) {
	agent, state := runAgent(t, cowScript)
	treeDir := filepath.Join(agent, "tree")
	require.NoError(t, os.WriteFile(filepath.Join(treeDir, "old.txt"), []byte("old\n"), 0o644))
	original := tree(t, treeDir)
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := julyRun(t, append(args, "--state-root", state)...)
		require.Equal(t, 0, code, "july %s: %s", strings.Join(args, " "), errOut)
		return out
	}
	run("run", agent, "--cow", "-m", "go")
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	id := list[0].ID
	for i := 2; i <= 5; i++ {
		run("run", agent, "--session", id, "-m", "go")
	}
	assert.Equal(t, original, tree(t, treeDir), "the tree is untouched")

	// Each turn's end names its checkpoint.
	_, events, _, err := sessions.New(state).Read(id)
	require.NoError(t, err)
	n := 0
	for _, ev := range events {
		if ev.Type == sessions.TypeTurnCompleted {
			n++
			var d sessions.TurnCompleted
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			require.NotNil(t, d.Checkpoint, "turn %d", n)
			assert.Equal(t, n, d.Checkpoint.Turn)
			assert.FileExists(t, filepath.Join(state, "sessions", id, filepath.FromSlash(d.Checkpoint.Manifest)))
		}
	}
	assert.Equal(t, 5, n)

	show := run("show", agent, id)
	assert.Contains(t, show, "-- checkpoint of turn 2: 2 paths changed, 3 differ from the tree (july diff --turn 2)\n")
	assert.Equal(t, "/a.txt\n/b.txt\n/old.txt\n", run("diff", agent, id, "--name-only"))
	assert.Equal(t, "/c/d.txt\n", run("diff", agent, id, "--turn", "3", "--name-only"))
	assert.Equal(t, "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1,2 @@\n b\n+b2\n",
		run("diff", agent, id, "--turn", "4"))
	stat := run("diff", agent, id, "--stat")
	assert.Contains(t, stat, " 3 files changed, 3 insertions(+), 1 deletions(-)\n")
	logOut := run("log", agent, id)
	assert.Len(t, strings.Split(strings.TrimSpace(logOut), "\n"), 6, logOut)
	assert.Contains(t, logOut, "completed  1      +1 -0")

	// The tree as it was after turn 3, mounted read-only.
	if canMount() {
		mnt := filepath.Join(t.TempDir(), "mnt")
		require.NoError(t, os.Mkdir(mnt, 0o755))
		cmd := julyCommand(t, "mount", agent, id, mnt, "--at", "3", "--state-root", state)
		require.NoError(t, cmd.Start())
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(mnt, "c/d.txt")); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		mounted := tree(t, mnt)
		assert.Equal(t, map[string]string{"a.txt": "hi\nfrom turn 1\n", "b.txt": "b\n", "c/d.txt": "d\n"}, mounted)
		assert.Error(t, os.WriteFile(filepath.Join(mnt, "w.txt"), []byte("x"), 0o644), "read-only")
		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		require.NoError(t, cmd.Wait())
	}

	// A session held by another process (a running turn) refuses.
	held, _, err := sessions.New(state).Resume(id)
	require.NoError(t, err)
	_, errOut, code := julyRun(t, "rewind", agent, id, "--to", "2", "--state-root", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "session in use")
	require.NoError(t, held.Close())

	// Rewind to 2: files and conversation; then turn 6 is script turn 3.
	run("rewind", agent, id, "--to", "2")
	assert.Equal(t, "/a.txt\n/b.txt\n/old.txt\n", run("diff", agent, id, "--name-only"))
	assert.Contains(t, run("diff", agent, id),
		"diff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+b\n")
	assert.Contains(t, run("diff", agent, id), "diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n")
	assert.Equal(t, "three\n", run("run", agent, "--session", id, "-m", "go"))
	logOut = run("log", agent, id)
	assert.Contains(t, logOut, "completed (rewound)")
	assert.Contains(t, run("show", agent, id), "-- rewound to the end of turn 2\n")
	_, errOut, code = julyRun(t, "rewind", agent, id, "--to", "9", "--state-root", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "has no turn 9 (it has 6)")

	// Fork at 4: a new session with turns 1-4 and 4's files.
	forkID := strings.TrimSpace(run("fork", agent, id, "--at", "4"))
	require.True(t, sessions.ValidID(forkID), forkID)
	meta, _, _, err := sessions.New(state).Read(forkID)
	require.NoError(t, err)
	require.NotNil(t, meta.ForkOf)
	assert.Equal(t, sessions.Fork{Session: id, Turn: 4}, *meta.ForkOf)
	assert.Equal(t, 4, meta.Turns)
	assert.Equal(t, "/a.txt\n/b.txt\n/c/d.txt\n/old.txt\n", run("diff", agent, forkID, "--name-only"))
	assert.Equal(t, "five\n", run("run", agent, "--session", forkID, "-m", "go"))

	// Apply the fork, the tree's /a.txt edited behind its back: a conflict.
	require.NoError(t, os.WriteFile(filepath.Join(treeDir, "a.txt"), []byte("edited on the host\n"), 0o644))
	out, _, code := julyRun(t, "apply", agent, forkID, "--dry-run", "--state-root", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "conflict write /a.txt")
	assert.Contains(t, out, "    the tree's change since:\n    --- base\n    +++ tree\n    @@ -1 +1 @@\n    -hi\n    +edited on the host\n")
	assert.Contains(t, out, "    the session's change:\n    --- base\n    +++ session\n    @@ -1 +1,2 @@\n     hi\n    +from turn 1\n")
	assert.Equal(t, "edited on the host\n", tree(t, treeDir)["a.txt"])
	_, ok := tree(t, treeDir)["b.txt"]
	assert.False(t, ok, "a dry run writes nothing")
	out, _, code = julyRun(t, "apply", agent, forkID, "--state-root", state)
	assert.Equal(t, 1, code, out)
	assert.Equal(t, map[string]string{"a.txt": "edited on the host\n", "b.txt": "b\nb2\n"}, tree(t, treeDir))
	assert.Equal(t, "/a.txt\n", run("diff", agent, forkID, "--name-only"), "the conflict stays in the session")

	// A session without --cow cannot rewind.
	run("run", agent, "-m", "go")
	list, err = sessions.New(state).List()
	require.NoError(t, err)
	plain := list[len(list)-1].ID
	_, errOut, code = julyRun(t, "rewind", agent, plain, "--to", "0", "--state-root", state)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "was made without --cow")
}

// canMount reports whether this machine can mount FUSE: /dev/fuse, and
// root or fusermount3.
func canMount() bool {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return false
	}
	_, err := exec.LookPath("fusermount3")
	return err == nil || os.Geteuid() == 0
}
