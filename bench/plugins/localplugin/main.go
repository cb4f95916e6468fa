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
	"syscall"
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
		return newHostFiles(args["dir"])
	}})
}

// hostFiles is a local tree whose OpenFile hands out readers on the host
// file itself (plugins.OSFile), so the host reads a large file straight
// from the plugin's descriptor. os.Root keeps the open inside dir, as
// vfs/local does; anything it will not open as a regular file (a
// directory, a missing path, a link out of the tree) goes to
// local.OpenFile, whose error or reader is the answer.
type hostFiles struct {
	*local.FS
	root *os.Root
}

func newHostFiles(dir string) (*hostFiles, error) {
	fsys, err := local.New(dir)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(fsys.Root())
	if err != nil {
		fsys.Close()
		return nil, err
	}
	return &hostFiles{FS: fsys, root: root}, nil
}

func (h *hostFiles) OpenFile(ctx context.Context, path string) (vfs.FileReader, error) {
	p := vfs.Clean(path)
	if p != "/" {
		// O_NONBLOCK: a FIFO must not block the open.
		f, err := h.root.OpenFile(p[1:], os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				return &osFile{f: f, size: fi.Size()}, nil
			}
			f.Close()
		}
	}
	return h.FS.OpenFile(ctx, path)
}

// osFile is a host file open for reading.
type osFile struct {
	f    *os.File
	size int64
}

func (o *osFile) ReadAt(p []byte, off int64) (int, error) { return o.f.ReadAt(p, off) }
func (o *osFile) Size() int64                             { return o.size }
func (o *osFile) Close() error                            { return o.f.Close() }
func (o *osFile) File() *os.File                          { return o.f }
