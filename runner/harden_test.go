package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestLoadNullToolsRefused: a tools: key whose entries are all commented
// out is null, and must not grant the whole host catalog (Shell included).
func TestLoadNullToolsRefused(t *testing.T) {
	for _, y := range []string{
		"tools:\n",
		"tools:\n  # - read\n  # - shell\n",
		"tools: ~\n",
		"tools: null\n",
	} {
		_, err := Load(agentDir(t, "-- agent.yaml --\nname: x\n"+y))
		require.Error(t, err, "%q", y)
		assert.Contains(t, problemsOf(t, err), "tools: is empty (null): list the tools the agent may use, write tools: [] for none, or remove tools: for the default set", "%q", y)
	}
	// An explicit empty list is no tools at all: nothing served, no Shell.
	a, err := Load(agentDir(t, "-- agent.yaml --\nname: x\ntools: []\n"))
	require.NoError(t, err)
	assert.Empty(t, a.Plan.Served())
	assert.False(t, a.Plan.Shell)
	assert.Empty(t, a.Plan.Harness)
}

// FuzzToolsNoPanic sends arbitrary argument objects to every file tool through
// the dispatcher: whatever the arguments, the result is a value, and never
// the "internal error" a recovered panic becomes.
func FuzzToolsNoPanic(f *testing.F) {
	f.Add(uint8(2), `{"pattern":"x","output_mode":"content","offset":9223372036854775807,"head_limit":9223372036854775807}`)
	f.Add(uint8(2), `{"pattern":"x","-C":9223372036854775807,"output_mode":"content"}`)
	f.Add(uint8(0), `{"path":"/a.txt","offset":9223372036854775807,"limit":9223372036854775807}`)
	f.Add(uint8(3), `{"pattern":"**/**/**/*"}`)
	f.Add(uint8(1), `{"path":"/","ignore":["["]}`)
	f.Add(uint8(5), `{"path":"/a.txt","oldText":"x","newText":"y","replaceAll":true}`)
	f.Add(uint8(7), `{"query":"x","numResults":9223372036854775807}`)
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		fsys := fuzzTree(t)
		ts := tools.Synthesize(fsys, tools.FileToolNames(), tools.Options{MaxOutputBytes: 4096})
		d, err := NewDispatcher(ts, DispatchOptions{})
		require.NoError(t, err)
		name := tools.FileToolNames()[int(which)%len(tools.FileToolNames())]
		r := d.Call(context.Background(), name, json.RawMessage(args))
		require.NotNil(t, r)
		assert.False(t, strings.HasPrefix(r.String(), "internal error"), "%s %s: %s", name, args, r)
	})
}

func fuzzTree(t *testing.T) vfs.FileSystem {
	fsys, err := temp.New(map[string][]byte{
		"/a.txt":     []byte("x\ny\nx\n"),
		"/d/b.go":    []byte("package x\n"),
		"/d/e/c.txt": []byte("xx"),
	})
	require.NoError(t, err)
	return fsys
}

// TestEmptyRootAndShadowedTmp: root: {} is an empty virtual workspace, and
// a root mount under /tmp is a warning (when scratch shadows it), not a
// refusal.
func TestEmptyRootAndShadowedTmp(t *testing.T) {
	ctx := context.Background()
	a, err := Load(agentDir(t, "-- agent.yaml --\nname: x\nroot: {}\n"))
	require.NoError(t, err)
	assert.True(t, a.Plan.Root)
	assert.Empty(t, a.Warnings)
	s, err := a.Open(ctx, SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	turn, err := s.Turn()
	require.NoError(t, err)
	assert.Equal(t, "/tmp/", turn.Call(ctx, "Glob", json.RawMessage(`{"pattern":"**"}`)).String(), "only the turn scratch")
	assert.Equal(t, "read-only mount: /a.txt", turn.Call(ctx, "Write", json.RawMessage(`{"path":"/a.txt","contents":"x"}`)).String())

	a, err = Load(agentDir(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp: {}\n  /tmp/cache:\n    temp: {}\n"))
	require.NoError(t, err)
	require.Len(t, a.Warnings, 1)
	assert.Contains(t, a.Warnings[0].String(), "root: mount /tmp/cache is under /tmp, which each turn binds to an empty scratch tree")

	a, err = Load(agentDir(t, "-- agent.yaml --\nname: x\ntools: [read]\nroot:\n  /:\n    temp: {}\n  /tmp/cache:\n    temp: {}\n"))
	require.NoError(t, err)
	assert.Empty(t, a.Warnings, "no scratch, nothing shadowed")
}

// TestInstructionsConfined: instructions: names a regular file inside the
// agent directory; a path outside it is refused, and a FIFO is refused
// without blocking Load.
func TestInstructionsConfined(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.md")
	require.NoError(t, os.WriteFile(outside, []byte("secret"), 0o644))
	for _, tt := range []struct{ instr, want string }{
		{outside, "instructions: cannot read " + outside + ": an absolute path; name a file inside the agent directory"},
		{"../" + filepath.Base(filepath.Dir(outside)) + "/secret.md", "outside the agent directory"},
		{"link.md", "outside the agent directory"},
		{"sub", "not a regular file (d"},
		{"fifo", "not a regular file (p"},
	} {
		dir := agentDir(t, "-- agent.yaml --\nname: x\ninstructions: "+tt.instr+"\n-- sub/x --\n")
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link.md")))
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
		done := make(chan error, 1)
		go func() { _, err := Load(dir); done <- err }()
		select {
		case err := <-done:
			require.Error(t, err, tt.instr)
			assert.Contains(t, strings.Join(problemsOf(t, err), "\n"), tt.want, tt.instr)
		case <-time.After(10 * time.Second):
			// Unblock the FIFO so the goroutine ends, then fail.
			f, _ := os.OpenFile(filepath.Join(dir, "fifo"), os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if f != nil {
				f.Close()
			}
			require.FailNowf(t, "Load blocked", "Load with instructions %s blocked", tt.instr)
		}
	}
	// A symlink that stays inside the directory is fine.
	dir := agentDir(t, "-- agent.yaml --\nname: x\ninstructions: in.md\n-- docs/real.md --\nhello\n")
	require.NoError(t, os.Symlink("docs/real.md", filepath.Join(dir, "in.md")))
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "hello\n", a.Instructions)
}

// TestWorkspaceFilesAliasRefused: workspaceFiles contents may not be YAML
// aliases (refused before decoding would expand them).
func TestWorkspaceFilesAliasRefused(t *testing.T) {
	_, err := Load(agentDir(t, "-- agent.yaml --\nname: x\nmodel: &m hello\nworkspaceFiles:\n  a.txt: *m\n"))
	require.Error(t, err)
	assert.Equal(t, []string{"workspaceFiles: line 4: a.txt: a YAML alias (*m) is not allowed as seed contents; write the contents out"}, problemsOf(t, err))
	_, err = Load(agentDir(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp:\n      /a.txt: &c hi\n      /b.txt: *c\n"))
	require.Error(t, err)
	assert.Contains(t, problemsOf(t, err)[0], "a YAML alias (*c) is not allowed as seed contents")
}
