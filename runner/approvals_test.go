package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/approval"
	"github.com/julyfs/julyfs/runner/sessions"
)

func TestApprovalsValidation(t *testing.T) {
	_, err := Load(agentDir(t, `-- agent.yaml --
name: x
root: {/: {temp: {}}}
mcp:
  github: {command: [github-mcp-server, stdio]}
approvals:
  edit: maybe
  edt: ask
  "[x": deny
  StrReplace: ask
  "mcp:github/*": ask
  "mcp:github/create_issue": deny
  "mcp:github": ask
  "mcp:gitlab/*": ask
  "mcp:gitlab/create_issue": deny
  "mcp:git*/delete_repo": deny
  "mcp:nope*/x": deny
  mine: ask
  theirs: ask
-- tools/mine.yaml --
description: an authored tool
inputSchema: {type: object}
command: [cat]
effect: read
`))
	ps := problemsOf(t, err)
	require.Len(t, ps, 8, "%q", ps)
	assert.Equal(t, `approvals.[x: "[x" is not a valid pattern (path.Match syntax: *, ?, [a-z])`, ps[0])
	assert.Equal(t, `approvals.edit: unknown value "maybe": want ask, allow or deny`, ps[1])
	assert.Contains(t, ps[2], `approvals.edt: "edt" names no tool: give a name as tools: has it (read, ls, grep`)
	assert.Equal(t, `approvals.mcp:github: "mcp:github": write mcp:SERVER/TOOL or mcp:SERVER/*`, ps[3])
	// An MCP key naming a server mcp: does not configure fails closed.
	assert.Equal(t, `approvals.mcp:gitlab/*: "mcp:gitlab/*" names the MCP server "gitlab", which mcp: does not configure (it configures github)`, ps[4])
	assert.Equal(t, `approvals.mcp:gitlab/create_issue: "mcp:gitlab/create_issue" names the MCP server "gitlab", which mcp: does not configure (it configures github)`, ps[5])
	assert.Equal(t, `approvals.mcp:nope*/x: "mcp:nope*/x": the pattern "nope*" matches no MCP server mcp: configures (it configures github)`, ps[6])
	assert.Contains(t, ps[7], `approvals.theirs: "theirs" names no tool`, "tools/theirs.yaml does not exist")

	// Without mcp:, every MCP key fails.
	_, err = Load(agentDir(t, "-- agent.yaml --\nname: x\nroot: {/: {temp: {}}}\napprovals: {\"mcp:github/*\": ask}\n"))
	assert.Equal(t, []string{`approvals.mcp:github/*: "mcp:github/*" names the MCP server "github", which mcp: does not configure (it configures none)`}, problemsOf(t, err))
}

func TestApprovalNames(t *testing.T) {
	for name, want := range map[string][]string{
		"StrReplace":                {"StrReplace", "edit"},
		"Write":                     {"Write", "edit"},
		"Delete":                    {"Delete", "delete"},
		"Shell":                     {"Shell", "shell"},
		"ReadTodos":                 {"ReadTodos", "updateTodos"},
		"CreateReminder":            {"CreateReminder", "reminders"},
		"mcp__github__create_issue": {"mcp__github__create_issue", "mcp:github/create_issue"},
		"mcp__github":               {"mcp__github"},
		"authored":                  {"authored"},
	} {
		assert.Equal(t, want, approvalNames(name), "approvalNames(%q)", name)
	}
}

// approvalScript writes twice and deletes once; each result must be what
// the policy makes it.
const approvalScript = `
turns:
  - message: {contains: go}
    replies:
      - calls:
          - {tool: Write, args: {path: /b.txt, contents: "one\n"}}
          - {tool: Delete, args: {path: /a.txt}}
          - {tool: Read, args: {path: /a.txt}}
      - expect:
          - {tool: Write, error: %s}
          - {tool: Delete, error: true, contains: "Delete was not run: the approval policy denies it (agent.yaml approvals: delete: deny)"}
          - {tool: Read, error: false}
        text: done
`

func TestLoopApprovals(t *testing.T) {
	for _, tc := range []struct {
		name     string
		asker    approval.Asker
		writeErr string
		decided  []sessions.ApprovalDecided
	}{
		{"allowed", approval.Flag{Allow: true}, "false", []sessions.ApprovalDecided{
			{CallID: "call_1_1_1", ToolName: "Write", Decision: "allow", By: "flag", Rule: "edit: ask"},
			{CallID: "call_1_1_2", ToolName: "Delete", Decision: "deny", By: "policy", Rule: "delete: deny", Reason: "the approval policy denies it"},
		}},
		{"denied", nil, "true", []sessions.ApprovalDecided{
			{CallID: "call_1_1_1", ToolName: "Write", Decision: "deny", By: "flag", Rule: "edit: ask", Reason: "nobody can be asked in this run"},
			{CallID: "call_1_1_2", ToolName: "Delete", Decision: "deny", By: "policy", Rule: "delete: deny", Reason: "the approval policy denies it"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot: {/: {temp: {/a.txt: \"hi\\n\"}}}\napprovals: {edit: ask, delete: deny, read: allow}\n",
				SessionOptions{Approver: tc.asker})
			l := f.loop(t, fmt.Sprintf(approvalScript, tc.writeErr), LoopOptions{})
			res, err := l.Run(context.Background(), "go")
			require.NoError(t, err)
			assert.Equal(t, "done", res.Text)
			var decided []sessions.ApprovalDecided
			for _, ev := range f.log.Events() {
				if ev.Type == sessions.TypeApprovalDecided {
					var d sessions.ApprovalDecided
					require.NoError(t, json.Unmarshal(ev.Data, &d))
					decided = append(decided, d)
				}
				assert.NotEqual(t, sessions.TypeApprovalRequested, ev.Type, "a flag asks nobody")
			}
			assert.Equal(t, tc.decided, decided)
			_, err = f.sess.FS().Read(context.Background(), "/a.txt")
			assert.NoError(t, err, "the denied Delete did not run")
		})
	}
}

// TestLoopApprovalsDryRun: a dry run stubs a write before the gate, so
// nobody is asked.
func TestLoopApprovalsDryRun(t *testing.T) {
	f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot: {/: {temp: {}}}\napprovals: {\"*\": deny}\n", SessionOptions{DryRun: true})
	l := f.loop(t, `
turns:
  - replies:
      - calls: [{tool: Write, args: {path: /b.txt, contents: x}}]
      - expect: [{tool: Write, error: false, contains: "dry run"}]
        text: done
`, LoopOptions{})
	_, err := l.Run(context.Background(), "go")
	require.NoError(t, err)
	for _, ev := range f.log.Events() {
		assert.NotContains(t, ev.Type, "approval")
	}
}
