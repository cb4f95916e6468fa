package runner

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/julyfs/julyfs/runner/approval"
	"github.com/julyfs/julyfs/runner/mcpclient"
	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/runner/web"
)

// This file binds agent.yaml's approvals: to the agent loop (package
// runner/approval has the policy and the decision point): the names a
// tool answers to, the validation of the block, and the gate each loop
// turn's tools go through. july call and july mcp are not gated: their
// caller decides.

// approvalProblems parses agent.yaml's approvals: into a.approvals and
// returns its problems: a value that is not ask, allow or deny, a bad
// pattern, a name that is no tool (a misspelled key must not leave a
// tool unguarded).
func (a *Agent) approvalProblems() []Problem {
	rules, bad := approval.NewRules(a.Config.Approvals)
	a.approvals = rules
	var out []Problem
	for _, k := range slices.Sorted(maps.Keys(a.Config.Approvals)) {
		field := "approvals." + k
		if err := bad[k]; err != nil {
			out = append(out, Problem{Field: field, Message: err.Error()})
			continue
		}
		if mcpclient.IsAllowEntry(k) {
			if _, _, err := mcpclient.CheckEntry(k, a.Config.MCP, true); err != nil {
				out = append(out, Problem{Field: field, Message: err.Error()})
			}
			continue
		}
		if !approval.IsPattern(k) && !a.knownToolName(k) {
			out = append(out, Problem{Field: field, Message: fmt.Sprintf("%q names no tool: give a name as tools: has it (%s), a tool's name (StrReplace), mcp:SERVER/TOOL, an authored tool (tools/NAME.yaml), or a pattern such as mcp:github/*", k, strings.Join(AllowlistNames(), ", "))})
		}
	}
	return out
}

// approvalToolNames are the model-facing names of the tools july itself
// makes, beside the allowlist names, that approvals: accepts.
var approvalToolNames = append(tools.FileToolNames(), tools.NameShell, web.NameWebFetch, web.NameWebSearch,
	NameUpdateTodos, NameReadTodos, NameTask, schedule.NameCreateReminder, schedule.NameListReminders, schedule.NameCancelReminder)

// knownToolName reports whether an exact approvals: key names a tool:
// an allowlist name, a tool july makes, or an authored tool of the
// agent's directory. (mcp:SERVER/TOOL keys are checked against mcp: by
// mcpclient.CheckEntry, and their tools by MCPApprovalProblems.)
func (a *Agent) knownToolName(k string) bool {
	if slices.Contains(allowlistNames, k) || slices.Contains(approvalToolNames, k) {
		return true
	}
	for _, ext := range []string{".yaml", ".yml"} {
		if fi, err := os.Stat(filepath.Join(a.Dir, "tools", k+ext)); err == nil && fi.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// MCPApprovalProblems returns the approvals: keys mcp:SERVER/TOOL (an
// exact tool name) whose server started, as status says, but does not
// list the tool: what july validate, which connects, adds to the checks
// of agent.yaml (a misspelled tool must not leave the real one unguarded).
func (a *Agent) MCPApprovalProblems(status []mcpclient.Status) []Problem {
	var out []Problem
	for _, k := range slices.Sorted(maps.Keys(a.Config.Approvals)) {
		if !mcpclient.IsAllowEntry(k) {
			continue
		}
		server, tool, err := mcpclient.CheckEntry(k, a.Config.MCP, true)
		if err != nil || approval.IsPattern(tool) {
			continue
		}
		for _, st := range status {
			if st.Server == server && st.Err == nil && !slices.Contains(st.Listed, tool) {
				out = append(out, Problem{Field: "approvals." + k, Message: fmt.Sprintf("mcp server %s does not list the tool %q (it lists %s)", server, tool, strings.Join(st.Listed, ", "))})
			}
		}
	}
	return out
}

// approvalNames returns every name the tool called name answers to in
// approvals:: its model-facing name, its allowlist name (StrReplace is
// also edit), and an MCP tool's mcp:SERVER/TOOL.
func approvalNames(name string) []string {
	out := []string{name}
	for _, allow := range allowlistNames {
		if slices.Contains(fileFamily[allow], name) {
			out = append(out, allow)
		}
	}
	switch name {
	case tools.NameShell:
		out = append(out, AllowShell)
	case web.NameWebFetch:
		out = append(out, AllowWebFetch)
	case web.NameWebSearch:
		out = append(out, AllowWebSearch)
	case NameUpdateTodos, NameReadTodos:
		out = append(out, AllowUpdateTodos)
	case NameTask:
		out = append(out, AllowTask)
	case schedule.NameCreateReminder, schedule.NameListReminders, schedule.NameCancelReminder:
		out = append(out, AllowReminders)
	}
	if server, tool, ok := mcpclient.ParseMCPToolName(name); ok {
		out = append(out, "mcp:"+server+"/"+tool)
	}
	return out
}

// ApprovalRules returns agent.yaml's approvals: as parsed, exact names
// first.
func (a *Agent) ApprovalRules() []approval.Rule { return a.approvals.List() }

// HasAsk reports whether agent.yaml's approvals: asks for any tool.
func (a *Agent) HasAsk() bool { return a.approvals.HasAsk() }

// approve returns the turn's tools with agent.yaml's approvals applied:
// the session's gate, made on the first turn (with the "always" answers
// in loop l's log remembered), wraps each tool approvals: asks for or
// denies.
func (s *Session) approve(l *Loop, ts []*tools.Tool) []*tools.Tool {
	if s.agent.approvals.Empty() {
		return ts
	}
	s.hmu.Lock()
	if s.gate == nil {
		s.gate = approval.NewGate(s.agent.approvals, s.opts.Approver, approvalNames)
		if l != nil {
			s.gate.Remember(l.log.Events())
		}
	}
	g := s.gate
	s.hmu.Unlock()
	return g.Wrap(ts)
}

// callContext returns ctx carrying the call c for the approval gate: its
// ids, and how it records its events in the turn.
func (l *Loop) callContext(ctx context.Context, ts *turnState, c model.ToolCall) context.Context {
	if l.s.agent.approvals.Empty() {
		return ctx
	}
	return approval.WithCall(ctx, approval.Call{SessionID: l.log.ID(), CallID: c.ID, Emit: func(typ string, data any) error {
		l.s.emu.Lock()
		defer l.s.emu.Unlock()
		return l.emit(ts, typ, data)
	}})
}
