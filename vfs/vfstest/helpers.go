package vfstest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// waitBound bounds every wait of the suite for a stream or call that must
// end: long enough for a loaded machine, short enough to name a hang.
const waitBound = 20 * time.Second

// fixture returns the tree most checks run on. Its names exercise the
// order rules: "/src" < "/src-old" < "/src.bak" as paths, while a walk in
// directory order would put "/src/..." first; "/agent" and "/agent-tools"
// test segment prefixes.
func fixture() map[string][]byte {
	return map[string][]byte{
		"/README.md":             []byte("# julyfs\nTODO: write the readme\n"),
		"/agent/skills/s.md":     []byte("skill\n"),
		"/agent-tools/t.md":      []byte("tool TODO\n"),
		"/docs/guide.md":         []byte("# Guide\n\nTODO docs\nend"),
		"/docs/with space.md":    []byte("spaced TODO\n"),
		"/docs/\u00fcn\u00ef.md": []byte("unicode \u00fc\n"),
		"/src/a.ts":              []byte("import x\nTODO: one\nconst y = 1\nTODO: one\n"),
		"/src/b.js":              []byte("// TODO js\n"),
		"/src/nested/c.ts":       []byte("todo lower\nTODO upper\n"),
		"/src/nested/deep/d.ts":  []byte("deep\n"),
		"/src-old/e.ts":          []byte("TODO old\n"),
		"/src.bak":               []byte("TODO bak\n"),
	}
}

// seedPaths returns the sorted file paths of files.
func seedPaths(files map[string][]byte) []string { return slices.Sorted(maps.Keys(files)) }

// collect drains seq, checking that nothing follows an error, and returns
// the elements and the final error.
func collect[E any](t T, call string, seq iter.Seq2[E, error]) ([]E, error) {
	t.Helper()
	var items []E
	var firstErr error
	for v, err := range seq {
		if firstErr != nil {
			t.Errorf("%s: element %v after error %v; an error must be the last element", call, v, firstErr)
			break
		}
		if err != nil {
			firstErr = err
			continue
		}
		items = append(items, v)
	}
	return items, firstErr
}

// checkPath reports a yielded path that is not absolute and clean.
func checkPath(t T, call, p string) {
	t.Helper()
	if p == "" || p[0] != '/' || vfs.Clean(p) != p {
		t.Errorf("%s yielded path %q, which is not absolute and clean", call, p)
	}
}

// entries drains a List or Glob stream and checks the stream rules: clean
// paths, strictly increasing (sorted and unique), kind file or directory
// (or missing for a link: one that dangles).
func entries(t T, call string, seq iter.Seq2[vfs.DirEntry, error]) ([]vfs.DirEntry, error) {
	t.Helper()
	es, err := collect(t, call, seq)
	for i, e := range es {
		checkPath(t, call, e.Path)
		if e.Kind != vfs.KindFile && e.Kind != vfs.KindDir && !(e.Link && e.Kind == vfs.KindMissing) {
			t.Errorf("%s yielded %v with kind %v, want file or directory", call, e.Path, e.Kind)
		}
		if i > 0 && es[i-1].Path >= e.Path {
			t.Errorf("%s yielded %q after %q: not sorted and unique", call, e.Path, es[i-1].Path)
		}
	}
	return es, err
}

// mustEntries is entries for a stream that must not fail.
func mustEntries(t T, call string, seq iter.Seq2[vfs.DirEntry, error]) []vfs.DirEntry {
	t.Helper()
	es, err := entries(t, call, seq)
	if err != nil {
		t.Errorf("%s failed: %v", call, err)
	}
	return es
}

// grepHits drains a Grep stream and checks its rules: clean paths, sorted
// by path then line, line numbers from 1, no line terminator in Line.
func grepHits(t T, call string, seq iter.Seq2[vfs.GrepResult, error]) ([]vfs.GrepResult, error) {
	t.Helper()
	hs, err := collect(t, call, seq)
	for i, h := range hs {
		checkPath(t, call, h.Path)
		if h.LineNumber < 1 {
			t.Errorf("%s yielded %+v: line numbers start at 1", call, h)
		}
		if strings.Contains(h.Line, "\n") {
			t.Errorf("%s yielded %+v: Line holds a newline", call, h)
		}
		if i > 0 && vfs.CompareGrepResults(hs[i-1], h) >= 0 {
			t.Errorf("%s yielded %+v after %+v: not sorted by path then line", call, h, hs[i-1])
		}
	}
	return hs, err
}

