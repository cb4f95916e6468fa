// Command metaops measures metadata operations on a directory, for
// bench/fuse/run.sh and bench/fuse/meta.sh: creating small files, stat of
// each (twice: the second round is what the kernel's attribute cache
// serves), and listing the directory. It prints one "name ops/s" line per
// measure.
//
//	metaops [-settle D] DIR N
//	metaops [-settle D] [-rounds R] DIR DIR... N
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
//
// Given several directories (say a mount of each server compared, over
// one tmpfs), it interleaves them: R rounds, each making N files in every
// directory in turn (each round in another order), one settle, then the
// stats and listings of every directory in turn; it prints "DIR name ops/s"
// lines with the median of the rounds (DIR as given). A server compared
// with another this way meets the same moments of a shared machine's
// load, which a run of one after the other does not: on a 2-vCPU VM the
// create rate of one server measured alone moved 30-50% between runs.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

func main() {
	settle := flag.Duration("settle", 1200*time.Millisecond, "wait this long after the creates, past the FUSE entry and attribute timeouts")
	rounds := flag.Int("rounds", 20, "rounds of an interleaved run (several directories)")
	flag.Parse()
	if flag.NArg() < 2 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "usage: metaops [-settle D] [-rounds R] DIR [DIR...] N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(flag.Arg(flag.NArg() - 1))
	check(err)
	dirs := flag.Args()[:flag.NArg()-1]
	if len(dirs) == 1 {
		s := newSet(dirs[0], "metaops", n)
		for _, m := range s.run(*settle) {
			fmt.Printf("%s %.0f\n", m.name, m.rate)
		}
		return
	}
	// rates[d][measure] are the rounds' rates of directory d.
	rates := make([]map[string][]float64, len(dirs))
	var order []string
	for i := range rates {
		rates[i] = map[string][]float64{}
	}
	for r := range *rounds {
		sets := make([]*set, len(dirs))
		for i, d := range dirs {
			// A directory of its own per target and round: two
			// targets may serve one host directory (run.sh's native
			// and loopbacks).
			sets[i] = newSet(d, fmt.Sprintf("metaops-%d-%d", i, r), n)
		}
		turn := func(fn func(i int)) {
			for k := range dirs {
				fn((k + r) % len(dirs))
			}
		}
		turn(func(i int) { sets[i].create() })
		time.Sleep(*settle)
		turn(func(i int) {
			for _, m := range sets[i].read() {
				if r == 0 && i == 0 {
					order = append(order, m.name)
				}
				rates[i][m.name] = append(rates[i][m.name], m.rate)
			}
			rates[i]["create"] = append(rates[i]["create"], sets[i].created)
		})
		turn(func(i int) { check(os.RemoveAll(sets[i].dir)) })
	}
	for i, d := range dirs {
		for _, name := range append([]string{"create"}, order...) {
			fmt.Printf("%s %s %.0f\n", d, name, median(rates[i][name]))
		}
	}
}

// set is N files made in a directory of their own and measured.
type set struct {
	dir     string
	names   []string
	created float64 // the creates' rate
}

// measure is one measure's rate in operations per second.
type measure struct {
	name string
	rate float64
}

func newSet(root, sub string, n int) *set {
	s := &set{dir: filepath.Join(root, sub), names: make([]string, n)}
	for i := range s.names {
		s.names[i] = filepath.Join(s.dir, fmt.Sprintf("f%06d", i))
	}
	return s
}

// run is one measure of the directory alone: the creates, the settle,
// the reads; the files are removed after.
func (s *set) run(settle time.Duration) []measure {
	s.create()
	time.Sleep(settle)
	ms := append([]measure{{"create", s.created}}, s.read()...)
	check(os.RemoveAll(s.dir))
	return ms
}

func (s *set) create() {
	check(os.MkdirAll(s.dir, 0o755))
	data := make([]byte, 100)
	s.created = rate(len(s.names), func() {
		for _, name := range s.names {
			check(os.WriteFile(name, data, 0o644))
		}
	})
}

// read measures the stats (after the settle), the cached stats and the
// listings.
func (s *set) read() []measure {
	stat := rate(len(s.names), func() {
		for _, name := range s.names {
			_, err := os.Stat(name)
			check(err)
		}
	})
	cached := rate(10*len(s.names), func() {
		for range 10 {
			for _, name := range s.names {
				_, err := os.Stat(name)
				check(err)
			}
		}
	})
	const lists = 20
	listed := rate(lists*len(s.names), func() {
		for range lists {
			entries, err := os.ReadDir(s.dir)
			check(err)
			if len(entries) != len(s.names) {
				check(fmt.Errorf("listed %d entries in %s, want %d", len(entries), s.dir, len(s.names)))
			}
		}
	})
	return []measure{{"stat", stat}, {"stat-cached", cached}, {"readdir-entries", listed}}
}

func rate(ops int, fn func()) float64 {
	start := time.Now()
	fn()
	return float64(ops) / time.Since(start).Seconds()
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "metaops:", err)
		os.Exit(1)
	}
}
