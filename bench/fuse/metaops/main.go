// Command metaops measures metadata operations on a directory, for
// bench/fuse/run.sh: creating small files, stat of each (twice: the second
// round is what the kernel's attribute cache serves), and listing the
// directory. It prints one "name ops/s" line per measure.
//
//	metaops [-settle D] DIR N
//
// Between the creates and the first stats it waits out the FUSE entry and
// attribute timeouts (-settle, 1.2 s for the 1 s timeouts of run.sh), so
// that on every target the first round looks each name up afresh and the
// cached rounds run within the timeouts of that lookup. Without the wait
// the names keep the timeouts of their create: the first round finds some
// still valid (answering GETATTR, not LOOKUP), and their entries expire
// during the cached rounds, which then go to the daemon. How many do
// depends on how long the creates took, so a server with slower creates
// measured slower cached stats.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	settle := flag.Duration("settle", 1200*time.Millisecond, "wait this long after the creates, past the FUSE entry and attribute timeouts")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: metaops [-settle D] DIR N")
		os.Exit(2)
	}
	dir := filepath.Join(flag.Arg(0), "metaops")
	n, err := strconv.Atoi(flag.Arg(1))
	check(err)
	check(os.MkdirAll(dir, 0o755))
	data := make([]byte, 100)
	names := make([]string, n)
	for i := range names {
		names[i] = filepath.Join(dir, fmt.Sprintf("f%06d", i))
	}
	report("create", n, func() {
		for _, name := range names {
			check(os.WriteFile(name, data, 0o644))
		}
	})
	time.Sleep(*settle)
	report("stat", n, func() {
		for _, name := range names {
			_, err := os.Stat(name)
			check(err)
		}
	})
	report("stat-cached", 10*n, func() {
		for range 10 {
			for _, name := range names {
				_, err := os.Stat(name)
				check(err)
			}
		}
	})
	const lists = 20
	report("readdir-entries", lists*n, func() {
		for range lists {
			entries, err := os.ReadDir(dir)
			check(err)
			if len(entries) != n {
				check(fmt.Errorf("listed %d entries, want %d", len(entries), n))
			}
		}
	})
	check(os.RemoveAll(dir))
}

func report(name string, ops int, fn func()) {
	start := time.Now()
	fn()
	fmt.Printf("%s %.0f\n", name, float64(ops)/time.Since(start).Seconds())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "metaops:", err)
		os.Exit(1)
	}
}