func mustGrep(t T, call string, seq iter.Seq2[vfs.GrepResult, error]) []vfs.GrepResult {
	t.Helper()
	hs, err := grepHits(t, call, seq)
	if err != nil {
		t.Errorf("%s failed: %v", call, err)
	}
	return hs
}

// searchHits drains a Search stream and checks its order.
func searchHits(t T, call string, seq iter.Seq2[vfs.SearchResult, error]) ([]vfs.SearchResult, error) {
	t.Helper()
	rs, err := collect(t, call, seq)
	for i, r := range rs {
		checkPath(t, call, r.Path)
		if i > 0 && vfs.CompareSearchResults(rs[i-1], r) > 0 {
			t.Errorf("%s yielded %+v after %+v: not by score descending then path", call, r, rs[i-1])
		}
	}
	return rs, err
}

func listCall(p string) string            { return fmt.Sprintf("List(%q)", p) }
func globCall(pattern, dir string) string { return fmt.Sprintf("Glob(%q, %q)", pattern, dir) }
func grepCall(q vfs.GrepQuery) string     { return fmt.Sprintf("Grep(%+v)", q) }

// wantError checks that err is a *vfs.PathError whose message is msg and
// which matches sentinel with errors.Is.
func wantError(t T, call string, err error, sentinel error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s = nil error, want %q", call, msg)
		return
	}
	if err.Error() != msg {
		t.Errorf("%s = error %q, want %q", call, err.Error(), msg)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("%s = error %q, which is not errors.Is %v", call, err, sentinel)
	}
	var pe *vfs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("%s = error %q (%T), want a *vfs.PathError", call, err, err)
	}
}

// stat calls Stat and reports an error.
func stat(t T, fsys vfs.FileSystem, p string) vfs.FileInfo {
	t.Helper()
	info, err := fsys.Stat(t.Context(), p)
	if err != nil {
		t.Errorf("Stat(%q) failed: %v", p, err)
	}
	return info
}

// wantKind checks Stat(p).Kind and that Stat names the clean path.
func wantKind(t T, fsys vfs.FileSystem, p string, kind vfs.EntryKind) {
	t.Helper()
	info := stat(t, fsys, p)
	if info.Kind != kind {
		t.Errorf("Stat(%q).Kind = %v, want %v", p, info.Kind, kind)
	}
	if want := vfs.Clean(p); info.Path != want {
		t.Errorf("Stat(%q).Path = %q, want %q", p, info.Path, want)
	}
}

// wantContent checks that Read(p) returns data.
func wantContent(t T, fsys vfs.FileSystem, p string, data []byte) {
	t.Helper()
	got, err := fsys.Read(t.Context(), p)
	if err != nil {
		t.Errorf("Read(%q) failed: %v", p, err)
		return
	}
	if string(got) != string(data) {
		t.Errorf("Read(%q) = %s, want %s", p, short(got), short(data))
	}
}

// short quotes data, eliding the middle of long contents.
func short(data []byte) string {
	if len(data) > 80 {
		return fmt.Sprintf("%q...(%d bytes)...%q", data[:40], len(data), data[len(data)-20:])
	}
	return fmt.Sprintf("%q", data)
}

// pathsOf returns the paths of es.
func pathsOf(es []vfs.DirEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Path
	}
	return out
}

// within runs f in a goroutine and waits for it up to waitBound; false
// means it hung (and is reported).
func within(t T, what string, f func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer recoverTo(t, what)
		f()
	}()
	select {
	case <-done:
		return true
	case <-time.After(waitBound):
		t.Errorf("%s did not return within %v", what, waitBound)
		return false
	}
}

// recoverTo reports a panic of a goroutine the suite started, which would
// otherwise end the whole process.
func recoverTo(t T, what string) {
	if r := recover(); r != nil {
		t.Errorf("%s panicked: %v\n%s", what, r, debug.Stack())
	}
}

// settleBound bounds the wait for abandoned streams' goroutines to exit.
const settleBound = 10 * time.Second

// settles reports whether the goroutine count falls back to at most limit
// within waitBound.
func settles(limit int) (int, bool) {
	deadline := time.Now().Add(settleBound)
	for {
		n := runtime.NumGoroutine()
		if n <= limit {
			return n, true
		}
		if time.Now().After(deadline) {
			return n, false
		}
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
}

func cancelledContext(t T) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx
}
