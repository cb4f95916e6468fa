package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/julyfs/julyfs/runner/mcpclient"
	"github.com/julyfs/julyfs/runner/tools"
)

// The allowlist names an agent's tools: may list.
const (
	AllowRead        = "read"
	AllowLS          = "ls"
	AllowGrep        = "grep"
	AllowGlob        = "glob"
	AllowEdit        = "edit"
	AllowDelete      = "delete"
	AllowSemSearch   = "semSearch"
	AllowShell       = "shell"
	AllowWebSearch   = "webSearch"
	AllowWebFetch    = "webFetch"
	AllowUpdateTodos = "updateTodos"
	AllowTask        = "task"
	AllowReadLints   = "readLints"
	// AllowReminders grants CreateReminder, ListReminders and
	// CancelReminder (reminders.go); never granted by an omitted tools:.
	AllowReminders = "reminders"
)

// AllowlistNames lists every name tools: accepts, in documentation order.
func AllowlistNames() []string { return slices.Clone(allowlistNames) }

var allowlistNames = []string{
	AllowRead, AllowLS, AllowGrep, AllowGlob, AllowEdit, AllowDelete, AllowSemSearch,
	AllowShell, AllowWebSearch, AllowWebFetch, AllowUpdateTodos, AllowTask, AllowReadLints, AllowReminders,
}

// HarnessReadTodos is the todo reader a default harness grants alongside
// updateTodos; it is not an allowlist name of its own.
const HarnessReadTodos = "readTodos"

// fileFamily maps a file-family allowlist name onto the tools synthesized
// from the bound tree. semSearch synthesizes SemanticSearch only over an
// authored root; on the host default it keeps the native host index.
var fileFamily = map[string][]string{
	AllowRead:      {tools.NameRead},
	AllowLS:        {tools.NameLS},
	AllowGrep:      {tools.NameGrep},
	AllowGlob:      {tools.NameGlob},
	AllowEdit:      {tools.NameWrite, tools.NameStrReplace},
	AllowDelete:    {tools.NameDelete},
	AllowSemSearch: {tools.NameSemanticSearch},
}

// harnessOrder orders Plan.Harness.
var harnessOrder = []string{AllowSemSearch, AllowWebSearch, AllowWebFetch, AllowUpdateTodos, HarnessReadTodos, AllowTask, AllowReadLints, AllowReminders}

// Plan is what an agent's model is given, worked out from whether it has
// an authored root and from its tools: allowlist (the spec's allowlist
// table, row by row).
type Plan struct {
	// Root reports an authored root; false is the host default.
	Root bool
	// FileTools are the tools synthesized from the bound tree, in
	// tools.FileToolNames order.
	FileTools []string
	// Shell reports the host Shell tool (host default only).
	Shell bool
	// Harness lists the harness builtins the plan grants (webSearch,
	// webFetch, updateTodos, readTodos, task, readLints, and semSearch for
	// the native host index). They belong to the agent loop's harness:
	// july call and july mcp do not serve them.
	Harness []string
	// MCP reports that "mcp" is granted: any tool rides the path.
	MCP bool
	// ScratchTmp reports that each turn binds an empty /tmp over the
	// authored root, for the web tools' spilled output.
	ScratchTmp bool
}

// Served returns the names of the tools july itself serves: the
// synthesized file tools and, on the host default, Shell.
func (p Plan) Served() []string {
	out := slices.Clone(p.FileTools)
	if p.Shell {
		out = append(out, tools.NameShell)
	}
	return out
}

