package runner

import (
	"fmt"
	"slices"
)

// This file keeps july run from silently accepting harness builtins that
// nothing serves yet (fail closed): webSearch, webFetch, updateTodos,
// task, readLints, and semSearch on the host default (the native host
// index). Named in tools:, they are refused by july validate and july run.
// Granted by default (tools: omitted), they are simply not given to the
// model, and july validate says so.

// unservedHarness lists the allowlist names no part of july serves yet.
var unservedHarness = []string{AllowWebSearch, AllowWebFetch, AllowUpdateTodos, AllowTask, AllowReadLints}

// RunProblems returns what keeps the agent from running under july run:
// harness builtins named in tools: that nothing serves yet, and
// agent.yaml's model when it does not parse (unless override, a --model
// value, replaces it).
func (a *Agent) RunProblems(override string) []Problem {
	var out []Problem
	for _, name := range a.Config.Tools {
		switch {
		case slices.Contains(unservedHarness, name):
			out = append(out, Problem{Field: "tools", Message: fmt.Sprintf("%q is not served yet: july has no %s tool, and an agent that lists it must not run without it. Remove %q from tools", name, name, name)})
		case name == AllowSemSearch && !a.Plan.Root:
			out = append(out, Problem{Field: "tools", Message: `"semSearch" on the host default is not served yet: it names the harness's host index, which july does not have. Remove "semSearch" from tools, or give the agent a root (where SemanticSearch searches its index)`})
		}
	}
	if override == "" && a.Config.Model != "" {
		if _, err := DescribeModel(a.Config.Model); err != nil {
			out = append(out, Problem{Field: "model", Message: err.Error()})
		}
	}
	return out
}
