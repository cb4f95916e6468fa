package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/julyfs/julyfs/vfs"
)

// agentDir writes a txtar archive into a new directory and returns it.
func agentDir(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range txtar.Parse([]byte(archive)).Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("Load error = %v, want a *ValidationError", err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if a.Config.Name != "notes" || a.Instructions != "Keep notes.\n" || !a.Plan.Root || a.Cwd != "" {
		t.Errorf("Load = %+v", a)
	}
	if !reflect.DeepEqual(a.Plan.Served(), allEight) || !a.Plan.ScratchTmp {
		t.Errorf("plan = %+v", a.Plan)
	}
	ctx := context.Background()
	s, err := a.Open(ctx, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	turn, err := s.Turn()
	if err != nil {
		t.Fatal(err)
	}
	if r := turn.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`)); r.IsError || r.String() != "     1\thi" {
		t.Errorf("Read = %+v", r)
	}
	if r := turn.Call(ctx, "StrReplace", json.RawMessage(`{"path":"/a.txt","old_string":"hi","new_string":"yo"}`)); r.IsError || r.String() != `{"occurrencesModified":1}` {
		t.Errorf("StrReplace = %+v", r)
	}
	// The session's tree is shared by its turns.
	next, err := s.Turn()
	if err != nil {
		t.Fatal(err)
	}
	if r := next.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`)); r.String() != "     1\tyo" {
		t.Errorf("Read in the next turn = %+v", r)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := a.Open(ctx, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t1, err := s.Turn()
	if err != nil {
		t.Fatal(err)
	}
	if r := t1.Call(ctx, "Read", json.RawMessage(`{"path":"/tmp/authored.txt"}`)); !r.IsError || r.String() != "not found: /tmp/authored.txt" {
		t.Errorf("Read of an authored /tmp file = %+v, want it shadowed", r)
	}
	if r := t1.Call(ctx, "Write", json.RawMessage(`{"path":"/tmp/spill.txt","contents":"big"}`)); r.IsError {
		t.Fatalf("Write /tmp = %+v", r)
	}
	if r := t1.Call(ctx, "Read", json.RawMessage(`{"path":"/tmp/spill.txt"}`)); r.String() != "     1\tbig" {
		t.Errorf("Read /tmp in the same turn = %+v", r)
	}
	if r := t1.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`)); r.String() != "     1\ta" {
		t.Errorf("Read /a.txt through the turn = %+v", r)
	}
	t2, err := s.Turn()
	if err != nil {
		t.Fatal(err)
	}
	if r := t2.Call(ctx, "Read", json.RawMessage(`{"path":"/tmp/spill.txt"}`)); !r.IsError {
		t.Errorf("next turn sees the last turn's /tmp: %+v", r)
	}
	if info, err := s.FS().Stat(ctx, "/tmp/spill.txt"); err != nil || info.Kind != vfs.KindMissing {
		t.Errorf("scratch leaked into the root: %+v, %v", info, err)
	}
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
			if len(got) != len(tt.want) {
				t.Fatalf("problems = %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], tt.want[i])
				}
			}
			if !strings.HasPrefix(err.Error(), "agent ") || !strings.Contains(err.Error(), "is invalid:\n  ") {
				t.Errorf("Error() = %q", err)
			}
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
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Plan.FileTools, tt.want) {
			t.Errorf("%q: file tools %v, want %v", tt.yaml, a.Plan.FileTools, tt.want)
		}
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
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if a.Plan.Root || a.Cwd != work || !reflect.DeepEqual(a.Plan.Served(), append(hostSeven, "Shell")) {
		t.Fatalf("host default agent = cwd %q plan %+v", a.Cwd, a.Plan)
	}
	ctx := context.Background()
	s, err := a.Open(ctx, SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	turn, err := s.Turn()
	if err != nil {
		t.Fatal(err)
	}
	// An absolute host path under the working directory maps onto the tree.
	if r := turn.Call(ctx, "Read", json.RawMessage(`{"path":"`+work+`/a.txt"}`)); r.String() != "     1\thi" {
		t.Errorf("Read by host path = %+v", r)
	}
	if r := turn.Call(ctx, "Shell", json.RawMessage(`{"command":"cat seeded.txt a.txt"}`)); r.IsError || r.String() != "seeded\nhi" {
		t.Errorf("Shell = %+v", r)
	}
	if r := turn.Call(ctx, "Write", json.RawMessage(`{"path":"b.txt","contents":"b"}`)); r.IsError {
		t.Errorf("Write = %+v", r)
	}
	if data, err := os.ReadFile(filepath.Join(work, "b.txt")); err != nil || string(data) != "b" {
		t.Errorf("host file b.txt = %q, %v", data, err)
	}
}
