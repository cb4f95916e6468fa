package runner

// PluginProblems checks the plugin mounts of the authored root without
// starting their plugins (rootspec.Table.CheckPlugins: the binary is
// there and executable, a pinned sha256 matches). july validate reports
// them as problems; binding the tree does not fail on them (such a mount
// answers its calls with the start error, the others serve). Nil in a
// program without plugin support.
func (a *Agent) PluginProblems() []Problem {
	if a.root == nil {
		return nil
	}
	var out []Problem
	for _, err := range a.root.table.CheckPlugins() {
		out = append(out, Problem{Field: "root", Message: err.Error()})
	}
	return out
}
