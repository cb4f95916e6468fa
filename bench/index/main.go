// Command index measures vfs/index over a corpus at one or more scales:
// scale 1 is $(go env GOROOT)/src (or -corpus), scale N is N copies of it
// made in a temporary directory (never committed). Per scale: the full
// build (wall, user+sys CPU and peak RSS, in a child process so each
// build's figures are its own), the index size, the no-change reopen with
// SyncAuto and SyncAlways, query latency in process over the relevance
// set (top 10 with snippets), relevance (scale 1), a single-file Write
// through the index, how long a file changed behind julyfs's back takes to
// become searchable for a following FS, and the one-shot `julyfs search`
// end to end (julyfs and julyfsd built from this checkout) with each
// --sync mode, and after a new file and an in-place edit; query latency
// while a file is written through the index every 20 ms; the one-shot
// search asking a process that follows the index (this one). See
// docs/perf/index.md.
package main

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/index/relevance"
	"github.com/julyfs/julyfs/vfs/local"
)

func main() {
	corpus := flag.String("corpus", filepath.Join(runtime.GOROOT(), "src"), "directory to index (scale 1)")
	scales := flag.String("scales", "1,8", "comma-separated numbers of copies of the corpus to measure")
	dir := flag.String("index", "", "index directory prefix (default: a temporary one, removed at exit)")
	set := flag.String("relevance", "testdata/relevance/go-src.txt", "relevance set")
	rounds := flag.Int("rounds", 20, "times each relevance query is run for latency")
	oneshots := flag.Int("oneshots", 10, "runs of each one-shot julyfs search")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the build (with -build-only)")
	buildOnly := flag.Bool("build-only", false, "stop after the builds")
	rg := flag.Bool("rg", false, "compare with rg -l (scale 1)")
	child := flag.Bool("child-build", false, "internal: build the index of -corpus in -index and exit")
	committers := flag.Int("committers", 0, "index.Options.Committers of the build (0: the default)")
	work := flag.String("work", "", "keep the corpus copies in this directory (reused when present; default: a temporary one)")
	reuse := flag.Bool("reuse", false, "with -index and -work: use an index already built there instead of building it")
	queriesOnly := flag.Bool("queries-only", false, "measure only the in-process query latency (after the build or -reuse)")
	qprofile := flag.String("query-cpuprofile", "", "write a CPU profile of the in-process query rounds")
	flag.Parse()
	ctx := context.Background()

	if *child {
		childBuild(ctx, *corpus, *dir, *cpuprofile, *committers)
		return
	}
	queries, err := relevance.Load(*set)
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "julyfs-bench-index-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if *dir == "" {
		*dir = filepath.Join(tmp, "idx")
	}
	bin := buildJulyfs(tmp)
	fmt.Printf("GOMAXPROCS %d, %s, %d cores\n", runtime.GOMAXPROCS(0), runtime.Version(), runtime.NumCPU())
	for _, s := range strings.Split(*scales, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("-scales: %q", s)
		}
		// Always a copy: the bench edits files of the corpus, and GOROOT
		// is not ours to edit.
		base := tmp
		if *work != "" {
			base = *work
		}
		c := filepath.Join(base, fmt.Sprintf("corpus-%dx", n))
		if _, err := os.Stat(c); *work == "" || err != nil {
			copies(*corpus, c, n)
		}
		idx := fmt.Sprintf("%s-%dx", *dir, n)
		fmt.Printf("\n== scale %dx: %s (%s)\n", n, c, duSize(c))
		measure(ctx, scale{n: n, corpus: c, dir: idx, bin: bin, queries: queries, rounds: *rounds, oneshots: *oneshots, rg: *rg, buildOnly: *buildOnly, cpuprofile: *cpuprofile, committers: *committers,
			reuse: *reuse, queriesOnly: *queriesOnly, qprofile: *qprofile})
		if *work == "" {
			os.RemoveAll(c)
		}
	}
}

type scale struct {
	n                int
	corpus, dir, bin string
	queries          []relevance.Query
	rounds, oneshots int
	rg, buildOnly    bool
	cpuprofile       string
	committers       int
	reuse            bool   // use the index at dir as it is
	queriesOnly      bool   // measure the in-process query latency only
	qprofile         string // CPU profile of the query rounds
}

