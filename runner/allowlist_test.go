package runner

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

var (
	allEight  = []string{"Read", "LS", "Grep", "Glob", "Write", "StrReplace", "Delete", "SemanticSearch"}
	hostSeven = []string{"Read", "LS", "Grep", "Glob", "Write", "StrReplace", "Delete"}
)

// TestPlanToolsTable checks the spec's allowlist table row by row, then
// the narrowing rules the table implies.
func TestPlanToolsTable(t *testing.T) {
	tests := []struct {
		row   string
		root  bool
		tools []string // nil: omitted
		want  Plan
	}{
		{
			row: "root omitted, tools omitted: the seven host-disk file tools, no SemanticSearch; host shell, web and native semSearch stay",
			want: Plan{FileTools: hostSeven, Shell: true, MCP: true,
				Harness: []string{"semSearch", "webSearch", "webFetch", "updateTodos", "readTodos", "task", "readLints"}},
		},
		{
			row:   `root omitted, ["read", "shell"]: synthesized Read + shell + mcp`,
			tools: []string{"read", "shell"},
			want:  Plan{FileTools: []string{"Read"}, Shell: true, MCP: true},
		},
		{
			row:   "root omitted, []: no synthesized file tools",
			tools: []string{},
			want:  Plan{},
		},
		{
			row:  "root set, tools omitted: all eight + webSearch + webFetch + updateTodos + readTodos + mcp, /tmp scratch",
			root: true,
			want: Plan{Root: true, FileTools: allEight, MCP: true, ScratchTmp: true,
				Harness: []string{"webSearch", "webFetch", "updateTodos", "readTodos"}},
		},
		{
			row:   `root set, ["updateTodos"]: all eight + updateTodos + mcp`,
			root:  true,
			tools: []string{"updateTodos"},
			want:  Plan{Root: true, FileTools: allEight, Harness: []string{"updateTodos"}, MCP: true},
		},
		{
			row:   `root set, ["semSearch"]: synthesized SemanticSearch + mcp; native host index off`,
			root:  true,
			tools: []string{"semSearch"},
			want:  Plan{Root: true, FileTools: []string{"SemanticSearch"}, MCP: true},
		},
		{
			row:   "root set, []: no synthesized file tools, legal and empty",
			root:  true,
			tools: []string{},
			want:  Plan{Root: true},
		},
		{
			row:   `root set, ["webSearch"]: all eight + webSearch + mcp, /tmp scratch`,
			root:  true,
			tools: []string{"webSearch"},
			want:  Plan{Root: true, FileTools: allEight, Harness: []string{"webSearch"}, MCP: true, ScratchTmp: true},
		},
		{
			row:   `root set, ["webFetch"]: all eight + webFetch + mcp, /tmp scratch`,
			root:  true,
			tools: []string{"webFetch"},
			want:  Plan{Root: true, FileTools: allEight, Harness: []string{"webFetch"}, MCP: true, ScratchTmp: true},
		},
		// Narrowing beyond the table's rows.
		{
			row:   `["edit"] synthesizes Write and StrReplace`,
			root:  true,
			tools: []string{"edit"},
			want:  Plan{Root: true, FileTools: []string{"Write", "StrReplace"}, MCP: true},
		},
		{
			row:   `host default ["semSearch"] keeps the native host index and synthesizes nothing`,
			tools: []string{"semSearch"},
			want:  Plan{Harness: []string{"semSearch"}, MCP: true},
		},
		{
			row:   `host default ["webSearch"]: the list is the whole allowlist, no file tools`,
			tools: []string{"webSearch"},
			want:  Plan{Harness: []string{"webSearch"}, MCP: true},
		},
		{
			row:   "root set, file names and a web tool: only those file tools, with scratch",
			root:  true,
			tools: []string{"read", "grep", "webFetch", "read"},
			want:  Plan{Root: true, FileTools: []string{"Read", "Grep"}, Harness: []string{"webFetch"}, MCP: true, ScratchTmp: true},
		},
		{
			row:   "host default may list task and readLints (native harness)",
			tools: []string{"ls", "task", "readLints", "delete"},
			want:  Plan{FileTools: []string{"LS", "Delete"}, Harness: []string{"task", "readLints"}, MCP: true},
		},
	}
	for _, tt := range tests {
		got, problems := PlanTools(tt.root, tt.tools)
		assert.Empty(t, problems, "%s: problems", tt.row)
		assert.Equal(t, tt.want, got, "%s: PlanTools(%v, %q)", tt.row, tt.root, tt.tools)
	}
}

// TestPlanToolsFailClosed checks every fail-closed allowlist row and the
// unknown-name messages.
func TestPlanToolsFailClosed(t *testing.T) {
	tests := []struct {
		root  bool
		tools []string
		want  []string // substrings, one per problem
	}{
		{true, []string{"shell"}, []string{`"shell" with an authored root fails closed`}},
		{true, []string{"task"}, []string{`"task" with an authored root fails closed: a subagent would get the host toolset`}},
		{true, []string{"readLints"}, []string{`"readLints" with an authored root fails closed: diagnostics are not a FileSystem verb`}},
		{true, []string{"read", "shell", "task", "readLints"}, []string{`"shell"`, `"task"`, `"readLints"`}},
		{true, []string{"search"}, []string{`unknown tool "search": the allowlist name for SemanticSearch is "semSearch"`}},
		{false, []string{"Read"}, []string{`unknown tool "Read": did you mean "read"?`}},
		{false, []string{"write"}, []string{`unknown tool "write": Write and StrReplace are allowed by "edit"`}},
		{false, []string{"mcp"}, []string{`unknown tool "mcp"; the allowlist names are read, ls, grep, glob, edit, delete, semSearch, shell, webSearch, webFetch, updateTodos, task, readLints, reminders`}},
	}
	for _, tt := range tests {
		_, problems := PlanTools(tt.root, tt.tools)
		if !assert.Len(t, problems, len(tt.want), "PlanTools(%v, %q) problems", tt.root, tt.tools) {
			continue
		}
		for i, p := range problems {
			assert.Equal(t, "tools", p.Field, "PlanTools(%v, %q) problem %d = %q", tt.root, tt.tools, i, p)
			assert.Contains(t, p.Message, tt.want[i], "PlanTools(%v, %q) problem %d", tt.root, tt.tools, i)
		}
	}
	// The same names are fine on the host default.
	for _, name := range []string{"shell", "task", "readLints"} {
		_, problems := PlanTools(false, []string{name})
		assert.Empty(t, problems, "host default %q", name)
	}
}
