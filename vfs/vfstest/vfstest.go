// Package vfstest is the conformance suite of the julyfs filesystem
// contract: every rule of the contract that applies to a single tree,
// written once and run against every backend in this module (vfs/temp,
// vfs/local, vfs/union, vfs/overlay, vfs/readonly, vfs/index,
// vfs/hostfiles over both stores, vfs/aferofs, and plugin-proxied trees,
// the git and archive plugins included), and first against the plain
// [Reference] tree so the suite itself is checked: its own tests also run
// checks on References mutated to break one rule each and require the
// check of that rule to fail.
//
// A backend's tests call [Run] with a constructor for a fresh tree seeded
// with exactly the given files:
//
//	func TestConformance(t *testing.T) {
//		vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
//			fsys, err := temp.New(files)
//			if err != nil {
//				t.Fatal(err)
//			}
//			return fsys
//		}, vfstest.Options{})
//	}
//
// Abilities a backend lacks are declared in [Options], never skipped
// silently: a read-only tree must fail every write with "read-only mount",
// a tree that cannot delete must fail Delete with "delete not supported".
// The optional capabilities (vfs.RangeReader, vfs.Notifier, ...) need no
// declaration: the Capability checks go through the vfs helpers, so a
// tree is checked with its method or with the helper's answer, and
// Capability/everyPath holds a tree to vfs's rule that it offers a
// capability only where it honours it for every path.
//
// Outside go test (a command that checks a plugin, say), [Checks] lists the
// same cases over the small [T] interface and [Test] runs them all and
// returns every failure at once, as testing/fstest.TestFS does.
//
// # Concurrency
//
// The checks of one run are sequential, except the concurrency check, which
// drives the tree from several goroutines and is meant for -race. The
// goroutine-leak checks count runtime.NumGoroutine with a margin so other
// tests running in parallel do not make them fail, but a backend leaking a
// goroutine per stream always does.
//
// # Errors
//
// Failure messages name the call and compare whole values, as
// `Stat("/a") = {...}, want {...}`.
package vfstest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/julyfs/julyfs/vfs"
)

// Options declares what a backend cannot do. The zero value is a mutable
// tree with every verb, whose directories exist only while a file is under
// them and which has no search index.
type Options struct {
	// ReadOnly declares that Write and Delete fail with
	// "read-only mount: <p>" (vfs.ErrReadOnly) and change nothing.
	ReadOnly bool
	// NoDelete declares that Delete fails with "delete not supported: <p>"
	// (vfs.ErrDeleteNotSupported) and changes nothing; Write works.
	NoDelete bool
	// NoFiles declares a tree that holds no files whatever it is seeded
	// with (the contract's emptyFs): every path but "/" is missing and
	// writes fail as with ReadOnly.
	NoFiles bool
	// KeepsEmptyDirs declares that deleting the last file under a
	// directory leaves the directory in place (host disk); without it the
	// directory must vanish from List and Stat.
	KeepsEmptyDirs bool
	// HasIndex declares that Search may yield results; the suite then
	// checks their order and MaxResults instead of requiring none.
	HasIndex bool
	// HostGrepRoot declares a tree over a host directory: Grep of a
	// missing scope fails with "not found: <p>" (vfs.ErrNotFound), as
	// the contract says of a missing host search root, instead of
	// yielding nothing.
	HostGrepRoot bool
}

func (o Options) readOnly() bool { return o.ReadOnly || o.NoFiles }

// T is the part of *testing.T the checks use, so they can run outside go
// test. Fatalf must stop the check's goroutine (runtime.Goexit), as
// testing.T.FailNow does; Errorf may be called from several goroutines.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Context() context.Context
}

// NewFunc builds a fresh tree holding exactly files (absolute paths to
// contents). It reports a setup failure with t.Fatalf.
type NewFunc func(t T, files map[string][]byte) vfs.FileSystem

// Check is one named conformance case.
type Check struct {
	// Name is "Verb/rule", usable as a subtest name.
	Name string
	// Run checks one rule on trees built by newFS, reporting to t.
	Run func(t T, newFS NewFunc)
}

// Run runs every check of [Checks] for opts as a subtest of t, each on
// fresh trees built by newFS.
func Run(t *testing.T, newFS func(t *testing.T, files map[string][]byte) vfs.FileSystem, opts Options) {
	t.Helper()
	for _, c := range Checks(opts) {
		t.Run(c.Name, func(t *testing.T) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("panic: %v\n%s", r, debug.Stack())
				}
			}()
			c.Run(t, func(_ T, files map[string][]byte) vfs.FileSystem { return newFS(t, files) })
		})
	}
}

// Result is the outcome of one check run by [RunChecks].
type Result struct {
	Name     string
	Failures []string // empty when the check passed
}

// RunChecks runs every check for opts outside go test, each on trees built
// by newFS, and returns one Result per check in order. A check that panics
// or calls Fatalf fails and the next one runs.
func RunChecks(ctx context.Context, newFS func(files map[string][]byte) (vfs.FileSystem, error), opts Options) []Result {
	var results []Result
	for _, c := range Checks(opts) {
		rt := &runT{ctx: ctx}
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() {
				if r := recover(); r != nil {
					rt.Errorf("panic: %v\n%s", r, debug.Stack())
				}
			}()
			c.Run(rt, func(t T, files map[string][]byte) vfs.FileSystem {
				fsys, err := newFS(files)
				if err != nil {
					t.Fatalf("newFS: %v", err)
				}
				return fsys
			})
		}()
		<-done
		results = append(results, Result{Name: c.Name, Failures: rt.failures()})
	}
	return results
}

// Test runs every check for opts and returns every failure at once, one
// "name: message" per line joined with errors.Join, or nil when the tree
// conforms.
func Test(ctx context.Context, newFS func(files map[string][]byte) (vfs.FileSystem, error), opts Options) error {
	var errs []error
	for _, r := range RunChecks(ctx, newFS, opts) {
		for _, f := range r.Failures {
			errs = append(errs, fmt.Errorf("%s: %s", r.Name, f))
		}
	}
	return errors.Join(errs...)
}

// runT is the T of RunChecks.
type runT struct {
	ctx    context.Context
	mu     sync.Mutex
	msgs   []string
	sealed bool // after seal: what an abandoned check says later is dropped
}

func (t *runT) Helper()                  {}
func (t *runT) Context() context.Context { return t.ctx }

func (t *runT) Errorf(format string, args ...any) {
	t.mu.Lock()
	if !t.sealed {
		t.msgs = append(t.msgs, fmt.Sprintf(format, args...))
	}
	t.mu.Unlock()
}

func (t *runT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *runT) failures() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.msgs
}

// seal returns the failures so far and drops any later ones: a check
// abandoned at its deadline goes on in its goroutine, and what it says
// once its context is cancelled ("context canceled" from every call) is
// not its result.
func (t *runT) seal() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sealed = true
	return t.msgs
}