func measure(ctx context.Context, s scale) {
	if s.reuse {
		if _, err := os.Stat(s.dir); err != nil {
			log.Fatalf("-reuse: %v", err)
		}
		fmt.Printf("index reused: %s (%s)\n", s.dir, duSize(s.dir))
	} else {
		build(s)
	}
	if s.buildOnly {
		return
	}
	tree, err := local.New(s.corpus)
	if err != nil {
		log.Fatal(err)
	}
	defer tree.Close()
	if !s.queriesOnly {
		reopens(ctx, s, tree)
	}
	// In-process queries, as a long-running process runs them (Warm).
	f, err := index.Open(ctx, tree, s.dir, index.Options{Sync: index.SyncNever, Warm: true})
	if err != nil {
		log.Fatal(err)
	}
	time.Sleep(time.Second)
	if s.n == 1 {
		rep, err := relevance.Evaluate(ctx, f, "/", s.queries, 10)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rep)
	}
	queryLatency(ctx, s, f)
	if s.queriesOnly {
		f.Close()
		return
	}
	rest(ctx, s, tree, f)
}

// build builds the index of s.corpus in s.dir from scratch, in a child
// process, and prints its figures.
func build(s scale) {
	args := []string{"-child-build", "-corpus", s.corpus, "-index", s.dir, "-committers", strconv.Itoa(s.committers)}
	if s.cpuprofile != "" {
		args = append(args, "-cpuprofile", s.cpuprofile)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("build: %v", err)
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := tv(ru.Utime) + tv(ru.Stime)
	fmt.Printf("build: %v wall, %v user+sys (%.0f%% of one core), peak RSS %d MiB; %s",
		wall.Round(time.Millisecond), cpu.Round(time.Millisecond), 100*cpu.Seconds()/wall.Seconds(), ru.Maxrss/1024, out)
	fmt.Printf("index size on disk: %s\n", duSize(s.dir))
}

// reopens measures the no-change reopens and each query's first run with
// the index evicted from the page cache.
func reopens(ctx context.Context, s scale, tree vfs.FileSystem) {
	// No-change reopen, each mode (in process).
	for _, mode := range []index.SyncMode{index.SyncAuto, index.SyncAlways, index.SyncAuto} {
		start := time.Now()
		f, err := index.Open(ctx, tree, s.dir, index.Options{Sync: mode})
		if err != nil {
			log.Fatal(err)
		}
		t := time.Since(start)
		f.Close()
		fmt.Printf("reopen, nothing changed, --sync=%s: %v (%v)\n", mode, t.Round(time.Millisecond), f.Stats())
	}
	// What auto would cost if it stat'ed every file at this size (what
	// it does up to StatLimit files), CPU included.
	{
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		start := time.Now()
		f, err := index.Open(ctx, tree, s.dir, index.Options{Sync: index.SyncAuto, StatLimit: 1 << 30})
		if err != nil {
			log.Fatal(err)
		}
		t := time.Since(start)
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		f.Close()
		fmt.Printf("reopen, nothing changed, --sync=auto stat'ing every file: %v, %v user+sys (%v)\n", t.Round(time.Millisecond),
			(tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)).Round(time.Millisecond), f.Stats())
	}

	// Each query's first run with the index's files out of the page
	// cache (evicted here, as a busy machine evicts them between a build
	// and the first search), opened without and with Warm (a long-running
	// process: Follow implies Warm; its first query comes a moment after
	// Open, here 1 s).
	for _, warm := range []bool{false, true} {
		evict(s.dir)
		f, err := index.Open(ctx, tree, s.dir, index.Options{Sync: index.SyncNever, Warm: warm})
		if err != nil {
			log.Fatal(err)
		}
		if warm {
			time.Sleep(time.Second)
		}
		var lat []time.Duration
		for _, q := range s.queries {
			t0 := time.Now()
			for _, err := range f.Search(ctx, vfs.SearchQuery{Query: q.Text, MaxResults: 10}) {
				if err != nil {
					log.Fatal(err)
				}
			}
			lat = append(lat, time.Since(t0))
		}
		f.Close()
		fmt.Printf("first run of each query, index evicted from the page cache, Warm %v: p50 %v max %v\n", warm, pct(lat, 50), pct(lat, 100))
	}
}

