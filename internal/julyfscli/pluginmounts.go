package julyfscli

import (
	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/rootspec"
)

// delegatePlugins hands c's command to julyfsd when the table mounts a
// plugin and this binary cannot run plugins (julyfs links no gRPC, to
// start fast; julyfsd imports plugins/pluginkind). It returns only on
// failure; nil means this binary serves the table itself.
func delegatePlugins(c *cli.Context, table rootspec.Table) error {
	if !table.NeedsPlugins() || rootspec.PluginsAvailable() {
		return nil
	}
	return ExecCompanion("plugin mounts", commandLine(c))
}