// PlanTools works out the plan for an agent with (root) or without an
// authored root and the allowlist list (nil: tools: omitted). It returns
// every problem with the combination: unknown names, and the fail-closed
// rows (an authored root with shell, task or readLints).
//
// The rows: with tools omitted, the host default gets the seven host-disk
// file tools (no synthesized SemanticSearch), Shell and the host harness
// (native semSearch, webSearch, webFetch, updateTodos, readTodos, task,
// readLints); an authored root gets all eight synthesized tools plus
// webSearch, webFetch, updateTodos and readTodos, and a /tmp scratch. A
// list narrows: file-family names pick file tools ("edit" is Write and
// StrReplace), harness names pick builtins, [] is nothing. Under an
// authored root a list with no file-family name keeps all eight file tools
// (the table's ["updateTodos"] and ["webSearch"] rows), and /tmp scratch is
// bound when webSearch or webFetch is granted. On the host default a list
// is the whole allowlist: ["webSearch"] has no file tools.
func PlanTools(root bool, list []string) (Plan, []Problem) {
	p := Plan{Root: root}
	var problems []Problem
	if list == nil {
		if root {
			p.FileTools = tools.FileToolNames()
			p.Harness = []string{AllowWebSearch, AllowWebFetch, AllowUpdateTodos, HarnessReadTodos}
			p.ScratchTmp = true
		} else {
			p.FileTools = slices.DeleteFunc(tools.FileToolNames(), func(n string) bool { return n == tools.NameSemanticSearch })
			p.Shell = true
			p.Harness = []string{AllowSemSearch, AllowWebSearch, AllowWebFetch, AllowUpdateTodos, HarnessReadTodos, AllowTask, AllowReadLints}
		}
		p.MCP = true
		return p, nil
	}
	files := map[string]bool{}
	harness := map[string]bool{}
	anyFile := false
	for _, name := range list {
		switch {
		case fileFamily[name] != nil:
			anyFile = true
			if name == AllowSemSearch && !root {
				harness[name] = true // the native host index
				continue
			}
			for _, t := range fileFamily[name] {
				files[t] = true
			}
		case name == AllowShell || name == AllowTask || name == AllowReadLints:
			if root {
				problems = append(problems, Problem{Field: "tools", Message: failClosedTool(name)})
				continue
			}
			if name == AllowShell {
				p.Shell = true
			} else {
				harness[name] = true
			}
		case name == AllowWebSearch || name == AllowWebFetch || name == AllowUpdateTodos || name == AllowReminders:
			harness[name] = true
		case mcpclient.IsAllowEntry(name):
			// An MCP server's tools: checked against mcp: (mcp.go).
		default:
			problems = append(problems, Problem{Field: "tools", Message: unknownTool(name)})
		}
	}
	if root && !anyFile && len(list) > 0 {
		for _, t := range tools.FileToolNames() {
			files[t] = true
		}
	}
	for _, t := range tools.FileToolNames() {
		if files[t] {
			p.FileTools = append(p.FileTools, t)
		}
	}
	for _, h := range harnessOrder {
		if harness[h] {
			p.Harness = append(p.Harness, h)
		}
	}
	p.ScratchTmp = root && (harness[AllowWebSearch] || harness[AllowWebFetch])
	p.MCP = len(p.FileTools) > 0 || p.Shell || len(p.Harness) > 0
	return p, problems
}

func failClosedTool(name string) string {
	switch name {
	case AllowShell:
		return `"shell" with an authored root fails closed: a shell would reach the host disk around the root. Remove "shell" from tools, or remove root to run on the host disk`
	case AllowTask:
		return `"task" with an authored root fails closed: a subagent would get the host toolset, not this root. Remove "task" from tools, or remove root`
	default:
		return `"readLints" with an authored root fails closed: diagnostics are not a FileSystem verb, and the host language service would read the host disk. Remove "readLints" from tools, or remove root`
	}
}

func unknownTool(name string) string {
	if name == "search" {
		return `unknown tool "search": the allowlist name for SemanticSearch is "semSearch"`
	}
	for _, n := range allowlistNames {
		if strings.EqualFold(n, name) {
			return fmt.Sprintf("unknown tool %q: did you mean %q?", name, n)
		}
	}
	if name == tools.NameWrite || name == tools.NameStrReplace || strings.EqualFold(name, "write") {
		return fmt.Sprintf("unknown tool %q: Write and StrReplace are allowed by %q", name, AllowEdit)
	}
	return fmt.Sprintf("unknown tool %q; the allowlist names are %s", name, strings.Join(allowlistNames, ", "))
}
