package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestMountAgent mounts an agent's root from its agent.yaml: the same
// mounts, the read-only part read-only.
func TestMountAgent(t *testing.T) {
	agent := t.TempDir()
	for name, data := range map[string]string{
		"agent.yaml":    "name: p\nmodel: claude-sonnet-4-5\ntools: [read, edit]\nroot:\n  /:\n    local: ./tree\n  /docs:\n    local: ./docs\n    ro: true\n",
		"tree/a.txt":    "alpha\n",
		"docs/guide.md": "read the guide\n",
	} {
		p := filepath.Join(agent, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	os.Mkdir(dir, 0o755)
	r := startMount(t, dir, "--agent", agent)

	out, err := shell(t, `ls "$M"; cat "$M/docs/guide.md"; grep -rn alpha "$M"; echo beta > "$M/b.txt"
if (echo x > "$M/docs/new.md") 2>/dev/null; then echo wrote to the read-only docs; fi`, "M="+dir)
	want := "a.txt\ndocs\nread the guide\n" + dir + "/a.txt:1:alpha\n"
	if err != nil || out != want {
		t.Errorf("shell: %v\n%s\nwant\n%s", err, out, want)
	}
	if data, err := os.ReadFile(filepath.Join(agent, "tree", "b.txt")); err != nil || string(data) != "beta\n" {
		t.Errorf("write through the mount reached the host as %q, %v", data, err)
	}
	var ustderr bytes.Buffer
	if c := run(context.Background(), []string{"julyfs", "unmount", dir}, nil, &bytes.Buffer{}, &ustderr); c != 0 {
		t.Fatalf("julyfs unmount = %d: %s", c, ustderr.String())
	}
	if c := r.wait(t, "julyfs unmount"); c != 0 {
		t.Errorf("julyfs mount exited %d after unmount: %s", c, r.stderr.String())
	}
}
