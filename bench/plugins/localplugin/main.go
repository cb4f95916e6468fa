// Command localplugin serves the host directory dir= through a plugin,
// for bench/plugins: the same tree the benchmark reads in process.
package main

import (
	"context"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

func main() {
	plugins.ServeWith(plugins.ServeOptions{Open: func(_ context.Context, args map[string]string) (vfs.FileSystem, error) {
		return local.New(args["dir"])
	}})
}
