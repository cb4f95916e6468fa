package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.NoError(t, err, "shell: %s", out)
	assert.Equal(t, want, out, "shell")
	data, err := os.ReadFile(filepath.Join(agent, "tree", "b.txt"))
	assert.NoError(t, err, "write through the mount reaching the host")
	assert.Equal(t, "beta\n", string(data), "write through the mount reached the host as")
	var ustderr bytes.Buffer
	c := run(context.Background(), []string{"julyfs", "unmount", dir}, nil, &bytes.Buffer{}, &ustderr)
	require.Equal(t, 0, c, "julyfs unmount: %s", ustderr.String())
	c = r.wait(t, "julyfs unmount")
	assert.Equal(t, 0, c, "julyfs mount exit after unmount: %s", r.stderr.String())
}
