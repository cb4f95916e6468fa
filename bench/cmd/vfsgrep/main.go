// Command vfsgrep is the benchmark driver of bench/grep.sh: it runs one
// julyfs Grep or Glob over a host directory, through vfs/local (the
// default) or through an in-memory vfs/temp copy of it, and prints what
// `julyfs grep` / `julyfs glob` would ("path:line:text" or one path per
// line), or only the count with -c.
//
// With -temp the tree is loaded into memory first; only the grep is timed,
// and -time prints that time (the median of -n runs) to stderr, so the
// in-memory search can be compared with ripgrep reading the same files on
// disk.
//
//	vfsgrep [-temp] [-i] [-glob G] [-c] [-n N] [-time] DIR PATTERN
//	vfsgrep -mode glob [-c] DIR PATTERN
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

func main() {
	mode := flag.String("mode", "grep", "grep or glob")
	inMemory := flag.Bool("temp", false, "copy the tree into a vfs/temp tree first and time only the search")
	fold := flag.Bool("i", false, "case-insensitive")
	glob := flag.String("glob", "", "grep's file filter")
	count := flag.Bool("c", false, "print only the number of hits")
	runs := flag.Int("n", 1, "repeat the search this many times")
	showTime := flag.Bool("time", false, "print the median search time to stderr")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the searches to this file")
	traceFile := flag.String("trace", "", "write an execution trace of the searches to this file (go tool trace)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: vfsgrep [flags] DIR PATTERN")
		os.Exit(2)
	}
	dir, pattern := flag.Arg(0), flag.Arg(1)
	ctx := context.Background()

	var fsys vfs.FileSystem
	if *inMemory {
		t, err := loadTemp(dir)
		if err != nil {
			fail(err)
		}
		fsys = t
	} else {
		l, err := local.New(dir)
		if err != nil {
			fail(err)
		}
		defer l.Close()
		fsys = l
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			fail(err)
		}
		trace.Start(f)
		defer trace.Stop()
	}
	out := bufio.NewWriterSize(os.Stdout, 256<<10)
	defer out.Flush()
	var times []time.Duration
	for run := range *runs {
		n := 0
		start := time.Now()
		var err error
		switch *mode {
		case "grep":
			q := vfs.GrepQuery{Pattern: pattern, Path: "/", Glob: *glob, CaseInsensitive: *fold}
			for r, e := range fsys.Grep(ctx, q) {
				if e != nil {
					err = e
					break
				}
				n++
				if !*count && run == 0 {
					out.WriteString(r.Path)
					out.WriteByte(':')
					out.WriteString(strconv.Itoa(r.LineNumber))
					out.WriteByte(':')
					out.WriteString(r.Line)
					out.WriteByte('\n')
				}
			}
		case "glob":
			for e, er := range fsys.Glob(ctx, pattern, "/") {
				if er != nil {
					err = er
					break
				}
				n++
				if !*count && run == 0 {
					out.WriteString(e.Path)
					out.WriteByte('\n')
				}
			}
		default:
			fail(fmt.Errorf("unknown -mode %q", *mode))
		}
		times = append(times, time.Since(start))
		if err != nil {
			out.Flush()
			fail(err)
		}
		if *count && run == 0 {
			fmt.Fprintln(out, n)
		}
	}
	if *showTime {
		slices.Sort(times)
		fmt.Fprintf(os.Stderr, "median %v over %d runs (min %v, max %v)\n",
			times[len(times)/2].Round(time.Microsecond), len(times),
			times[0].Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond))
	}
}

// loadTemp copies the regular files under dir into a temp tree, not
// following links (as the local walk does not).
func loadTemp(dir string) (*temp.FS, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(dir, p)
		files["/"+filepath.ToSlash(r)] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	return temp.New(files)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "vfsgrep:", err)
	os.Exit(1)
}
