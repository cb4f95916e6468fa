package hostfiles_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
	"github.com/julyfs/julyfs/vfs/hostfiles/diskstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore"
	"github.com/julyfs/julyfs/vfs/hostfiles/pgstore/pgtest"
)

// The benchmarks run on both stores: "disk" in a temporary directory,
// "pg" on the server of JULYFS_TEST_POSTGRES (skipped without one). Each
// opens a fresh scope. Latencies are reported as p50/p99 metrics.

type backend struct {
	name string
	open func(b *testing.B) hostfiles.Store // another store value on the same backing
}

func backends(b *testing.B) []backend {
	dir := b.TempDir()
	out := []backend{{"disk", func(b *testing.B) hostfiles.Store {
		s, err := diskstore.Open(dir, diskstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}}}
	if url := os.Getenv(pgtest.EnvURL); url != "" {
		n := 0
		out = append(out, backend{"pg", func(b *testing.B) hostfiles.Store {
			n++ // a distinct pool per store value: another "host"
			s, err := pgstore.Open(context.Background(), url+"&application_name=bench"+strconv.Itoa(n), pgstore.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}})
	}
	return out
}

func scope() hostfiles.Scope {
	var r [6]byte
	rand.Read(r[:])
	return hostfiles.Scope("bench-" + hex.EncodeToString(r[:]))
}

func newFS(b *testing.B, s hostfiles.Store, sc hostfiles.Scope) *hostfiles.FS {
	fsys, err := hostfiles.New(s, sc)
	if err != nil {
		b.Fatal(err)
	}
	return fsys
}

// latencies collects durations and reports percentiles.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B, prefix string) {
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	p := func(q float64) float64 { return float64(l.d[int(q*float64(len(l.d)-1))].Microseconds()) }
	b.ReportMetric(p(0.50), prefix+"p50-µs")
	b.ReportMetric(p(0.99), prefix+"p99-µs")
}

var payload = []byte("a small host file, as an agent's notes would be: 64 bytes long\n")

// BenchmarkCASWrite: one writer rewriting one file; every write after the
// first is a CAS on the etag of the previous one.
func BenchmarkCASWrite(b *testing.B) {
	for _, be := range backends(b) {
		b.Run(be.name+"/1writer", func(b *testing.B) {
			fsys := newFS(b, be.open(b), scope())
			ctx := context.Background()
			var lat latencies
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if err := fsys.Write(ctx, "/f", payload); err != nil {
					b.Fatal(err)
				}
				lat.add(time.Since(t0))
			}
			b.StopTimer()
			lat.report(b, "write-")
		})
		b.Run(be.name+"/8writers-distinct", func(b *testing.B) {
			s, sc := be.open(b), scope()
			ctx := context.Background()
			var lat latencies
			var next atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range 8 {
				fsys := newFS(b, s, sc)
				p := fmt.Sprintf("/w%d", w)
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						if err := fsys.Write(ctx, p, payload); err != nil {
							b.Error(err)
							return
						}
						lat.add(time.Since(t0))
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			lat.report(b, "write-")
		})
		b.Run(be.name+"/8writers-onefile", func(b *testing.B) {
			// Each op is one successful increment by read, +1, CAS write,
			// retried on a conflict.
			s, sc := be.open(b), scope()
			ctx := context.Background()
			if _, err := s.Put(ctx, sc, "/counter", []byte("0"), vfs.Precondition{}); err != nil {
				b.Fatal(err)
			}
			var next, conflicts atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for range 8 {
				fsys := newFS(b, s, sc)
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						for {
							data, err := fsys.Read(ctx, "/counter")
							if err != nil {
								b.Error(err)
								return
							}
							v, _ := strconv.Atoi(string(data))
							err = fsys.Write(ctx, "/counter", []byte(strconv.Itoa(v+1)))
							if errors.Is(err, vfs.ErrConflict) {
								conflicts.Add(1)
								continue
							}
							if err != nil {
								b.Error(err)
								return
							}
							break
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			data, _, _ := s.Get(ctx, sc, "/counter")
			if string(data) != strconv.Itoa(b.N) {
				b.Fatalf("counter = %s after %d increments", data, b.N)
			}
			b.ReportMetric(float64(conflicts.Load())/float64(b.N), "conflicts/op")
			b.ReportMetric(float64(conflicts.Load())/float64(conflicts.Load()+int64(b.N)), "conflict-rate")
		})
	}
}

// BenchmarkRead reads one small file.
func BenchmarkRead(b *testing.B) {
	for _, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			fsys := newFS(b, be.open(b), scope())
			ctx := context.Background()
			if err := fsys.Write(ctx, "/f", payload); err != nil {
				b.Fatal(err)
			}
			var lat latencies
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := fsys.Read(ctx, "/f"); err != nil {
					b.Fatal(err)
				}
				lat.add(time.Since(t0))
			}
			b.StopTimer()
			lat.report(b, "read-")
		})
	}
}

