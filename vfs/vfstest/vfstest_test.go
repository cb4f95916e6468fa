package vfstest_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func TestReference(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return vfstest.NewReference(files)
	}, vfstest.Options{})
}

func TestReferenceOutsideGoTest(t *testing.T) {
	err := vfstest.Test(t.Context(), func(files map[string][]byte) (vfs.FileSystem, error) {
		return vfstest.NewReference(files), nil
	}, vfstest.Options{})
	assert.NoError(t, err, "Test(reference)")
}

// mutant is the reference with one rule broken; every override below
// breaks exactly one rule the suite must catch.
type mutant struct {
	*vfstest.Reference
	list   func(r *vfstest.Reference, ctx context.Context, p string) iter.Seq2[vfs.DirEntry, error]
	stat   func(r *vfstest.Reference, ctx context.Context, p string) (vfs.FileInfo, error)
	glob   func(r *vfstest.Reference, ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error]
	read   func(r *vfstest.Reference, ctx context.Context, p string) ([]byte, error)
	grep   func(r *vfstest.Reference, ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error]
	write  func(r *vfstest.Reference, ctx context.Context, p string, data []byte) error
	delete func(r *vfstest.Reference, ctx context.Context, p string) error
	search func(r *vfstest.Reference, ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error]
}

func (m *mutant) List(ctx context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
	if m.list != nil {
		return m.list(m.Reference, ctx, p)
	}
	return m.Reference.List(ctx, p)
}

func (m *mutant) Stat(ctx context.Context, p string) (vfs.FileInfo, error) {
	if m.stat != nil {
		return m.stat(m.Reference, ctx, p)
	}
	return m.Reference.Stat(ctx, p)
}

func (m *mutant) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	if m.glob != nil {
		return m.glob(m.Reference, ctx, pattern, dir)
	}
	return m.Reference.Glob(ctx, pattern, dir)
}

func (m *mutant) Read(ctx context.Context, p string) ([]byte, error) {
	if m.read != nil {
		return m.read(m.Reference, ctx, p)
	}
	return m.Reference.Read(ctx, p)
}

func (m *mutant) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	if m.grep != nil {
		return m.grep(m.Reference, ctx, q)
	}
	return m.Reference.Grep(ctx, q)
}

func (m *mutant) Write(ctx context.Context, p string, data []byte) error {
	if m.write != nil {
		return m.write(m.Reference, ctx, p, data)
	}
	return m.Reference.Write(ctx, p, data)
}

func (m *mutant) Delete(ctx context.Context, p string) error {
	if m.delete != nil {
		return m.delete(m.Reference, ctx, p)
	}
	return m.Reference.Delete(ctx, p)
}

func (m *mutant) Search(ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
	if m.search != nil {
		return m.search(m.Reference, ctx, q)
	}
	return m.Reference.Search(ctx, q)
}

func reversed[E any](seq iter.Seq2[E, error]) iter.Seq2[E, error] {
	return func(yield func(E, error) bool) {
		var all []E
		for v, err := range seq {
			if err != nil {
				yield(v, err)
				return
			}
			all = append(all, v)
		}
		slices.Reverse(all)
		for _, v := range all {
			if !yield(v, nil) {
				return
			}
		}
	}
}