// queryLatency runs the query set s.rounds times through f and prints the
// latency of whole queries (top 10 with snippets) and of their first
// result, and the slowest queries by their median.
func queryLatency(ctx context.Context, s scale, f *index.FS) {
	if s.qprofile != "" {
		pf, err := os.Create(s.qprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(pf)
		defer pprof.StopCPUProfile()
	}
	perQuery := make([][]time.Duration, len(s.queries))
	var lat, first []time.Duration
	for range s.rounds {
		for qi, q := range s.queries {
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
			perQuery[qi] = append(perQuery[qi], time.Since(t0))
		}
	}
	fmt.Printf("query latency in process, top 10 with snippets (%d queries x %d): p50 %v p99 %v; first result p50 %v p99 %v\n",
		len(s.queries), s.rounds, pct(lat, 50), pct(lat, 99), pct(first, 50), pct(first, 99))
	order := make([]int, len(s.queries))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(pct(perQuery[b], 50), pct(perQuery[a], 50)) })
	fmt.Printf("slowest queries (p50 / max):")
	for _, i := range order[:min(5, len(order))] {
		fmt.Printf(" %q %v / %v;", s.queries[i].Text, pct(perQuery[i], 50), pct(perQuery[i], 100))
	}
	fmt.Println()
}

// rest measures the queries while writing, Writes, following and the
// one-shot searches; it closes f.
func rest(ctx context.Context, s scale, tree vfs.FileSystem, f *index.FS) {

	// The same while the index is written: a file written through the FS
	// every 20 ms (an agent editing), each write indexed before it
	// returns.
	stopW := make(chan struct{})
	wrote := make(chan int)
	go func() {
		n := 0
		defer func() { wrote <- n }()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopW:
				return
			case <-tick.C:
			}
			data := fmt.Appendf(nil, "package bench\n\n// Revision %d, written while searching.\nfunc Busy%d() {}\n", n, n)
			if err := f.Write(ctx, fmt.Sprintf("/zz-julyfs-busy/f%d.go", n%20), data); err != nil {
				log.Fatal(err)
			}
			n++
		}
	}()
	var lat []time.Duration
	for range max(1, s.rounds/2) {
		for _, q := range s.queries {
			t0 := time.Now()
			for _, err := range f.Search(ctx, vfs.SearchQuery{Query: q.Text, MaxResults: 10}) {
				if err != nil {
					log.Fatal(err)
				}
			}
			lat = append(lat, time.Since(t0))
		}
	}
	close(stopW)
	writes := <-wrote
	for i := range 20 {
		f.Delete(ctx, fmt.Sprintf("/zz-julyfs-busy/f%d.go", i))
	}
	os.Remove(filepath.Join(s.corpus, "zz-julyfs-busy"))
	fmt.Printf("query latency while a file is written through the index every 20 ms (%d queries, %d writes): p50 %v p99 %v\n",
		len(lat), writes, pct(lat, 50), pct(lat, 99))

	// One file's Write through the FS.
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
	if err := f.Delete(ctx, target); err != nil {
		log.Fatal(err)
	}
	os.Remove(filepath.Join(s.corpus, "zz-julyfs-bench"))
	fmt.Printf("single-file Write through the index: p50 %v p99 %v\n", pct(upd, 50), pct(upd, 99))
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	// A following FS: a file rewritten in place behind julyfs's back,
	// until searchable.
	start := time.Now()
	f, err := index.Open(ctx, tree, s.dir, index.Options{Sync: index.SyncAuto, Follow: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("open with Follow (auto sync + watching every directory): %v\n", time.Since(start).Round(time.Millisecond))
	victimPath := "/strings/builder.go"
	if s.n > 1 {
		victimPath = "/c1/strings/builder.go"
	}
	victim := filepath.Join(s.corpus, filepath.FromSlash(victimPath))
	orig, err := os.ReadFile(victim)
	if err != nil {
		log.Fatal(err)
	}
	var follow []time.Duration
	for i := range 10 {
		word := fmt.Sprintf("zulufollow%dx%d", s.n, i)
		t0 := time.Now()
		if err := os.WriteFile(victim, append(slices.Clone(orig), "\n// "+word+"\n"...), 0o644); err != nil {
			log.Fatal(err)
		}
		for {
			hit := false
			for r, err := range f.Search(ctx, vfs.SearchQuery{Query: word, MaxResults: 1}) {
				if err != nil {
					log.Fatal(err)
				}
				hit = r.Path == victimPath
			}
			if hit {
				break
			}
			if time.Since(t0) > 30*time.Second {
				log.Fatalf("follow: %s not found after 30 s", word)
			}
			time.Sleep(5 * time.Millisecond)
		}
		follow = append(follow, time.Since(t0))
	}
	if err := os.WriteFile(victim, orig, 0o644); err != nil {
		log.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // let the restore be followed
	f.Close()
	fmt.Printf("in-place edit behind julyfs's back to searchable, following FS: p50 %v max %v\n", pct(follow, 50), pct(follow, 100))

	// One-shot julyfs search, end to end.
	mount := "/=local:" + s.corpus
	oneshot := func(mode, query string) (time.Duration, time.Duration, string) {
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru0)
		c := exec.Command(s.bin, "search", "--mount", mount, "--index", s.dir, "--sync="+mode, "--max", "10", query)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		t0 := time.Now()
		out, err := c.Output()
		wall := time.Since(t0)
		if err != nil {
			log.Fatalf("julyfs search: %v: %s", err, stderr.String())
		}
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru1)
		return wall, tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime), string(out)
	}
	oneshot("auto", "warm up") // the manifest file is written by the first auto
	for _, mode := range []string{"auto", "never", "always"} {
		runs := s.oneshots
		if mode == "always" {
			runs = min(runs, 3)
		}
		var walls, cpus []time.Duration
		for i := range runs {
			w, c, _ := oneshot(mode, s.queries[i%len(s.queries)].Text)
			walls, cpus = append(walls, w), append(cpus, c)
		}
		fmt.Printf("one-shot julyfs search --sync=%s (%d runs): wall p50 %v p99 %v; user+sys p50 %v\n", mode, runs, pct(walls, 50), pct(walls, 99), pct(cpus, 50))
	}
	// A new file, then an in-place edit, each found (or not) by the next
	// one-shot auto search.
	newFile := filepath.Join(s.corpus, "zz-julyfs-bench", "fresh.go")
	os.MkdirAll(filepath.Dir(newFile), 0o755)
	word := fmt.Sprintf("yankeenew%d", s.n)
	if err := os.WriteFile(newFile, []byte("package fresh\n\n// "+word+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	w, c, res := oneshot("auto", word)
	fmt.Printf("one-shot auto search right after a new file: %v wall, %v user+sys; found: %v\n", w.Round(time.Millisecond), c.Round(time.Millisecond), strings.Contains(res, "fresh.go"))
	w, c, _ = oneshot("auto", word)
	fmt.Printf("the next one-shot auto search (manifest file rewritten): %v wall, %v user+sys\n", w.Round(time.Millisecond), c.Round(time.Millisecond))
	word = fmt.Sprintf("xrayedit%d", s.n)
	if err := os.WriteFile(victim, append(slices.Clone(orig), "\n// "+word+"\n"...), 0o644); err != nil {
		log.Fatal(err)
	}
	w, c, res = oneshot("auto", word)
	fmt.Printf("one-shot auto search right after an in-place edit: %v wall, %v user+sys; found: %v\n", w.Round(time.Millisecond), c.Round(time.Millisecond), strings.Contains(res, "builder.go"))
	w, c, res = oneshot("always", word)
	fmt.Printf("one-shot always search after it: %v wall, %v user+sys; found: %v\n", w.Round(time.Millisecond), c.Round(time.Millisecond), strings.Contains(res, "builder.go"))
	os.WriteFile(victim, orig, 0o644)
	os.RemoveAll(filepath.Dir(newFile))
	oneshot("always", "restore")

	// One-shot searches while a process follows the index (as julyfs
	// mount --index or july run would; here this process): they ask it.
	f, err = index.Open(ctx, tree, s.dir, index.Options{Sync: index.SyncAuto, Follow: true, Tree: mount})
	if err != nil {
		log.Fatal(err)
	}
	var walls, cpus []time.Duration
	for i := range s.oneshots {
		w, c, _ := oneshot("auto", s.queries[i%len(s.queries)].Text)
		walls, cpus = append(walls, w), append(cpus, c)
	}
	fmt.Printf("one-shot julyfs search asking a following process (%d runs): wall p50 %v p99 %v; user+sys p50 %v (the asker's)\n", len(walls), pct(walls, 50), pct(walls, 99), pct(cpus, 50))
	word = fmt.Sprintf("whiskeyedit%d", s.n)
	if err := os.WriteFile(victim, append(slices.Clone(orig), "\n// "+word+"\n"...), 0o644); err != nil {
		log.Fatal(err)
	}
	w, c, res = oneshot("auto", word)
	fmt.Printf("one-shot search asking the follower right after an in-place edit: %v wall, %v user+sys; found: %v\n", w.Round(time.Millisecond), c.Round(time.Millisecond), strings.Contains(res, "builder.go"))
	os.WriteFile(victim, orig, 0o644)
	time.Sleep(300 * time.Millisecond)
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	if s.rg && s.n == 1 {
		rgCompare(s.corpus, s.queries)
	}
}

// childBuild builds the index of corpus in dir from scratch and prints the
// summary line.
func childBuild(ctx context.Context, corpus, dir, cpuprofile string, committers int) {
	tree, err := local.New(corpus)
	if err != nil {
		log.Fatal(err)
	}
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(index.BuildMemoryLimit) // as julyfs index build does
	}
	peak := watchRSS()
	f, err := index.Open(ctx, tree, dir, index.Options{Rebuild: true, Committers: committers})
	if err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	anon, file := peak()
	fmt.Fprintf(os.Stderr, "RSS at its peak (sampled every 50 ms): %d MiB anonymous (the Go heap and stacks) + %d MiB file-backed (mapped index segments)\n", anon>>10, file>>10)
	fmt.Println(f.Stats())
}