// BenchmarkInvalidation measures a write through store value A until B's
// Notifier reports it (the cross-host change feed: inotify for disk,
// LISTEN/NOTIFY for pg).
func BenchmarkInvalidation(b *testing.B) {
	for _, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			sc := scope()
			fa, fb := newFS(b, be.open(b), sc), newFS(b, be.open(b), sc)
			ctx := context.Background()
			heard := make(chan struct{}, 1)
			cancel := fb.Watch(func(c vfs.Change) {
				if c.Path == "/f" {
					select {
					case heard <- struct{}{}:
					default:
					}
				}
			})
			defer cancel()
			var lat latencies
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				if err := fa.Write(ctx, "/f", []byte(strconv.Itoa(i))); err != nil {
					b.Fatal(err)
				}
				select {
				case <-heard:
				case <-time.After(10 * time.Second):
					b.Fatal("B did not hear A's write within 10 s")
				}
				lat.add(time.Since(t0))
			}
			b.StopTimer()
			lat.report(b, "notify-")
		})
	}
}

// BenchmarkList100k lists a directory of 100,000 files on PostgreSQL:
// the store's recursive key listing and the tree's List, with the peak
// heap growth while streaming.
func BenchmarkList100k(b *testing.B) {
	url := os.Getenv(pgtest.EnvURL)
	if url == "" {
		b.Skip(pgtest.EnvURL + " is not set")
	}
	s, err := pgstore.Open(context.Background(), url, pgstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sc := scope()
	ctx := context.Background()
	if _, err := s.Pool().Exec(ctx, `INSERT INTO julyfs_files (scope, key, data, etag, size)
		SELECT $1, '/big/f' || lpad(i::text, 6, '0') || '.md', '\x00', 'e', 1 FROM generate_series(1, 100000) AS i`, string(sc)); err != nil {
		b.Fatal(err)
	}
	defer s.Pool().Exec(ctx, `DELETE FROM julyfs_files WHERE scope = $1`, string(sc))
	fsys := newFS(b, s, sc)
	run := func(b *testing.B, list func(yield func() bool)) {
		var ms runtime.MemStats
		peak := uint64(0)
		b.ResetTimer()
		for range b.N {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			base := ms.HeapAlloc
			n := 0
			list(func() bool {
				n++
				if n%10000 == 0 {
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
				}
				return true
			})
			if n != 100000 {
				b.Fatalf("listed %d files, want 100000", n)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	}
	b.Run("store", func(b *testing.B) {
		run(b, func(yield func() bool) {
			for _, err := range s.List(ctx, sc, "/big/", "") {
				if err != nil {
					b.Fatal(err)
				}
				yield()
			}
		})
	})
	b.Run("fs", func(b *testing.B) {
		run(b, func(yield func() bool) {
			for _, err := range fsys.List(ctx, "/big") {
				if err != nil {
					b.Fatal(err)
				}
				yield()
			}
		})
	})
}