// TestSuiteCatches checks the suite itself: each mutant breaks one rule,
// and the named check must fail on it.
func TestSuiteCatches(t *testing.T) {
	for _, c := range []struct {
		name  string
		m     mutant
		opts  vfstest.Options
		check string // a check that must fail
	}{
		{"unsorted list", mutant{list: func(r *vfstest.Reference, ctx context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
			return reversed(r.List(ctx, p))
		}}, vfstest.Options{}, "List/children"},
		{"duplicate glob entries", mutant{glob: func(r *vfstest.Reference, ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
			return func(yield func(vfs.DirEntry, error) bool) {
				for e, err := range r.Glob(ctx, pattern, dir) {
					if !yield(e, err) || err != nil || !yield(e, nil) {
						return
					}
				}
			}
		}}, vfstest.Options{}, "Glob/relativeToDir"},
		{"stat of a missing path fails", mutant{stat: func(r *vfstest.Reference, ctx context.Context, p string) (vfs.FileInfo, error) {
			info, err := r.Stat(ctx, p)
			if info.Kind == vfs.KindMissing {
				return info, vfs.NotFound(info.Path)
			}
			return info, err
		}}, vfstest.Options{}, "Stat/dirsAndMissing"},
		{"untyped not-found error", mutant{read: func(r *vfstest.Reference, ctx context.Context, p string) ([]byte, error) {
			data, err := r.Read(ctx, p)
			if err != nil {
				return nil, errors.New(err.Error())
			}
			return data, nil
		}}, vfstest.Options{}, "Read/missingOrDir"},
		{"no normalization", mutant{stat: func(r *vfstest.Reference, ctx context.Context, p string) (vfs.FileInfo, error) {
			if p != vfs.Clean(p) {
				return vfs.FileInfo{Path: p, Kind: vfs.KindMissing}, nil
			}
			return r.Stat(ctx, p)
		}}, vfstest.Options{}, "Normalize/reads"},
		{"glob by basename anywhere", mutant{glob: func(r *vfstest.Reference, ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
			return r.Glob(ctx, "**/"+pattern, dir)
		}}, vfstest.Options{}, "Glob/relativeToDir"},
		{"grep ignores maxResults", mutant{grep: func(r *vfstest.Reference, ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
			q.MaxResults = 0
			return r.Grep(ctx, q)
		}}, vfstest.Options{}, "Grep/maxResults"},
		{"grep drops repeated lines", mutant{grep: func(r *vfstest.Reference, ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
			return func(yield func(vfs.GrepResult, error) bool) {
				seen := map[string]bool{}
				for h, err := range r.Grep(ctx, q) {
					if err == nil && seen[h.Path+h.Line] {
						continue
					}
					seen[h.Path+h.Line] = true
					if !yield(h, err) {
						return
					}
				}
			}
		}}, vfstest.Options{}, "Grep/order"},
		{"grep scope by string prefix", mutant{grep: func(r *vfstest.Reference, ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
			return func(yield func(vfs.GrepResult, error) bool) {
				scope := vfs.Clean(q.Path)
				q.Path = "/"
				for h, err := range r.Grep(ctx, q) {
					if err == nil && !strings.HasPrefix(h.Path, scope) {
						continue
					}
					if !yield(h, err) {
						return
					}
				}
			}
		}}, vfstest.Options{}, "Grep/scope"},
		{"write keeps the caller's slice", mutant{}, vfstest.Options{}, ""},
		{"ReadAt off by one", mutant{}, vfstest.Options{}, "Capability/readAt"},
		{"WriteIf ignores its precondition", mutant{}, vfstest.Options{}, "Capability/writeIf"},
		{"Watch reports nothing", mutant{}, vfstest.Options{}, "Capability/watch"},
		{"MakeDir makes nothing", mutant{}, vfstest.Options{}, "Capability/dirs"},
		{"Watch hears part of the tree", mutant{}, vfstest.Options{}, "Capability/everyPath"},
		{"Stage unsupported in part of the tree", mutant{}, vfstest.Options{}, "Capability/everyPath"},
		{"constant etag", mutant{stat: func(r *vfstest.Reference, ctx context.Context, p string) (vfs.FileInfo, error) {
			info, err := r.Stat(ctx, p)
			if info.Kind == vfs.KindFile {
				info.ETag = "same"
			}
			return info, err
		}}, vfstest.Options{}, "Write/etag"},
		{"empty dirs declared kept, but removed", mutant{}, vfstest.Options{KeepsEmptyDirs: true}, "Delete/file"},
		{"read-only declared, writes succeed", mutant{}, vfstest.Options{ReadOnly: true}, "Write/readOnly"},
		{"no-delete declared, deletes succeed", mutant{}, vfstest.Options{NoDelete: true}, "Delete/notSupported"},
		{"search without index yields", mutant{search: func(r *vfstest.Reference, ctx context.Context, q vfs.SearchQuery) iter.Seq2[vfs.SearchResult, error] {
			return func(yield func(vfs.SearchResult, error) bool) {
				yield(vfs.SearchResult{Path: "/README.md", Score: 1}, nil)
			}
		}}, vfstest.Options{}, "Search/noIndex"},
		{"stream ignores cancellation", mutant{list: func(r *vfstest.Reference, _ context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
			return r.List(context.Background(), p)
		}}, vfstest.Options{}, "Stream/cancelled"},
		{"stream leaks a goroutine", mutant{list: func(r *vfstest.Reference, ctx context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
			return func(yield func(vfs.DirEntry, error) bool) {
				next, _ := iter.Pull2(r.List(ctx, p)) // never stopped
				for {
					e, err, ok := next()
					if !ok || !yield(e, err) {
						return
					}
				}
			}
		}}, vfstest.Options{}, "Stream/breakEarly"},
		{"stream yields after an error", mutant{grep: func(r *vfstest.Reference, ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
			return func(yield func(vfs.GrepResult, error) bool) {
				for h, err := range r.Grep(ctx, q) {
					if !yield(h, err) {
						return
					}
					if err != nil {
						yield(vfs.GrepResult{Path: "/x", LineNumber: 1}, nil)
						return
					}
				}
			}
		}}, vfstest.Options{}, "Grep/invalidPattern"},
		{"stream panics after break", mutant{list: func(r *vfstest.Reference, ctx context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
			return func(yield func(vfs.DirEntry, error) bool) {
				for e, err := range r.List(ctx, p) {
					yield(e, err) // ignores a break
				}
			}
		}}, vfstest.Options{}, "Stream/breakEarly"},
	} {
		t.Run(c.name, func(t *testing.T) {
			check := c.check
			newFS := func(files map[string][]byte) (vfs.FileSystem, error) {
				mm := c.m
				mm.Reference = vfstest.NewReference(files)
				return &mm, nil
			}
			if wrap, ok := capabilityMutants[c.name]; ok {
				newFS = func(files map[string][]byte) (vfs.FileSystem, error) {
					return wrap(vfstest.NewReference(files)), nil
				}
			}
			if c.name == "write keeps the caller's slice" {
				check = "Write/ownership"
				newFS = func(files map[string][]byte) (vfs.FileSystem, error) {
					return &aliasFS{Reference: vfstest.NewReference(files), stored: map[string][]byte{}}, nil
				}
			}
			failures, found := runOne(t.Context(), check, newFS, c.opts)
			if assert.True(t, found, "no check named %s for %+v", check, c.opts) &&
				assert.NotEmpty(t, failures, "check %s passed on a tree that breaks its rule", check) {
				t.Logf("%s: %s", check, failures[0])
			}
		})
	}
}

