package runner

import (
	"slices"

	"github.com/julyfs/julyfs/runner/web"
)

// This file keeps july run from silently accepting harness builtins that
// nothing serves (fail closed): readLints (july has no language service)
// and semSearch on the host default (the native host index). Named in
// tools:, they are refused by july validate and july run. Granted by
// default (tools: omitted), they are simply not given to the model, and
// july validate says so. The other builtins are served by the agent loop
// (harnesstools.go).

// unservedHarness lists the allowlist names no part of july serves.
var unservedHarness = []string{AllowReadLints}

// Unserved returns the harness builtins in the plan that july run leaves
// out.
func (p Plan) Unserved() []string {
	var out []string
	for _, n := range p.Harness {
		if slices.Contains(unservedHarness, n) || (n == AllowSemSearch && !p.Root) {
			out = append(out, n)
		}
	}
	return out
}

// RunProblems returns what keeps the agent from running under july run:
// harness builtins named in tools: that nothing serves yet, and
// agent.yaml's model when it does not parse (unless override, a --model
// value, replaces it).
func (a *Agent) RunProblems(override string) []Problem {
	var out []Problem
	for _, name := range a.Config.Tools {
		switch {
		case name == AllowReadLints:
			out = append(out, Problem{Field: "tools", Message: `"readLints" is not served: july has no language service to run diagnostics, and an agent that lists it must not run without it. Remove "readLints" from tools`})
		case name == AllowSemSearch && !a.Plan.Root:
			out = append(out, Problem{Field: "tools", Message: `"semSearch" on the host default is not served yet: it names the harness's host index, which july does not have. Remove "semSearch" from tools, or give the agent a root (where SemanticSearch searches its index)`})
		}
	}
	if s := a.Config.Web.Search; s != nil && slices.Contains(a.Plan.Harness, AllowWebSearch) {
		if _, err := web.NewSearcher(*s, nil); err != nil {
			out = append(out, Problem{Field: "web.search", Message: err.Error()})
		}
	}
	if override == "" && a.Config.Model != "" {
		if _, err := DescribeModel(a.Config.Model); err != nil {
			out = append(out, Problem{Field: "model", Message: err.Error()})
		}
	}
	return out
}
