package vfstest

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/julyfs/julyfs/vfs"
)

// stream is one stream-producing call, reduced to what the stream checks
// need.
type stream struct {
	name string
	run  func(ctx context.Context, fsys vfs.FileSystem) iter.Seq2[any, error]
}

func erase[E any](seq iter.Seq2[E, error]) iter.Seq2[any, error] {
	return func(yield func(any, error) bool) {
		for v, err := range seq {
			if !yield(v, err) {
				return
			}
		}
	}
}

func streams() []stream {
	return []stream{
		{`List("/")`, func(ctx context.Context, f vfs.FileSystem) iter.Seq2[any, error] { return erase(f.List(ctx, "/")) }},
		{`Glob("**", "/")`, func(ctx context.Context, f vfs.FileSystem) iter.Seq2[any, error] {
			return erase(f.Glob(ctx, "**", "/"))
		}},
		{`Grep({Pattern:"TODO"})`, func(ctx context.Context, f vfs.FileSystem) iter.Seq2[any, error] {
			return erase(f.Grep(ctx, vfs.GrepQuery{Pattern: "TODO"}))
		}},
		{`Grep({Pattern:"(?i)o|e$"})`, func(ctx context.Context, f vfs.FileSystem) iter.Seq2[any, error] {
			return erase(f.Grep(ctx, vfs.GrepQuery{Pattern: "(?i)o|e$"}))
		}},
		{`Search({Query:"TODO"})`, func(ctx context.Context, f vfs.FileSystem) iter.Seq2[any, error] {
			return erase(f.Search(ctx, vfs.SearchQuery{Query: "TODO"}))
		}},
	}
}

// breakAfter ranges over seq and breaks after n elements, reporting a
// stream that panics or keeps yielding after the break.
func breakAfter(t T, call string, seq iter.Seq2[any, error], n int) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: breaking out of the loop after %d elements panicked: %v", call, n, r)
		}
	}()
	i := 0
	for range seq {
		if i++; i >= n {
			break
		}
	}
}

// leakRounds is how many times a stream is abandoned before counting
// goroutines; a stream that leaks one goroutine per use overshoots the
// margin, noise from tests running in parallel does not.
const (
	leakRounds = 64
	leakMargin = 32
)

func checkBreakEarly(t T, newFS NewFunc, opts Options) {
	fsys := newFS(t, fixture())
	for _, s := range streams() {
		runtime.GC()
		before := runtime.NumGoroutine()
		for range leakRounds {
			breakAfter(t, s.name, s.run(t.Context(), fsys), 1)
		}
		for range leakRounds / 4 {
			breakAfter(t, s.name, s.run(t.Context(), fsys), 3)
		}
		if n, ok := settles(before + leakMargin); !ok {
			t.Errorf("%s: %d goroutines after breaking out of %d streams, %d before: the stream leaks", s.name, n, leakRounds+leakRounds/4, before)
		}
	}
	// The tree still answers after abandoned streams.
	if !opts.NoFiles {
		wantContent(t, fsys, "/src/a.ts", fixture()["/src/a.ts"])
	}
}

// bigTree is the fixture plus enough files that a grep runs in parallel
// and a cancelled one has work left to stop.
func bigTree() map[string][]byte {
	files := fixture()
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "line %d TODO item\n", i)
	}
	for i := range 120 {
		files[fmt.Sprintf("/big/d%02d/f%03d.txt", i%10, i)] = []byte(b.String())
	}
	return files
}

