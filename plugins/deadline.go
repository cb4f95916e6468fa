package plugins

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// Deadlines: with Config.CallTimeout set, every wait of the host for its
// plugin is bounded: a unary call (Stat, ReadAt, Delete, the Open of a
// start) must be answered within it, a streaming call (List, Glob, Grep,
// Search, Read) must send each batch within it of the host asking for
// the next (time the host's caller spends on a batch does not count),
// and each chunk of a Write must be taken within it. A call that waits
// longer is cancelled and fails with an [*Error] wrapping [ErrNoAnswer]
// (which also matches context.DeadlineExceeded): "plugin NAME: List /x:
// no answer within 10s". The plugin is not restarted for it: the next
// call asks it again, and has its own deadline.

// ErrNoAnswer is the cause of a call the plugin did not answer within
// Config.CallTimeout.
var ErrNoAnswer = errors.New("no answer")

// noAnswer says that the plugin answered nothing within d.
type noAnswer struct {
	d    time.Duration
	hint string
}

func (e *noAnswer) Error() string {
	msg := "no answer within " + e.d.String()
	if e.hint != "" {
		msg += " (" + e.hint + ")"
	}
	return msg
}

func (e *noAnswer) Is(target error) bool {
	return target == ErrNoAnswer || target == context.DeadlineExceeded
}

// callTimer bounds the waits of one call by Config.CallTimeout: it runs
// while the host waits for the plugin (paused while the caller consumes a
// batch) and cancels the call's context when it fires.
type callTimer struct {
	d      time.Duration
	hint   string
	t      *time.Timer
	fired  atomic.Bool
	cancel context.CancelFunc
}

type timerKey struct{}

// timed returns ctx bounded by c's call timeout (a context that carries
// its timer, for callError and the loops that pause it) and the timer,
// whose done must be called when the call ends.
func (c *Client) timed(ctx context.Context) (context.Context, *callTimer) {
	ctx, cancel := context.WithCancel(ctx)
	ct := &callTimer{d: c.cfg.CallTimeout, hint: c.cfg.CallTimeoutHint, cancel: cancel}
	if ct.d > 0 {
		ct.t = time.AfterFunc(ct.d, func() {
			ct.fired.Store(true)
			cancel()
		})
	}
	return context.WithValue(ctx, timerKey{}, ct), ct
}

// timerOf returns the timer of a context timed made, or nil.
func timerOf(ctx context.Context) *callTimer {
	ct, _ := ctx.Value(timerKey{}).(*callTimer)
	return ct
}

// pause stops the clock while the host is not waiting for the plugin.
func (ct *callTimer) pause() {
	if ct != nil && ct.t != nil {
		ct.t.Stop()
	}
}

// resume restarts the clock, from zero, for the next wait.
func (ct *callTimer) resume() {
	if ct != nil && ct.t != nil && !ct.fired.Load() {
		ct.t.Reset(ct.d)
	}
}

// done ends the call.
func (ct *callTimer) done() {
	if ct != nil {
		ct.pause()
		ct.cancel()
	}
}

// expired returns the error of a call whose timer fired, nil otherwise.
func (ct *callTimer) expired() error {
	if ct == nil || !ct.fired.Load() {
		return nil
	}
	return &noAnswer{d: ct.d, hint: ct.hint}
}
