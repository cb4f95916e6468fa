package vfstest

import (
	"context"
	"fmt"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// EachOptions configures [RunEach].
type EachOptions struct {
	// Run, when set, runs only the checks whose name it matches.
	Run *regexp.Regexp
	// Timeout bounds one check (0: no bound). A check that does not end
	// in time fails with "no answer within TIMEOUT (abandoned)" and is
	// abandoned (its goroutine keeps running; its context is cancelled).
	Timeout time.Duration
}

// RunEach is [RunChecks] for a command that reports as it goes (julyfs
// conformance): it runs each selected check, calls each with its Result
// as soon as it ends, and bounds every check by eo.Timeout so a hung tree
// cannot stop the run. each is called from the calling goroutine.
func RunEach(ctx context.Context, newFS func(files map[string][]byte) (vfs.FileSystem, error), opts Options, eo EachOptions, each func(Result)) {
	for _, c := range Checks(opts) {
		if eo.Run != nil && !eo.Run.MatchString(c.Name) {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		cctx, cancel := context.WithCancel(ctx)
		rt := &runT{ctx: cctx}
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
		var timeout <-chan time.Time
		var timer *time.Timer
		if eo.Timeout > 0 {
			timer = time.NewTimer(eo.Timeout)
			timeout = timer.C
		}
		select {
		case <-done:
		case <-timeout:
			rt.Errorf("no answer within %v (abandoned)", eo.Timeout)
		case <-ctx.Done():
			rt.Errorf("interrupted: %v", ctx.Err())
		}
		if timer != nil {
			timer.Stop()
		}
		// The result is what the check said before its context is
		// cancelled: an abandoned one then fails every call it goes on
		// making.
		failures := rt.seal()
		cancel()
		each(Result{Name: c.Name, Failures: failures})
	}
}

// String renders a result on one line, "ok   NAME" or "FAIL NAME: first
// failure (and N more)".
func (r Result) String() string {
	switch len(r.Failures) {
	case 0:
		return "ok   " + r.Name
	case 1:
		return "FAIL " + r.Name + ": " + r.Failures[0]
	}
	return fmt.Sprintf("FAIL %s: %s (and %d more)", r.Name, r.Failures[0], len(r.Failures)-1)
}
