// Command plugins compares each verb in process and through a plugin on
// the same host tree, in wall time and in CPU time (this process plus the
// plugin process, whose CPU time is counted once it has exited), which a
// shared machine disturbs far less than wall time.
//
//	go build -o /tmp/localplugin ./bench/plugins/localplugin
//	go run ./bench/plugins -plugin /tmp/localplugin -n 5
//
// -beside measures the in-process side while an idle plugin of the same
// tree runs in this process, as in a host serving both kinds of trees
// (the plugin's connection and goroutines change the host's garbage
// collection; see docs/perf/plugins.md). -gcstats prints this process's
// GC cycles, GC CPU and page faults per operation of each measure.
//
// -cpuprofile FILE writes this process's CPU profile while it runs the
// first measured verb through the plugin (nothing of the set-up or of the
// in-process side; pick the verb with -only); the plugin writes
// its own when $LOCALPLUGIN_CPUPROFILE is set (see localplugin). -only
// REGEXP picks verbs. CPU time is shown for both processes: "CPU" is
// their sum, "host + plugin" its parts.
//
// It makes its own tree (100,000 empty files, a 1 MiB and a 64 MiB file)
// in a temporary directory and uses $(go env GOROOT)/src for Grep and
// Glob.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

func main() {
	pluginPath := flag.String("plugin", "", "the localplugin binary")
	n := flag.Int("n", 5, "operations per measure")
	flag.BoolVar(&noShared, "no-shared", false, "move file contents in gRPC chunks, never through memory files")
	cpuprofile := flag.String("cpuprofile", "", "write this process's CPU profile to `file`")
	flag.BoolVar(&gcStats, "gcstats", false, "print this process's GC cycles, GC CPU and page faults per operation of each measure (to standard error)")
	beside := flag.Bool("beside", false, "measure the in-process side while an idle plugin of the same tree runs in this process, as in a host serving both")
	only := flag.String("only", "", "measure only the verbs matching `regexp`")
	flag.Parse()
	if *pluginPath == "" {
		log.Fatal("-plugin is required")
	}
	onlyRE, err := regexp.Compile(*only)
	must(err)
	var profile *os.File
	if *cpuprofile != "" {
		profile, err = os.Create(*cpuprofile)
		must(err)
	}
	dir, err := os.MkdirTemp("", "bench-plugins")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	must(os.Mkdir(filepath.Join(dir, "many"), 0o755))
	for i := range 100_000 {
		must(os.WriteFile(filepath.Join(dir, "many", fmt.Sprintf("f%06d", i)), nil, 0o644))
	}
	must(os.WriteFile(filepath.Join(dir, "big1"), make([]byte, 1<<20), 0o644))
	must(os.WriteFile(filepath.Join(dir, "big64"), make([]byte, 64<<20), 0o644))
	// Write the tree out now: its dirty pages would otherwise be flushed
	// half a minute later, in the middle of some measure.
	syscall.Sync()
	goroot := filepath.Join(runtime.GOROOT(), "src")
	// The buffer of the Write verb is made when that verb runs (it runs
	// last): a 64 MiB live buffer would spare the in-process side of the
	// other verbs nearly all garbage collection, which neither a real host
	// nor the plugin process gets.
	big := sync.OnceValue(func() []byte { return make([]byte, 64<<20) })

	type verb struct {
		name string
		dir  string
		reps int // times -n, so short operations outweigh the plugin's start
		run  func(ctx context.Context, fsys vfs.FileSystem) (int, error)
	}
	drain := func(seq func(func(vfs.DirEntry, error) bool)) (int, error) {
		n := 0
		for _, err := range seq {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	read := func(ctx context.Context, f vfs.FileSystem, p string) (int, error) {
		data, err := f.Read(ctx, p)
		return len(data), err
	}
	verbs := []verb{
		{"List 100,000 entries", dir, 1, func(ctx context.Context, f vfs.FileSystem) (int, error) { return drain(f.List(ctx, "/many")) }},
		{"Read 1 MiB", dir, 20, func(ctx context.Context, f vfs.FileSystem) (int, error) { return read(ctx, f, "/big1") }},
		{"Read 64 MiB", dir, 1, func(ctx context.Context, f vfs.FileSystem) (int, error) { return read(ctx, f, "/big64") }},
		{"Grep TODO\\( GOROOT/src", goroot, 1, func(ctx context.Context, f vfs.FileSystem) (int, error) {
			n := 0
			for _, err := range f.Grep(ctx, vfs.GrepQuery{Pattern: `TODO\(`}) {
				if err != nil {
					return n, err
				}
				n++
			}
			return n, nil
		}},
		{"Glob **/*.go GOROOT/src", goroot, 2, func(ctx context.Context, f vfs.FileSystem) (int, error) { return drain(f.Glob(ctx, "**/*.go", "/")) }},
		{"Write 64 MiB", dir, 1, func(ctx context.Context, f vfs.FileSystem) (int, error) {
			return len(big()), f.Write(ctx, "/written", big())
		}},
	}
	ctx := context.Background()
	fmt.Printf("| verb | in process wall / CPU | plugin wall / CPU (host + plugin) | ratio wall / CPU |\n| --- | --- | --- | --- |\n")
	for _, v := range verbs {
		if !onlyRE.MatchString(v.name) {
			continue
		}
		in, err := local.New(v.dir)
		must(err)
		reps := *n * v.reps
		want := -1
		// Both sides must answer the same: a count of entries, hits or bytes.
		check := func(fsys vfs.FileSystem) func() error {
			return func() error {
				got, err := v.run(ctx, fsys)
				if err == nil && want >= 0 && got != want {
					err = fmt.Errorf("%s: %d results, want %d", v.name, got, want)
				}
				want = got
				return err
			}
		}
		var idle plugins.FS
		if *beside {
			idle = open(*pluginPath, v.dir)
		}
		iw, ic := measure(reps, check(in), nil)
		if idle != nil {
			idle.Close()
		}
		in.Close()

		// The plugin's start and stop, measured alone, are taken off.
		_, start := measure(1, func() error { return nil }, func() func() { p := open(*pluginPath, v.dir); return func() { p.Close() } })
		var p plugins.FS
		pw, pc := measure(reps, func() error { return check(p)() }, func() func() {
			p = open(*pluginPath, v.dir)
			v.run(ctx, p) // warm the tree as the in-process run is warm
			if profile != nil {
				must(pprof.StartCPUProfile(profile))
			}
			return func() {
				if profile != nil {
					pprof.StopCPUProfile()
					must(profile.Close())
					profile = nil
				}
				p.Close()
			}
		})
		pc.self -= start.self / time.Duration(reps)
		pc.kids -= start.kids / time.Duration(reps)
		r := func(d time.Duration) time.Duration { return d.Round(time.Microsecond * 10) }
		fmt.Printf("| %s | %v / %v | %v / %v (%v + %v) | %.2fx / %.2fx |\n", v.name, r(iw), r(ic.total()),
			r(pw), r(pc.total()), r(pc.self), r(pc.kids), float64(pw)/float64(iw), float64(pc.total())/float64(ic.total()))
	}
}

// cpu is CPU time (user + system) of this process (self) and of its
// children that exited (kids: the plugin, once it has exited).
type cpu struct{ self, kids time.Duration }

func (c cpu) total() time.Duration { return c.self + c.kids }

var noShared bool

func open(path, dir string) plugins.FS {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := plugins.OpenConfig(ctx, plugins.Config{Path: path, Args: map[string]string{"dir": dir}, Logger: hclog.NewNullLogger(), NoSharedMemory: noShared})
	must(err)
	return p
}

// measure runs op n times and returns the wall and CPU time per op; CPU
// counts this process and every child that exited meanwhile. setup, when
// set, runs before the clock starts and returns what to run after op's
// last run (inside the CPU measure, so a plugin's exit is counted).
func measure(n int, op func() error, setup func() func()) (wall time.Duration, used cpu) {
	var teardown func()
	if setup != nil {
		teardown = setup()
	}
	runtime.GC()
	g0 := gcNow()
	c0 := cpuNow()
	t0 := time.Now()
	for range n {
		must(op())
	}
	wall = time.Since(t0)
	g1 := gcNow()
	if teardown != nil {
		teardown()
	}
	c1 := cpuNow()
	if gcStats {
		fmt.Fprintf(os.Stderr, "  %d ops: %.2f GC cycles, %.0f µs of GC CPU, %.0f page faults per op; at the end: live heap %.0f KiB, scannable heap %.0f KiB, stacks %.0f KiB, %d goroutines\n", n,
			(g1.cycles-g0.cycles)/float64(n), (g1.cpu-g0.cpu)*1e6/float64(n), (g1.faults-g0.faults)/float64(n),
			g1.live/1024, g1.scanHeap/1024, g1.scanStack/1024, runtime.NumGoroutine())
	}
	return wall / time.Duration(n), cpu{(c1.self - c0.self) / time.Duration(n), (c1.kids - c0.kids) / time.Duration(n)}
}

var gcStats bool

// gcs are this process's GC cycles, GC CPU seconds (the runtime's
// estimate) and minor page faults so far, and what the last cycle found
// live and scannable (bytes).
type gcs struct{ cycles, cpu, faults, live, scanHeap, scanStack float64 }

func gcNow() gcs {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}, {Name: "/gc/scan/stack:bytes"}}
	metrics.Read(s)
	var ru syscall.Rusage
	must(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return gcs{float64(s[0].Value.Uint64()), s[1].Value.Float64(), float64(ru.Minflt),
		float64(s[2].Value.Uint64()), float64(s[3].Value.Uint64()), float64(s[4].Value.Uint64())}
}

func cpuNow() cpu {
	var self, kids syscall.Rusage
	must(syscall.Getrusage(syscall.RUSAGE_SELF, &self))
	must(syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids))
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return cpu{tv(self.Utime) + tv(self.Stime), tv(kids.Utime) + tv(kids.Stime)}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
