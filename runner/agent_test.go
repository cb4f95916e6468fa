package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"golang.org/x/tools/txtar"

	"github.com/julyfs/julyfs/vfs"
)

// agentDir writes a txtar archive into a new directory and returns it.
func agentDir(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range txtar.Parse([]byte(archive)).Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, f.Data, 0o644))
	}
	return dir
}

func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	require.ErrorAs(t, err, &ve, "Load error = %v, want a *ValidationError", err)
	var out []string
	for _, p := range ve.Problems {
		out = append(out, p.String())
	}
	return out
}

func TestLoadValid(t *testing.T) {
	dir := agentDir(t, `
-- agent.yaml --
name: notes
model: some-model
root:
  /:
    temp:
      /a.txt: "hi\n"
-- instructions.md --
Keep notes.
`)
	a, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "notes", a.Config.Name, "Load = %+v", a)
	assert.Equal(t, "Keep notes.\n", a.Instructions, "Load = %+v", a)
	assert.True(t, a.Plan.Root, "Load = %+v", a)
	assert.Empty(t, a.Cwd, "Load = %+v", a)
	assert.Equal(t, allEight, a.Plan.Served(), "plan = %+v", a.Plan)
	assert.True(t, a.Plan.ScratchTmp, "plan = %+v", a.Plan)
	ctx := context.Background()
	s, err := a.Open(ctx, SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	turn, err := s.Turn()
	require.NoError(t, err)
	r := turn.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`))
	assert.False(t, r.IsError, "Read = %+v", r)
	assert.Equal(t, "     1\thi", r.String(), "Read")
	r = turn.Call(ctx, "StrReplace", json.RawMessage(`{"path":"/a.txt","old_string":"hi","new_string":"yo"}`))
	assert.False(t, r.IsError, "StrReplace = %+v", r)
	assert.Equal(t, `{"occurrencesModified":1}`, r.String(), "StrReplace")
	// The session's tree is shared by its turns.
	next, err := s.Turn()
	require.NoError(t, err)
	r = next.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`))
	assert.Equal(t, "     1\tyo", r.String(), "Read in the next turn = %+v", r)
}

