// Command testplugin is the plugin the tests of package plugins build and
// run. Its parameter mode picks the tree:
//
//   - temp (default): a writable temp tree; seeding works (conformance).
//   - local: the host directory dir=, as the local adapter serves it.
//   - hostfiles: the same (the name of the mode the host-file read tests
//     use: vfs/local's readers are plugins.OSFile).
//   - faults: a temp tree with traps: List("/inf") yields forever and
//     Stat("/stats") tells how far it got and whether it stopped (size is
//     the count, etag "running" or "stopped"); Stat("/hang") never
//     returns, ignoring its context (it logs "Stat /hang: hanging" first,
//     so a test can tell the call arrived); Read("/crash") exits the
//     process.
//   - shifty: a temp tree with ReadAt whose etags change at every Stat, so
//     a ranged Read must start over with the whole file.
//   - resizing: a temp tree whose /resizing.bin is rewritten, 4 MiB,
//     4 MiB + 300 KiB or 4 MiB - 300 KiB long in turn, after every Stat of
//     it: a Read must still answer one whole version (byte i = i % 251).
//   - fail: Open fails with "bad parameter" (an error of the tree).
//   - liar: a temp tree holding /a.txt and /b.txt ("lie\n") whose
//     answers break the contract where a path asks for it: List of
//     /order (unsorted), /dup (an entry twice), /escape
//     ("/../../etc/passwd"), /deep (a grandchild), /kind (an unknown
//     kind); Stat of /negative (size -1) and /other (names /etc/passwd);
//     Glob under /escape ("/escape/../x"); Grep of "lie" (hits out of
//     order) and "zero" (line number 0).
//   - hang: a tree whose every call but Open hangs for good, ignoring
//     its context; with hang=open its Open hangs too.
//
// With TESTPLUGIN_HANG set, seeded trees are hang trees (and with
// TESTPLUGIN_HANG=open the seeding hangs).
//
// With TESTPLUGIN_SERVE set in its environment it serves one fixed temp
// tree through plugins.Serve instead.
//
// It prints to standard output before serving, as careless plugins do, to
// show that this cannot break the handshake.
package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

func init() { fmt.Println("testplugin: init prints to stdout") }

func main() {
	fmt.Println("testplugin: main prints to stdout before Serve")
	if os.Getenv("TESTPLUGIN_SERVE") != "" {
		// plugins.Serve: one fixed tree, no parameters.
		t, err := temp.New(map[string][]byte{"/fixed.txt": []byte("fixed\n")})
		if err != nil {
			panic(err)
		}
		plugins.Serve(t)
	}
	if p := os.Getenv("TESTPLUGIN_CPUPROFILE"); p != "" { // a CPU profile of the plugin, for benchmarks
		f, err := os.Create(fmt.Sprintf("%s.%d", p, os.Getpid()))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			time.AfterFunc(10*time.Second, pprof.StopCPUProfile) // the host kills its plugin
		}
	}
	plugins.ServeWith(plugins.ServeOptions{
		Open: open,
		Seed: func(_ context.Context, files map[string][]byte) (vfs.FileSystem, error) {
			switch os.Getenv("TESTPLUGIN_HANG") {
			case "open":
				select {}
			case "":
			default:
				return hang{}, nil
			}
			return temp.New(files)
		},
	})
}

func open(_ context.Context, args map[string]string) (vfs.FileSystem, error) {
	plugins.Logger().Warn("opening a tree", "mode", args["mode"])
	switch args["mode"] {
	case "", "temp":
		return temp.New(nil)
	case "local":
		return local.New(args["dir"])
	case "hostfiles":
		return local.New(args["dir"])
	case "faults":
		t, err := temp.New(map[string][]byte{"/a.txt": []byte("a\n")})
		if err != nil {
			return nil, err
		}
		return &faults{FileSystem: t}, nil
	case "shifty":
		data := make([]byte, 3<<20+7)
		for i := range data {
			data[i] = byte(i % 251)
		}
		t, err := temp.New(map[string][]byte{"/shifty.bin": data})
		if err != nil {
			return nil, err
		}
		return &shifty{FS: t}, nil
	case "resizing":
		t, err := temp.New(map[string][]byte{"/resizing.bin": pattern(4 << 20)})
		if err != nil {
			return nil, err
		}
		return &resizing{FS: t}, nil
	case "fail":
		return nil, errors.New("bad parameter: fail=" + args["why"])
	case "liar":
		t, err := temp.New(map[string][]byte{"/a.txt": []byte("lie\n"), "/b.txt": []byte("lie\n")})
		if err != nil {
			return nil, err
		}
		return &liar{FS: t}, nil
	case "hang":
		if args["hang"] == "open" {
			select {}
		}
		return hang{}, nil
	}
	return nil, fmt.Errorf("unknown mode %q", args["mode"])
}

type faults struct {
	vfs.FileSystem
	yielded atomic.Int64
	stopped atomic.Bool
}