// recorder is a vfstest.T outside the testing package, as a command
// running the checks would write it.
type recorder struct {
	ctx  context.Context
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Helper()                  {}
func (r *recorder) Context() context.Context { return r.ctx }
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// runOne runs the check named name alone and returns its failures.
func runOne(ctx context.Context, name string, newFS func(map[string][]byte) (vfs.FileSystem, error), opts vfstest.Options) (failures []string, found bool) {
	for _, c := range vfstest.Checks(opts) {
		if c.Name != name {
			continue
		}
		r := &recorder{ctx: ctx}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.Run(r, func(t vfstest.T, files map[string][]byte) vfs.FileSystem {
				fsys, err := newFS(files)
				if err != nil {
					t.Fatalf("newFS: %v", err)
				}
				return fsys
			})
		}()
		<-done
		return r.msgs, true
	}
	return nil, false
}

// capabilityMutants implement an optional capability wrongly.
var capabilityMutants = map[string]func(*vfstest.Reference) vfs.FileSystem{
	"ReadAt off by one":                func(r *vfstest.Reference) vfs.FileSystem { return offByOne{r} },
	"WriteIf ignores its precondition": func(r *vfstest.Reference) vfs.FileSystem { return blindCAS{r} },
	"Watch reports nothing":            func(r *vfstest.Reference) vfs.FileSystem { return deafWatch{r} },
	"MakeDir makes nothing":            func(r *vfstest.Reference) vfs.FileSystem { return hollowDirs{r} },
	"Watch hears part of the tree": func(r *vfstest.Reference) vfs.FileSystem {
		return &partWatch{Reference: r, heard: "/watch"}
	},
	"Stage unsupported in part of the tree": func(r *vfstest.Reference) vfs.FileSystem {
		return partStage{Reference: r, deaf: "/docs"}
	},
}

// partWatch is a Notifier that hears only the writes and deletes under
// heard: what a union that claimed Notifier over a mount that is none
// would be.
type partWatch struct {
	*vfstest.Reference
	vfs.Watchers
	heard string
}

