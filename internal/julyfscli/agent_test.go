package julyfscli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentFixture writes an agent whose agent.yaml has the runner's keys
// besides root: (a local tree at /, a read-only /docs).
func agentFixture(t *testing.T, yaml string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"agent.yaml":      yaml,
		"tree/a.txt":      "alpha\n",
		"docs/guide.md":   "read the guide\n",
		"instructions.md": "Be brief.\n",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return dir
}

func runJulyfs(args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"julyfs"}, args...), strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestAgentFlag(t *testing.T) {
	dir := agentFixture(t, "name: p\nmodel: claude-sonnet-4-5\ntools: [read, grep]\nindex: true\nroot:\n  /:\n    local: ./tree\n  /docs:\n    local: ./docs\n    ro: true\n")
	cases := []struct {
		args []string
		out  string
	}{
		{[]string{"ls", "--agent", dir, "/"}, "/a.txt\n/docs\n"},
		{[]string{"cat", "--agent", dir, "/docs/guide.md"}, "read the guide\n"},
		{[]string{"grep", "--agent", dir, "guide", "/"}, "/docs/guide.md:1:read the guide\n"},
		{[]string{"glob", "--agent", dir, "**/*.md"}, "/docs/guide.md\n"},
	}
	for _, c := range cases {
		out, errOut, code := runJulyfs(c.args...)
		assert.Equal(t, 0, code, "%v: %s", c.args, errOut)
		assert.Equal(t, c.out, out, "%v", c.args)
	}
	_, errOut, code := runJulyfs("write", "--agent", dir, "/docs/new.md")
	assert.Equal(t, 1, code)
	assert.Equal(t, "read-only mount: /docs/new.md\n", errOut, "the read-only parts stay read-only")

	for _, c := range []struct {
		yaml, want string
	}{
		{"name: h\n", "has no root: (it runs on the host disk)"},
		{"name: j\nroot:\n  /:\n    local: ./s/{sessionId}\n", "has a live root ({sessionId} or {agentName})"},
		{"name: x\nroot:\n  /:\n    local: ./missing\n", "directory "},
	} {
		d := agentFixture(t, c.yaml)
		_, errOut, code := runJulyfs("ls", "--agent", d, "/")
		assert.Equal(t, 1, code, c.yaml)
		assert.Contains(t, errOut, c.want)
	}
	_, errOut, code = runJulyfs("ls", "--agent", t.TempDir(), "/")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "agent.yaml: no such file or directory")
	_, errOut, code = runJulyfs("ls", "--agent", dir, "--config", "x.yaml", "/")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--agent and --config both name the mount table")
}