func checkCancelled(t T, newFS NewFunc, opts Options) {
	fsys := newFS(t, fixture())
	ctx := cancelledContext(t)
	for _, s := range streams() {
		var items []any
		var err error
		if !within(t, s.name+" with a cancelled context", func() { items, err = collect(t, s.name, s.run(ctx, fsys)) }) {
			continue
		}
		if err == nil && len(items) > 0 {
			t.Errorf("%s with a cancelled context yielded %d elements and no error; want an error or nothing", s.name, len(items))
		}
	}
	within(t, "Stat, Read, Write and Delete with a cancelled context", func() {
		fsys.Stat(ctx, "/src/a.ts")
		fsys.Read(ctx, "/src/a.ts")
		if !opts.readOnly() {
			fsys.Write(ctx, "/cancelled.txt", []byte("x"))
			if !opts.NoDelete {
				fsys.Delete(ctx, "/cancelled.txt")
			}
		}
	})
}

func checkCancelMidway(t T, newFS NewFunc) {
	fsys := newFS(t, bigTree())
	runtime.GC()
	before := runtime.NumGoroutine()
	rounds := 0
	for _, s := range streams() {
		for range leakRounds / 8 {
			rounds++
			ctx, cancel := context.WithCancel(t.Context())
			within(t, s.name+" cancelled after its first element", func() {
				first := true
				for _, err := range s.run(ctx, fsys) {
					if err != nil {
						break
					}
					if first {
						cancel()
						first = false
					}
				}
			})
			cancel()
		}
	}
	if n, ok := settles(before + leakMargin); !ok {
		t.Errorf("%d goroutines after cancelling %d streams midway, %d before: a stream leaks", n, rounds, before)
	}
}

// Bounds of the concurrency check: small enough for -race on a shared
// machine, large enough to interleave.
const (
	concWriters = 4
	concReaders = 4
	concOps     = 25
)

func sharedValue(w, i int) string {
	return fmt.Sprintf("shared w%d i%02d %s\n", w, i, strings.Repeat("x", w*7+i))
}

func checkConcurrent(t T, newFS NewFunc, opts Options) {
	files := fixture()
	files["/conc/shared"] = []byte("shared init\n")
	fsys := newFS(t, files)
	ctx := t.Context()
	allowed := map[string]bool{"shared init\n": true}
	for w := range concWriters {
		for i := range concOps {
			allowed[sharedValue(w, i)] = true
		}
	}
	if opts.NoFiles {
		allowed = nil
	}
	writable := !opts.readOnly()
	canDelete := writable && !opts.NoDelete
	var wg sync.WaitGroup
	if writable {
		for w := range concWriters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer recoverTo(t, "a concurrent writer")
				for i := range concOps {
					p := fmt.Sprintf("/conc/w%d/f%02d", w, i)
					if err := fsys.Write(ctx, p, []byte(p+"\n")); err != nil {
						t.Errorf("Write(%q) failed: %v", p, err)
					}
					if err := fsys.Write(ctx, "/conc/shared", []byte(sharedValue(w, i))); err != nil {
						t.Errorf("Write(\"/conc/shared\") failed: %v", err)
					}
				}
				if canDelete {
					for i := 0; i < concOps; i += 2 {
						p := fmt.Sprintf("/conc/w%d/f%02d", w, i)
						if err := fsys.Delete(ctx, p); err != nil {
							t.Errorf("Delete(%q) failed: %v", p, err)
						}
					}
				}
			}()
		}
	}
	for r := range concReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer recoverTo(t, "a concurrent reader")
			for i := range concOps {
				concRead(t, fsys, allowed, r, i)
			}
		}()
	}
	wg.Wait()
	if opts.NoFiles {
		return
	}
	data, err := fsys.Read(ctx, "/conc/shared")
	if err != nil || !allowed[string(data)] {
		t.Errorf("Read(\"/conc/shared\") = %s, %v after the writers finished; want one written value", short(data), err)
	}
	if !writable {
		return
	}
	for w := range concWriters {
		var want []string
		for i := range concOps {
			p := fmt.Sprintf("/conc/w%d/f%02d", w, i)
			if canDelete && i%2 == 0 {
				wantKind(t, fsys, p, vfs.KindMissing)
				continue
			}
			want = append(want, p)
			wantContent(t, fsys, p, []byte(p+"\n"))
		}
		d := fmt.Sprintf("/conc/w%d", w)
		if got := pathsOf(mustEntries(t, listCall(d), fsys.List(ctx, d))); !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", d, got, want)
		}
	}
}