// watchRSS samples this process's resident memory, split into anonymous
// and file-backed pages (/proc/self/status), every 50 ms; the function it
// returns gives the split (KiB) when the sum was highest.
func watchRSS() func() (anon, file int) {
	var mu sync.Mutex
	var atAnon, atFile int
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			b, err := os.ReadFile("/proc/self/status")
			if err != nil {
				return
			}
			var anon, file int
			for _, l := range strings.Split(string(b), "\n") {
				switch f := strings.Fields(l); {
				case len(f) < 2:
				case f[0] == "RssAnon:":
					anon, _ = strconv.Atoi(f[1])
				case f[0] == "RssFile:":
					file, _ = strconv.Atoi(f[1])
				}
			}
			mu.Lock()
			if anon+file > atAnon+atFile {
				atAnon, atFile = anon, file
			}
			mu.Unlock()
		}
	}()
	return func() (int, int) {
		close(stop)
		mu.Lock()
		defer mu.Unlock()
		return atAnon, atFile
	}
}

// buildJulyfs builds julyfs and julyfsd from the module in the working
// directory into dir and returns julyfs's path.
func buildJulyfs(dir string) string {
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/julyfs", "./cmd/julyfsd")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("go build julyfs julyfsd (run from the repository root): %v", err)
	}
	return filepath.Join(dir, "julyfs")
}

// copies makes dst a copy of src (n = 1) or dst/c1 ... dst/cN, each a
// copy of src.
func copies(src, dst string, n int) {
	for i := 1; i <= n; i++ {
		to := dst
		if n > 1 {
			to = filepath.Join(dst, fmt.Sprintf("c%d", i))
		}
		if err := os.MkdirAll(to, 0o755); err != nil {
			log.Fatal(err)
		}
		cmd := exec.Command("cp", "-a", src+"/.", to)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("copy %s: %v", src, err)
		}
	}
	// The copies' directories are as old as the originals (cp -a), so the
	// index trusts their times at once, as it would on a settled tree.
}

func rgCompare(corpus string, queries []relevance.Query) {
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
		out, _ := exec.Command("rg", "-l", "-i", "-F", words[0], corpus).Output()
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

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

// evict asks the kernel to drop the files under dir from the page cache
// (after writing back what is dirty: dirty pages are not dropped).
func evict(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
			unix.Fdatasync(fd)
			unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
			unix.Close(fd)
		}
		return nil
	})
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
