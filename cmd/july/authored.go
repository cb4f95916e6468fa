package main

import "github.com/julyfs/julyfs/runner"

// authoredNames lists the agent's authored tools (tools/*.yaml).
func authoredNames(a *runner.Agent) []string {
	var out []string
	for _, d := range a.Authored() {
		out = append(out, d.Name)
	}
	return out
}
