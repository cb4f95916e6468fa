// Command union measures what a union costs over the same files on one
// mount: `Glob("**/*.go")` and a literal Grep over four vfs/local mounts of
// the parts of a source tree, against one vfs/local mount of the whole, at
// two tree sizes (about half of the tree, and all of it), reporting wall
// time and peak memory in one run.
//
//	go run ./bench/union [-src DIR] [-reps N] [-grep LITERAL] [-work DIR]
//
// The top-level entries of -src (default $(go env GOROOT)/src) are split
// into four groups of about equal file count and hard-linked (or copied,
// across devices) into WORK/<size>/g1..g4, so the union mounts /g1../g4 at
// WORK/<size>/gN and the single mount is WORK/<size>: the same files at the
// same paths. Each measurement runs in a fresh child process (this binary
// with -child), which warms the page cache with one untimed run, times
// -reps runs, and reports the median and minimum wall time, the CPU time
// (user+system) per run, and its peak resident set (getrusage's ru_maxrss,
// which includes the Go runtime). The
// four configurations of a size are interleaved, round after round, so load
// from other processes hits them alike. Output is a markdown table.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/union"
)

func main() {
	src := flag.String("src", "", "source tree (default: $(go env GOROOT)/src)")
	work := flag.String("work", "", "where to build the trees (default: a new temporary directory, removed at the end)")
	reps := flag.Int("reps", 7, "timed runs per measurement")
	rounds := flag.Int("rounds", 3, "child processes per configuration, interleaved")
	lit := flag.String("grep", "errors.New(", "literal to grep for")
	child := flag.Bool("child", false, "internal: run one measurement")
	root := flag.String("root", "", "internal: the tree to measure")
	mode := flag.String("mode", "", "internal: union or single")
	op := flag.String("op", "", "internal: glob or grep")
	flag.Parse()
	if *child {
		if err := measure(*root, *mode, *op, *lit, *reps); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(*src, *work, *lit, *reps, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "union bench:", err)
		os.Exit(1)
	}
}

// result is what a child reports.
type result struct {
	MedianNS int64 `json:"median_ns"`
	MinNS    int64 `json:"min_ns"`
	Count    int   `json:"count"`
	MaxRSSKB int64 `json:"maxrss_kb"`
	CPUNS    int64 `json:"cpu_ns"` // user+system time per run, the mean
}

func open(root, mode string) (vfs.FileSystem, error) {
	if mode == "single" {
		return local.New(root)
	}
	var ms []union.Mount
	for i := 1; i <= 4; i++ {
		g := fmt.Sprintf("g%d", i)
		l, err := local.New(filepath.Join(root, g))
		if err != nil {
			return nil, err
		}
		ms = append(ms, union.Mount{Prefix: "/" + g, FS: l})
	}
	return union.New(ms)
}

func measure(root, mode, op, lit string, reps int) error {
	fsys, err := open(root, mode)
	if err != nil {
		return err
	}
	ctx := context.Background()
	once := func() (int, error) {
		n := 0
		switch op {
		case "glob":
			for _, err := range fsys.Glob(ctx, "**/*.go", "/") {
				if err != nil {
					return n, err
				}
				n++
			}
		case "grep":
			for _, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: regexp.QuoteMeta(lit)}) {
				if err != nil {
					return n, err
				}
				n++
			}
		default:
			return 0, fmt.Errorf("unknown op %q", op)
		}
		return n, nil
	}
	count, err := once() // warm the page cache
	if err != nil {
		return err
	}
	var before syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		return err
	}
	var times []int64
	for range reps {
		start := time.Now()
		n, err := once()
		if err != nil {
			return err
		}
		times = append(times, int64(time.Since(start)))
		if n != count {
			return fmt.Errorf("%d results, then %d", count, n)
		}
	}
	slices.Sort(times)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	cpu := func(r syscall.Rusage) int64 { return r.Utime.Nano() + r.Stime.Nano() }
	return json.NewEncoder(os.Stdout).Encode(result{
		MedianNS: times[len(times)/2], MinNS: times[0], Count: count, MaxRSSKB: ru.Maxrss,
		CPUNS: (cpu(ru) - cpu(before)) / int64(reps),
	})
}

