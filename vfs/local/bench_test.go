package local_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

// genTree writes a deterministic Go-like tree of n files (about 8 KiB
// each, 20 per directory, three levels deep) under dir and returns its
// total size in bytes.
func genTree(tb testing.TB, dir string, n int) int64 {
	tb.Helper()
	r := rand.New(rand.NewPCG(uint64(n), 7))
	words := strings.Fields("func return if err nil for range var const type struct interface " +
		"package import map string int byte error context ctx path data buf len cap make append " +
		"main init test bench helper value := = { } ( ) x y i n ok // the a of to is")
	rare := strings.Fields("unsafe Unsafe UNSAFE TODO FIXME XXX 2024.01 12:30") // about 1 word in 300
	var total int64
	var b strings.Builder
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i/400), fmt.Sprintf("s%02d", i/20%20), fmt.Sprintf("f%04d.go", i))
		if i%10 == 9 {
			p = strings.TrimSuffix(p, ".go") + ".txt"
		}
		b.Reset()
		for b.Len() < 8192 {
			b.WriteString("\t")
			for range 3 + r.IntN(8) {
				if r.IntN(300) == 0 {
					b.WriteString(rare[r.IntN(len(rare))])
				} else {
					b.WriteString(words[r.IntN(len(words))])
				}
				b.WriteByte(' ')
			}
			b.WriteString("\n")
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
		total += int64(b.Len())
	}
	return total
}

var benchQueries = []struct {
	name string
	q    vfs.GrepQuery
}{
	{"literal", vfs.GrepQuery{Pattern: "func main"}},
	{"foldWord", vfs.GrepQuery{Pattern: "unsafe", CaseInsensitive: true}},
	{"alternation", vfs.GrepQuery{Pattern: "TODO|FIXME|XXX"}},
	{"literalFree", vfs.GrepQuery{Pattern: "[0-9]{4}[.:][0-9]{2}"}},
}

func drainGrep(b *testing.B, fsys vfs.FileSystem, q vfs.GrepQuery) int {
	n := 0
	for _, err := range fsys.Grep(context.Background(), q) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// BenchmarkGrep greps a generated 2000-file tree (16 MiB) on disk through
// local, and the same files in memory through temp.
func BenchmarkGrep(b *testing.B) {
	dir := b.TempDir()
	size := genTree(b, dir, 2000)
	lfs, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer lfs.Close()
	files := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			r, _ := filepath.Rel(dir, p)
			files["/"+r] = data
		}
		return nil
	})
	tfs, err := temp.New(files)
	if err != nil {
		b.Fatal(err)
	}
	for _, bq := range benchQueries {
		for _, tree := range []struct {
			name string
			fsys vfs.FileSystem
		}{{"local", lfs}, {"temp", tfs}} {
			b.Run(tree.name+"/"+bq.name, func(b *testing.B) {
				b.SetBytes(size)
				hits := 0
				for b.Loop() {
					hits = drainGrep(b, tree.fsys, bq.q)
				}
				b.ReportMetric(float64(hits), "hits")
			})
		}
	}
}

// BenchmarkGlob globs '**/*.go' over the generated tree through local.
func BenchmarkGlob(b *testing.B) {
	dir := b.TempDir()
	genTree(b, dir, 2000)
	lfs, err := local.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer lfs.Close()
	for b.Loop() {
		n := 0
		for _, err := range lfs.Glob(context.Background(), "**/*.go", "/") {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1800 {
			b.Fatalf("Glob matched %d files, want 1800", n)
		}
	}
}

// BenchmarkGrepPeakHeap reports the peak heap while grepping trees of two
// sizes (the hits are consumed, not kept): it should not grow with the
// tree. The collector runs at GOGC=5 meanwhile, so the heap tracks what is
// live rather than the collector's pacing (whose 4 MiB minimum heap would
// otherwise hide a small tree's figure).
func BenchmarkGrepPeakHeap(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	for _, n := range []int{1000, 8000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			genTree(b, dir, n)
			lfs, err := local.New(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer lfs.Close()
			var peak uint64
			for b.Loop() {
				runtime.GC()
				stop := sampleHeap(&peak)
				drainGrep(b, lfs, vfs.GrepQuery{Pattern: "unsafe", CaseInsensitive: true})
				stop()
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// sampleHeap records the largest live heap seen until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