func (f *faults) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	if vfs.Clean(prefix) != "/inf" {
		return f.FileSystem.List(ctx, prefix)
	}
	return func(yield func(vfs.DirEntry, error) bool) {
		f.stopped.Store(false)
		defer f.stopped.Store(true)
		for i := 0; ; i++ {
			if ctx.Err() != nil {
				return
			}
			f.yielded.Add(1)
			if !yield(vfs.DirEntry{Path: fmt.Sprintf("/inf/%012d", i), Kind: vfs.KindFile}, nil) {
				return
			}
		}
	}
}

func (f *faults) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	switch vfs.Clean(path) {
	case "/stats":
		state := "running"
		if f.stopped.Load() {
			state = "stopped"
		}
		return vfs.FileInfo{Path: "/stats", Kind: vfs.KindFile, Size: f.yielded.Load(), ETag: state}, nil
	case "/hang":
		plugins.Logger().Warn("Stat /hang: hanging") // the host logs it: tests know the call arrived
		select {}
	case "/pid":
		return vfs.FileInfo{Path: "/pid", Kind: vfs.KindFile, ETag: strconv.Itoa(os.Getpid())}, nil
	}
	return f.FileSystem.Stat(ctx, path)
}

func (f *faults) Read(ctx context.Context, path string) ([]byte, error) {
	if vfs.Clean(path) == "/crash" {
		os.Exit(3)
	}
	return f.FileSystem.Read(ctx, path)
}

type shifty struct {
	*temp.FS
	stats atomic.Int64
}

func (s *shifty) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	info, err := s.FS.Stat(ctx, path)
	info.ETag += strconv.FormatInt(s.stats.Add(1), 10)
	return info, err
}

func pattern(n int) []byte {
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i % 251)
	}
	return data
}

type resizing struct {
	*temp.FS
	stats atomic.Int64
}

func (r *resizing) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	info, err := r.FS.Stat(ctx, path)
	if err == nil && path == "/resizing.bin" {
		k := r.stats.Add(1)
		if err := r.FS.Write(ctx, path, pattern(4<<20+int(k%3-1)*300<<10)); err != nil {
			return vfs.FileInfo{}, err
		}
	}
	return info, err
}

// liar breaks the contract where its paths ask for it (see the package
// doc).
type liar struct{ *temp.FS }

func entries(es ...vfs.DirEntry) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		for _, e := range es {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func file(p string) vfs.DirEntry { return vfs.DirEntry{Path: p, Kind: vfs.KindFile} }

func (l *liar) List(ctx context.Context, prefix string) iter.Seq2[vfs.DirEntry, error] {
	switch vfs.Clean(prefix) {
	case "/order":
		return entries(file("/order/b"), file("/order/a"))
	case "/dup":
		return entries(file("/dup/a"), file("/dup/a"))
	case "/escape":
		return entries(file("/escape/ok"), file("/../../etc/passwd"))
	case "/deep":
		return entries(file("/deep/a/b"))
	case "/kind":
		return entries(vfs.DirEntry{Path: "/kind/a", Kind: 7})
	}
	return l.FS.List(ctx, prefix)
}

func (l *liar) Stat(ctx context.Context, path string) (vfs.FileInfo, error) {
	switch vfs.Clean(path) {
	case "/negative":
		return vfs.FileInfo{Path: "/negative", Kind: vfs.KindFile, Size: -1}, nil
	case "/other":
		return vfs.FileInfo{Path: "/etc/passwd", Kind: vfs.KindFile, Size: 1}, nil
	}
	return l.FS.Stat(ctx, path)
}

func (l *liar) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	if vfs.Clean(dir) == "/escape" {
		return entries(file("/escape/../x"))
	}
	return l.FS.Glob(ctx, pattern, dir)
}

func (l *liar) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	hits := func(hs ...vfs.GrepResult) iter.Seq2[vfs.GrepResult, error] {
		return func(yield func(vfs.GrepResult, error) bool) {
			for _, h := range hs {
				if !yield(h, nil) {
					return
				}
			}
		}
	}
	switch q.Pattern {
	case "lie":
		return hits(vfs.GrepResult{Path: "/b.txt", LineNumber: 1, Line: "lie"}, vfs.GrepResult{Path: "/a.txt", LineNumber: 1, Line: "lie"})
	case "zero":
		return hits(vfs.GrepResult{Path: "/a.txt", LineNumber: 0, Line: "lie"})
	}
	return l.FS.Grep(ctx, q)
}

// hang answers no call: each blocks for good, whatever its context.
type hang struct{}

func (hang) List(context.Context, string) iter.Seq2[vfs.DirEntry, error] {
	return func(func(vfs.DirEntry, error) bool) { select {} }
}
func (hang) Stat(context.Context, string) (vfs.FileInfo, error) { select {} }
func (hang) Glob(context.Context, string, string) iter.Seq2[vfs.DirEntry, error] {
	return func(func(vfs.DirEntry, error) bool) { select {} }
}
func (hang) Read(context.Context, string) ([]byte, error) { select {} }
func (hang) Grep(context.Context, vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	return func(func(vfs.GrepResult, error) bool) { select {} }
}
func (hang) Write(context.Context, string, []byte) error { select {} }
func (hang) Delete(context.Context, string) error        { select {} }
func (hang) Search(context.Context, vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	return func(func(vfs.SearchResult, error) bool) { select {} }
}