// TestTurnScratch checks the per-turn /tmp: a fresh empty tree over the
// authored root, shadowing it, not shared between turns, never written to
// the root.
func TestTurnScratch(t *testing.T) {
	dir := agentDir(t, `
-- agent.yaml --
name: scratch
root:
  /:
    temp:
      /a.txt: "a"
      /tmp/authored.txt: "shadowed"
`)
	a, err := Load(dir)
	require.NoError(t, err)
	ctx := context.Background()
	s, err := a.Open(ctx, SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	t1, err := s.Turn()
	require.NoError(t, err)
	r := t1.Call(ctx, "Read", json.RawMessage(`{"path":"/tmp/authored.txt"}`))
	assert.True(t, r.IsError, "Read of an authored /tmp file = %+v, want it shadowed", r)
	assert.Equal(t, "not found: /tmp/authored.txt", r.String(), "Read of an authored /tmp file, want it shadowed")
	r = t1.Call(ctx, "Write", json.RawMessage(`{"path":"/tmp/spill.txt","contents":"big"}`))
	require.False(t, r.IsError, "Write /tmp = %+v", r)
	r = t1.Call(ctx, "Read", json.RawMessage(`{"path":"/tmp/spill.txt"}`))
	assert.Equal(t, "     1\tbig", r.String(), "Read /tmp in the same turn = %+v", r)
	r = t1.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`))
	assert.Equal(t, "     1\ta", r.String(), "Read /a.txt through the turn = %+v", r)
	t2, err := s.Turn()
	require.NoError(t, err)
	r = t2.Call(ctx, "Read", json.RawMessage(`{"path":"/tmp/spill.txt"}`))
	assert.True(t, r.IsError, "next turn sees the last turn's /tmp: %+v", r)
	info, err := s.FS().Stat(ctx, "/tmp/spill.txt")
	assert.NoError(t, err, "scratch leaked into the root")
	assert.Equal(t, vfs.KindMissing, info.Kind, "scratch leaked into the root: %+v", info)
}

// TestLoadFailClosed checks every fail-closed combination and reserved
// path as a validation problem with a clear message.
func TestLoadFailClosed(t *testing.T) {
	const root = "root:\n  /:\n    temp: {}\n"
	tests := []struct {
		name    string
		archive string
		want    []string
	}{
		{"root+shell", "-- agent.yaml --\nname: x\n" + root + "tools: [read, shell]\n",
			[]string{`tools: "shell" with an authored root fails closed`}},
		{"root+task", "-- agent.yaml --\nname: x\n" + root + "tools: [task]\n",
			[]string{`tools: "task" with an authored root fails closed`}},
		{"root+readLints", "-- agent.yaml --\nname: x\n" + root + "tools: [readLints]\n",
			[]string{`tools: "readLints" with an authored root fails closed`}},
		{"root+cwd", "-- agent.yaml --\nname: x\n" + root + "local:\n  cwd: .\n",
			[]string{"local.cwd: set together with root fails closed"}},
		{"root+workspaceDir", "-- agent.yaml --\nname: x\n" + root + "local:\n  workspaceDir: .\n",
			[]string{"local.workspaceDir: set together with root fails closed"}},
		{"root+sandbox", "-- agent.yaml --\nname: x\n" + root + "local:\n  sandbox: false\n",
			[]string{"local.sandbox: set together with root fails closed"}},
		{"root+cloud", "-- agent.yaml --\nname: x\n" + root + "runtime: cloud\n",
			[]string{`runtime: root with runtime "cloud" fails closed`}},
		{"root+grokbot", "-- agent.yaml --\nname: x\n" + root + "runtime: grokbot\n",
			[]string{`runtime: root with runtime "grokbot" fails closed`}},
		{"host+cloud", "-- agent.yaml --\nname: x\nruntime: cloud\n",
			[]string{`runtime: "cloud" is not supported: july runs agents locally`}},
		{"host+sandbox", "-- agent.yaml --\nname: x\nlocal:\n  sandbox: true\n",
			[]string{"local.sandbox: july has no process sandbox"}},
		{"tool clash, root", "-- agent.yaml --\nname: x\n" + root + "-- tools/Read.ts --\n",
			[]string{"tools/Read.ts: an authored tool named like the synthesized Read fails closed"}},
		{"tool clash, host", "-- agent.yaml --\nname: x\n-- tools/StrReplace.go --\n-- tools/shell.sh --\n-- tools/Other.go --\n",
			[]string{"tools/StrReplace.go: an authored tool named like the synthesized StrReplace fails closed",
				"tools/shell.sh: an authored tool named like the synthesized Shell fails closed"}},
		{"tool clash, even with tools: []", "-- agent.yaml --\nname: x\ntools: []\n-- tools/SemanticSearch.ts --\n",
			[]string{"tools/SemanticSearch.ts: an authored tool named like the synthesized SemanticSearch fails closed"}},
		{"memory seeds", "-- agent.yaml --\nname: x\n" + root + `workspaceFiles:
  ./memory/x: a
  foo/../memory/y: b
  /memory: c
  memory-notes/ok.md: fine
  memoryx: fine
`,
			[]string{
				`workspaceFiles: "./memory/x" is /memory/x, under the reserved memory/`,
				`workspaceFiles: "/memory" is /memory, under the reserved memory/`,
				`workspaceFiles: "foo/../memory/y" is /memory/y, under the reserved memory/`,
			}},
		{"memory seeds on the host default", "-- agent.yaml --\nname: x\nworkspaceFiles:\n  a/../memory/m.md: x\n",
			[]string{`workspaceFiles: "a/../memory/m.md" is /memory/m.md, under the reserved memory/`}},
		{"tmp seeds under a root", "-- agent.yaml --\nname: x\n" + root + "workspaceFiles:\n  tmp/x: a\n  /tmpfile: fine\n",
			[]string{`workspaceFiles: "tmp/x" is /tmp/x, under the reserved /tmp (turn scratch`}},
		{"bad root entry", "-- agent.yaml --\nname: x\nroot:\n  /:\n    nosuchkind: {}\n",
			[]string{"root: agent.yaml:4: /: "}},
		{"unknown field", "-- agent.yaml --\nname: x\ntool: [read]\n",
			[]string{`agent.yaml: line 2: unknown field "tool"`}},
		{"missing name and instructions", "-- agent.yaml --\ninstructions: nope.md\n",
			[]string{"name: required", "instructions: cannot read nope.md: no such file or directory"}},
		{"host cwd not a directory", "-- agent.yaml --\nname: x\nlocal:\n  cwd: missing\n",
			[]string{"local.cwd: "}},
		{"cwd and workspaceDir", "-- agent.yaml --\nname: x\nlocal:\n  cwd: .\n  workspaceDir: .\n",
			[]string{"local.workspaceDir: set together with local.cwd"}},
		{"everything at once", "-- agent.yaml --\nname: x\n" + root + "tools: [shell, search]\nlocal:\n  cwd: .\n",
			[]string{"local.cwd: set together with root", `tools: "shell"`, `tools: unknown tool "search"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(agentDir(t, tt.archive))
			got := problemsOf(t, err)
			require.Len(t, got, len(tt.want), "problems, want like %q", tt.want)
			for i := range got {
				assert.True(t, strings.HasPrefix(got[i], tt.want[i]), "problem %d = %q, want prefix %q", i, got[i], tt.want[i])
			}
			assert.True(t, strings.HasPrefix(err.Error(), "agent "), "Error() = %q", err)
			assert.Contains(t, err.Error(), "is invalid:\n  ", "Error()")
		})
	}
}

