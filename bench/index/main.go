// Command index measures vfs/index over a corpus (by default
// $(go env GOROOT)/src): full build time, peak memory, index size on disk,
// query latency over the relevance set, the time to apply one file's
// update, the no-change resync time, and the same queries answered by
// `rg -l` for comparison. See docs/perf/index.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/index/relevance"
	"github.com/julyfs/julyfs/vfs/local"
)

func main() {
	corpus := flag.String("corpus", filepath.Join(runtime.GOROOT(), "src"), "directory to index")
	dir := flag.String("index", "", "index directory (default: a temporary one, removed at exit)")
	set := flag.String("relevance", "testdata/relevance/go-src.txt", "relevance set")
	rounds := flag.Int("rounds", 20, "times each relevance query is run for latency")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the build")
	buildOnly := flag.Bool("build-only", false, "stop after the build")
	rg := flag.Bool("rg", true, "compare with rg -l")
	flag.Parse()
	ctx := context.Background()

	queries, err := relevance.Load(*set)
	if err != nil {
		log.Fatal(err)
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "julyfs-bench-index-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		*dir = filepath.Join(tmp, "idx")
	}
	tree, err := local.New(*corpus)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("corpus %s (%s), GOMAXPROCS %d, %s\n", *corpus, duSize(*corpus), runtime.GOMAXPROCS(0), runtime.Version())

	// Full build.
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
	}
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	f, err := index.Open(ctx, tree, *dir, index.Options{Rebuild: true})
	if err != nil {
		log.Fatal(err)
	}
	build := time.Since(start)
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	cpu := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
	fmt.Printf("build: %v wall, %v CPU; %v\n", build.Round(time.Millisecond), cpu.Round(time.Millisecond), f.Stats())
	fmt.Printf("peak RSS after build: %d MiB\n", ru1.Maxrss/1024)
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("index size on disk: %s (corpus %s)\n", duSize(*dir), duSize(*corpus))
	if *buildOnly {
		return
	}

	// No-change resync (reopen).
	start = time.Now()
	f, err = index.Open(ctx, tree, *dir, index.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("reopen, nothing changed: %v; %v\n", time.Since(start).Round(time.Millisecond), f.Stats())
	start = time.Now()
	st, err := f.Sync(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Sync, nothing changed: %v; %v\n", time.Since(start).Round(time.Millisecond), st)

	// Relevance and latency.
	rep, err := relevance.Evaluate(ctx, f, "/", queries, 10)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep)
	var lat, first []time.Duration
	for range *rounds {
		for _, q := range queries {
			t0 := time.Now()
			n := 0
			for _, err := range f.Search(ctx, vfs.SearchQuery{Query: q.Text, MaxResults: 10}) {
				if err != nil {
					log.Fatal(err)
				}
				if n++; n == 1 {
					first = append(first, time.Since(t0))
				}
			}
			lat = append(lat, time.Since(t0))
		}
	}
	fmt.Printf("query latency, top 10 with snippets (%d queries x %d): p50 %v p99 %v\n", len(queries), *rounds, pct(lat, 50), pct(lat, 99))
	fmt.Printf("time to the first result (the ranked query plus one snippet): p50 %v p99 %v\n", pct(first, 50), pct(first, 99))

	// One file's update through the FS.
	var upd []time.Duration
	target := "/zz-julyfs-bench/update.go"
	for i := range 50 {
		data := fmt.Appendf(nil, "package bench\n\n// Revision %d of a file written through the index.\nfunc Quux%d() {}\n", i, i)
		t0 := time.Now()
		if err := f.Write(ctx, target, data); err != nil {
			log.Fatal(err)
		}
		upd = append(upd, time.Since(t0))
	}
	var write []time.Duration
	for i := range 50 {
		data := fmt.Appendf(nil, "package bench\n// %d\n", i)
		t0 := time.Now()
		if err := tree.Write(ctx, target, data); err != nil {
			log.Fatal(err)
		}
		write = append(write, time.Since(t0))
	}
	if err := f.Delete(ctx, target); err != nil {
		log.Fatal(err)
	}
	os.Remove(filepath.Join(*corpus, "zz-julyfs-bench"))
	fmt.Printf("single-file Write through the index: p50 %v p99 %v (the same Write on the bare tree: p50 %v)\n", pct(upd, 50), pct(upd, 99), pct(write, 50))
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	if *rg {
		if _, err := exec.LookPath("rg"); err != nil {
			fmt.Println("rg not found; skipping the comparison")
			return
		}
		var rgLat []time.Duration
		for _, q := range queries {
			// rg -l for files containing every word, as a shell user would:
			// the first word's files filtered by each further word.
			words := strings.Fields(q.Text)
			t0 := time.Now()
			out, _ := exec.Command("rg", "-l", "-i", "-F", words[0], *corpus).Output()
			files := strings.Fields(string(out))
			for _, w := range words[1:] {
				if len(files) == 0 {
					break
				}
				args := append([]string{"-l", "-i", "-F", w}, files...)
				out, _ = exec.Command("rg", args...).Output()
				files = strings.Fields(string(out))
			}
			rgLat = append(rgLat, time.Since(t0))
		}
		fmt.Printf("rg -l -i (all words, %d queries): p50 %v p99 %v\n", len(queries), pct(rgLat, 50), pct(rgLat, 99))
	}
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(len(s)-1, (len(s)*p+99)/100-1)
	return s[max(0, i)].Round(time.Microsecond)
}

func duSize(dir string) string {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
