// Command localplugin serves the host directory dir= through a plugin,
// for bench/plugins: the same tree the benchmark reads in process, with
// readers on the host files themselves (plugins.OSFile), as a plugin over
// host files would serve it.
//
// With $LOCALPLUGIN_CPUPROFILE set it writes a CPU profile of its first
// $LOCALPLUGIN_CPUSECONDS seconds (default 20; the host kills its plugin,
// so it cannot wait for the end) to $LOCALPLUGIN_CPUPROFILE.PID.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

func main() {
	if p := os.Getenv("LOCALPLUGIN_CPUPROFILE"); p != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", p, os.Getpid()))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			secs, err := strconv.Atoi(os.Getenv("LOCALPLUGIN_CPUSECONDS"))
			if err != nil || secs <= 0 {
				secs = 20
			}
			time.AfterFunc(time.Duration(secs)*time.Second, func() { pprof.StopCPUProfile(); f.Close() })
		}
	}
	plugins.ServeWith(plugins.ServeOptions{Open: func(_ context.Context, args map[string]string) (vfs.FileSystem, error) {
		return local.New(args["dir"])
	}})
}