// concRead is one round of a concurrent reader: every answer must be
// whole and well-formed while writers run.
func concRead(t T, fsys vfs.FileSystem, allowed map[string]bool, r, i int) {
	ctx := t.Context()
	data, err := fsys.Read(ctx, "/conc/shared")
	switch {
	case allowed == nil:
		if vfs.KindOf(err) != vfs.KindNotFound {
			t.Errorf("Read(\"/conc/shared\") = %s, %v on an empty tree, want not found", short(data), err)
		}
	case err != nil || !allowed[string(data)]:
		t.Errorf("Read(\"/conc/shared\") = %s, %v during writes; want one whole written value", short(data), err)
	}
	if info, err := fsys.Stat(ctx, "/conc/shared"); err != nil || (allowed != nil && info.Kind != vfs.KindFile) {
		t.Errorf("Stat(\"/conc/shared\") = %+v, %v during writes", info, err)
	}
	es := mustEntries(t, listCall("/conc"), fsys.List(ctx, "/conc"))
	if allowed != nil && !slices.Contains(es, file("/conc/shared")) {
		t.Errorf("List(\"/conc\") = %v during writes, missing /conc/shared", es)
	}
	mustEntries(t, globCall("w*/*", "/conc"), fsys.Glob(ctx, "w*/*", "/conc"))
	q := vfs.GrepQuery{Pattern: "^shared", Path: "/conc/shared"}
	hs := mustGrep(t, grepCall(q), fsys.Grep(ctx, q))
	if allowed != nil && (len(hs) != 1 || !allowed[hs[0].Line+"\n"]) {
		t.Errorf("%s = %v during writes, want one whole line", grepCall(q), hs)
	}
	switch (r + i) % 3 {
	case 0:
		mustGrep(t, grepCall(vfs.GrepQuery{Pattern: "w[0-9]"}), fsys.Grep(ctx, vfs.GrepQuery{Pattern: "w[0-9]", Path: "/conc"}))
	case 1:
		mustEntries(t, globCall("**", "/"), fsys.Glob(ctx, "**", "/"))
	case 2:
		if allowed != nil {
			wantContent(t, fsys, "/src/a.ts", fixture()["/src/a.ts"])
		}
	}
}

func checkEmptyWalks(t T, newFS NewFunc) {
	fsys := newFS(t, fixture())
	ctx := t.Context()
	for _, d := range append(slices.Clone(fixtureDirs), seedPaths(fixture())...) {
		if got := mustEntries(t, listCall(d), fsys.List(ctx, d)); len(got) != 0 {
			t.Errorf("%s = %v on an empty tree, want nothing", listCall(d), got)
		}
		if got := mustEntries(t, globCall("**", d), fsys.Glob(ctx, "**", d)); len(got) != 0 {
			t.Errorf("%s = %v on an empty tree, want nothing", globCall("**", d), got)
		}
		grepCase(t, fsys, vfs.GrepQuery{Pattern: "", Path: d}, nil)
		if d != "/" {
			wantKind(t, fsys, d, vfs.KindMissing)
		}
	}
}

func checkEmptyReads(t T, newFS NewFunc) {
	fsys := newFS(t, fixture())
	for _, p := range append(seedPaths(fixture()), missingPaths...) {
		_, err := fsys.Read(t.Context(), p)
		wantError(t, fmt.Sprintf("Read(%q)", p), err, vfs.ErrNotFound, "not found: "+p)
	}
	for _, p := range missingSpellings {
		_, err := fsys.Read(t.Context(), p)
		wantError(t, fmt.Sprintf("Read(%q)", p), err, vfs.ErrNotFound, "not found: /nope")
	}
}