func run(src, work, lit string, reps, rounds int) error {
	if src == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return fmt.Errorf("go env GOROOT: %v", err)
		}
		src = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	if work == "" {
		dir, err := os.MkdirTemp("", "unionbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	entries, total, err := topLevel(src)
	if err != nil {
		return err
	}
	sizes := []struct {
		name    string
		entries []entry
	}{
		{"half", half(entries, total)},
		{"full", entries},
	}
	fmt.Printf("source %s: %d files; grep literal %q; %d rounds x %d timed runs\n\n", src, total, lit, rounds, reps)
	fmt.Println("| tree | files | op | results | single median | union median | ratio (median) | ratio (min) | single CPU | union CPU | ratio (CPU) | single peak RSS | union peak RSS |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, size := range sizes {
		root := filepath.Join(work, size.name)
		files, err := build(src, root, size.entries)
		if err != nil {
			return err
		}
		type key struct{ mode, op string }
		got := map[key][]result{}
		for range rounds {
			for _, op := range []string{"glob", "grep"} {
				for _, mode := range []string{"single", "union"} {
					r, err := child(self, root, mode, op, lit, reps)
					if err != nil {
						return fmt.Errorf("%s %s %s: %v", size.name, mode, op, err)
					}
					got[key{mode, op}] = append(got[key{mode, op}], r)
				}
			}
		}
		for _, op := range []string{"glob", "grep"} {
			s, u := summarize(got[key{"single", op}]), summarize(got[key{"union", op}])
			if s.Count != u.Count {
				return fmt.Errorf("%s %s: single found %d, union %d", size.name, op, s.Count, u.Count)
			}
			fmt.Printf("| %s | %d | %s | %d | %s | %s | %.2fx | %.2fx | %s | %s | %.2fx | %.1f MB | %.1f MB |\n",
				size.name, files, op, s.Count,
				ms(s.MedianNS), ms(u.MedianNS),
				float64(u.MedianNS)/float64(s.MedianNS), float64(u.MinNS)/float64(s.MinNS),
				ms(s.CPUNS), ms(u.CPUNS), float64(u.CPUNS)/float64(s.CPUNS),
				float64(s.MaxRSSKB)/1024, float64(u.MaxRSSKB)/1024)
		}
	}
	return nil
}

func ms(ns int64) string { return fmt.Sprintf("%.1f ms", float64(ns)/1e6) }

// summarize combines the rounds of one configuration: the median of the
// medians and of the CPU times, the least minimum, the largest peak.
func summarize(rs []result) result {
	meds := make([]int64, len(rs))
	cpus := make([]int64, len(rs))
	out := result{Count: rs[0].Count, MinNS: rs[0].MinNS}
	for i, r := range rs {
		meds[i], cpus[i] = r.MedianNS, r.CPUNS
		out.MinNS = min(out.MinNS, r.MinNS)
		out.MaxRSSKB = max(out.MaxRSSKB, r.MaxRSSKB)
	}
	slices.Sort(meds)
	slices.Sort(cpus)
	out.MedianNS, out.CPUNS = meds[len(meds)/2], cpus[len(cpus)/2]
	return out
}

func child(self, root, mode, op, lit string, reps int) (result, error) {
	cmd := exec.Command(self, "-child", "-root", root, "-mode", mode, "-op", op, "-grep", lit, "-reps", fmt.Sprint(reps))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, err
	}
	var r result
	return r, json.Unmarshal(out, &r)
}

// entry is a top-level entry of the source tree and its file count.
type entry struct {
	name  string
	files int
}

func topLevel(src string) ([]entry, int, error) {
	des, err := os.ReadDir(src)
	if err != nil {
		return nil, 0, err
	}
	var out []entry
	total := 0
	for _, de := range des {
		n := 0
		err := filepath.WalkDir(filepath.Join(src, de.Name()), func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				n++
			}
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
		out = append(out, entry{de.Name(), n})
		total += n
	}
	return out, total, nil
}

// half picks entries, by name, until they hold half the files.
func half(entries []entry, total int) []entry {
	var out []entry
	n := 0
	for _, e := range entries {
		if n >= total/2 {
			break
		}
		if n+e.files > total*6/10 {
			continue // too big a step; a later, smaller one fits better
		}
		out = append(out, e)
		n += e.files
	}
	return out
}

// build lays entries out under root/g1..g4, the groups balanced by file
// count, and returns the number of regular files.
func build(src, root string, entries []entry) (int, error) {
	if err := os.RemoveAll(root); err != nil {
		return 0, err
	}
	for g := range 4 {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("g%d", g+1)), 0o755); err != nil {
			return 0, err
		}
	}
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b entry) int { return b.files - a.files })
	var load [4]int
	total := 0
	for _, e := range sorted {
		g := slices.Index(load[:], slices.Min(load[:]))
		load[g] += e.files
		total += e.files
		dst := filepath.Join(root, fmt.Sprintf("g%d", g+1), e.name)
		if err := linkTree(filepath.Join(src, e.name), dst); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// linkTree recreates the tree at src under dst, hard-linking files (or
// copying them where a link is refused) and recreating symbolic links.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			if err := os.Link(p, target); err == nil {
				return nil
			}
			return copyFile(p, target)
		}
		return nil
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
