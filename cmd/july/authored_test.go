package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/runner/sessions"
)

// TestRunAuthoredToolReadsTheMount runs an authored tool in a july run
// --mount turn: it reads, through JULY_TREE, the file the agent wrote a
// step before, and gets the session's id in JULY_SESSION_ID.
func TestRunAuthoredToolReadsTheMount(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		t.Skip("needs /dev/fuse and root")
	}
	agent, state := runAgent(t, `
turns:
  - replies:
      - calls:
          - {tool: Write, args: {path: /notes/a.md, contents: "hello from the agent\n"}}
      - calls:
          - {tool: peek, args: {path: notes/a.md}}
      - expect:
          - {tool: peek, error: false, matches: '^ses_[0-9A-Z]{26} hello from the agent$'}
        text: peeked
`)
	require.NoError(t, os.MkdirAll(filepath.Join(agent, "tools"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(agent, "tools", "peek.yaml"), []byte(`description: Read a file of the mounted tree.
inputSchema: {type: object, required: [path], properties: {path: {type: string}}}
command: [python3, tools/peek.py]
effect: read
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(agent, "tools", "peek.py"), []byte(`import json, os, sys
path = json.load(sys.stdin)["path"]
with open(os.path.join(os.environ["JULY_TREE"], path)) as f:
    print(os.environ["JULY_SESSION_ID"], f.read().strip())
`), 0o644))
	dir := filepath.Join(t.TempDir(), "watch")
	require.NoError(t, os.Mkdir(dir, 0o755))
	t.Cleanup(func() {
		if ok, _ := fusemount.Mounted(dir); ok {
			fusemount.Unmount(dir, true)
		}
	})
	out, errOut, code := julyRun(t, "run", "--mount", dir, agent, "-m", "peek", "--state-root", state)
	require.Equal(t, 0, code, "stderr: %s", errOut)
	assert.Equal(t, "peeked\n", out)
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	_, events, _, err := sessions.New(state).Read(list[0].ID)
	require.NoError(t, err)
	var outputs []string
	for _, ev := range events {
		if ev.Type == sessions.TypeActionResult {
			var r sessions.ActionResult
			require.NoError(t, json.Unmarshal(ev.Data, &r))
			outputs = append(outputs, r.Output)
		}
	}
	assert.Equal(t, []string{"Wrote contents to /notes/a.md", list[0].ID + " hello from the agent"}, outputs)
}