func TestLoadToolsOmittedVersusEmpty(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		want []string
	}{
		{"", hostSeven},
		{"tools: []\n", nil},
	} {
		a, err := Load(agentDir(t, "-- agent.yaml --\nname: x\n"+tt.yaml))
		require.NoError(t, err)
		assert.Equal(t, tt.want, a.Plan.FileTools, "%q: file tools", tt.yaml)
	}
}

// TestHostDefault binds the host disk at local.cwd with Shell in it.
func TestHostDefault(t *testing.T) {
	dir := agentDir(t, `
-- agent.yaml --
name: host
local:
  cwd: work
workspaceFiles:
  seeded.txt: "seeded\n"
-- work/a.txt --
hi
`)
	a, err := Load(dir)
	require.NoError(t, err)
	work := filepath.Join(dir, "work")
	require.False(t, a.Plan.Root, "host default agent = cwd %q plan %+v", a.Cwd, a.Plan)
	require.Equal(t, work, a.Cwd, "host default agent cwd")
	require.Equal(t, append(hostSeven, "Shell"), a.Plan.Served(), "host default agent plan %+v", a.Plan)
	ctx := context.Background()
	s, err := a.Open(ctx, SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	turn, err := s.Turn()
	require.NoError(t, err)
	// An absolute host path under the working directory maps onto the tree.
	r := turn.Call(ctx, "Read", json.RawMessage(`{"path":"`+work+`/a.txt"}`))
	assert.Equal(t, "     1\thi", r.String(), "Read by host path = %+v", r)
	r = turn.Call(ctx, "Shell", json.RawMessage(`{"command":"cat seeded.txt a.txt"}`))
	assert.False(t, r.IsError, "Shell = %+v", r)
	assert.Equal(t, "seeded\nhi", r.String(), "Shell")
	r = turn.Call(ctx, "Write", json.RawMessage(`{"path":"b.txt","contents":"b"}`))
	assert.False(t, r.IsError, "Write = %+v", r)
	data, err := os.ReadFile(filepath.Join(work, "b.txt"))
	assert.NoError(t, err, "host file b.txt")
	assert.Equal(t, "b", string(data), "host file b.txt")
}
