package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/sessions"
)

// cowSearchScript writes a new file, rewrites a file of the tree and
// deletes another, then searches for each one's words; a second turn
// (another process) searches again.
const cowSearchScript = `
turns:
  - replies:
      - calls:
          - {tool: Write, args: {path: /new.txt, contents: "the quokka smiles\n"}}
          - {tool: Write, args: {path: /a.txt, contents: "a platypus now\n"}}
          - {tool: Delete, args: {path: /old.txt}}
      - calls:
          - {tool: SemanticSearch, args: {query: quokka}}
          - {tool: SemanticSearch, args: {query: platypus}}
          - {tool: SemanticSearch, args: {query: wombat}}
          - {tool: SemanticSearch, args: {query: echidna}}
          - {tool: SemanticSearch, args: {query: kept}}
      - text: one
  - replies:
      - calls:
          - {tool: SemanticSearch, args: {query: quokka}}
          - {tool: SemanticSearch, args: {query: wombat}}
      - text: two
`

// TestCowSemanticSearch: SemanticSearch in a copy-on-write session
// searches what the layer shows: the layer's new and rewritten files by
// their new words, not a deleted file nor a rewritten file's old words,
// and the tree's untouched files; in the next process too. The tree and
// its index are not written.
func TestCowSemanticSearch(t *testing.T) {
	agent, state := runAgent(t, cowSearchScript)
	yaml := filepath.Join(agent, "agent.yaml")
	data, err := os.ReadFile(yaml)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(yaml, append(data, "index: true\n"...), 0o644))
	treeDir := filepath.Join(agent, "tree")
	for name, text := range map[string]string{"a.txt": "an echidna once\n", "old.txt": "a wombat\n", "kept.txt": "kept as it was\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(treeDir, name), []byte(text), 0o644))
	}
	original := tree(t, treeDir)
	run := func(args ...string) {
		t.Helper()
		_, errOut, code := julyRun(t, append(args, "--state-root", state)...)
		require.Equal(t, 0, code, "july %s: %s", strings.Join(args, " "), errOut)
	}
	run("run", agent, "--cow", "-m", "go")
	list, err := sessions.New(state).List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	id := list[0].ID
	run("run", agent, "--session", id, "-m", "again")

	_, events, _, err := sessions.New(state).Read(id)
	require.NoError(t, err)
	var out []string
	for _, ev := range events {
		if ev.Type != sessions.TypeActionResult {
			continue
		}
		var d sessions.ActionResult
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		if d.ToolName == "SemanticSearch" {
			require.False(t, d.IsError, "search failed: %s", d.Output)
			out = append(out, d.Output)
		}
	}
	require.Len(t, out, 7)
	assert.Contains(t, out[0], "/new.txt", "a new file of the layer is found")
	assert.Contains(t, out[1], "/a.txt", "a rewritten file is found by its new words")
	assert.NotContains(t, out[2], "old.txt", "a deleted file is not found")
	assert.NotContains(t, out[3], "a.txt", "a rewritten file is not found by its old words")
	assert.Contains(t, out[4], "/kept.txt", "the tree's untouched file is found")
	assert.Contains(t, out[5], "/new.txt", "the next process finds the layer's file")
	assert.NotContains(t, out[6], "old.txt", "nor the deleted one")
	assert.Equal(t, original, tree(t, treeDir), "the tree is untouched")
}
