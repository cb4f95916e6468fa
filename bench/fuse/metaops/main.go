// Command metaops measures metadata operations on a directory, for
// bench/fuse/run.sh: creating small files, stat of each (twice: the second
// round is what the kernel's attribute cache serves), and listing the
// directory. It prints one "name ops/s" line per measure.
//
//	metaops DIR N
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: metaops DIR N")
		os.Exit(2)
	}
	dir := filepath.Join(os.Args[1], "metaops")
	n, err := strconv.Atoi(os.Args[2])
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