func (w *partWatch) Write(ctx context.Context, p string, data []byte) error {
	err := w.Reference.Write(ctx, p, data)
	if p = vfs.Clean(p); err == nil && vfs.HasPrefix(p, w.heard) {
		w.Notify(vfs.Change{Path: p, Op: vfs.ChangeWrite})
	}
	return err
}

func (w *partWatch) Delete(ctx context.Context, p string) error {
	err := w.Reference.Delete(ctx, p)
	if p = vfs.Clean(p); err == nil && vfs.HasPrefix(p, w.heard) {
		w.Notify(vfs.Change{Path: p, Op: vfs.ChangeDelete})
	}
	return err
}

// partStage offers Stage but answers errors.ErrUnsupported under deaf,
// which vfs.Stage passes on instead of falling back: what a union that
// answered so for a mount without a Stager would be.
type partStage struct {
	*vfstest.Reference
	deaf string
}

func (s partStage) Stage(ctx context.Context, p string, keep bool) (vfs.StagedFile, error) {
	if vfs.HasPrefix(vfs.Clean(p), s.deaf) {
		return nil, errors.ErrUnsupported
	}
	return vfs.Stage(ctx, s.Reference, p, keep)
}

// hollowDirs claims directories of its own but makes none.
type hollowDirs struct{ *vfstest.Reference }

func (hollowDirs) MakeDir(context.Context, string) error { return nil }

type offByOne struct{ *vfstest.Reference }

func (o offByOne) ReadAt(ctx context.Context, p string, b []byte, off int64) (int, error) {
	return vfs.ReadAt(ctx, o.Reference, p, b, off+1)
}

type blindCAS struct{ *vfstest.Reference }

func (b blindCAS) WriteIf(ctx context.Context, p string, data []byte, _ vfs.Precondition) (string, error) {
	return vfs.WriteIf(ctx, b.Reference, p, data, vfs.Precondition{})
}

type deafWatch struct{ *vfstest.Reference }

func (deafWatch) Watch(func(vfs.Change)) func() { return func() {} }

// aliasFS stores the caller's slice itself instead of a copy.
type aliasFS struct {
	*vfstest.Reference
	mu     sync.Mutex
	stored map[string][]byte
}

func (a *aliasFS) Write(ctx context.Context, p string, data []byte) error {
	a.mu.Lock()
	a.stored[vfs.Clean(p)] = data
	a.mu.Unlock()
	return a.Reference.Write(ctx, p, data)
}

func (a *aliasFS) Read(ctx context.Context, p string) ([]byte, error) {
	a.mu.Lock()
	data, ok := a.stored[vfs.Clean(p)]
	a.mu.Unlock()
	if ok {
		return data, nil
	}
	return a.Reference.Read(ctx, p)
}

func TestRunChecksReportsSetupAndPanics(t *testing.T) {
	results := vfstest.RunChecks(t.Context(), func(files map[string][]byte) (vfs.FileSystem, error) {
		return nil, errors.New("no backend")
	}, vfstest.Options{})
	require.NotEmpty(t, results, "RunChecks returned no results")
	for _, r := range results {
		// An empty list joins to "", which does not hold the setup error.
		assert.Contains(t, strings.Join(r.Failures, "\n"), "no backend", "%s: failures, want the setup error", r.Name)
	}
	err := vfstest.Test(t.Context(), func(files map[string][]byte) (vfs.FileSystem, error) {
		return &mutant{Reference: vfstest.NewReference(files), stat: func(*vfstest.Reference, context.Context, string) (vfs.FileInfo, error) {
			panic("boom")
		}}, nil
	}, vfstest.Options{})
	assert.ErrorContains(t, err, "panic: boom", "Test(panicking Stat), want the panic reported")
}

func TestChecksNamesUnique(t *testing.T) {
	for _, opts := range []vfstest.Options{{}, {ReadOnly: true}, {NoDelete: true}, {NoFiles: true}, {HasIndex: true, KeepsEmptyDirs: true}} {
		seen := map[string]bool{}
		for _, c := range vfstest.Checks(opts) {
			assert.False(t, seen[c.Name], "Checks(%+v) has %q twice", opts, c.Name)

			seen[c.Name] = true
		}
	}
}
