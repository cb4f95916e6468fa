package schedule

import (
	"slices"
	"sync"
	"time"
)

// Clock is the time source of the scheduler and the reminders: real in a
// server, a [FakeClock] in tests.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine (the real clock) or in the
	// caller of FakeClock.Advance (the fake one) once d has passed. stop
	// cancels the call and reports whether it did (false: f has run or is
	// running).
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock returns the system clock.
func RealClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// FakeClock is a [Clock] that moves only when told. Advance and Set run the
// timers that fall due, one at a time in order of due time (timers due at
// the same instant in the order they were made), each synchronously in the
// caller's goroutine with the clock reading its due time; a timer a
// callback arms that falls due within the same Advance runs too. It is
// safe for concurrent use; a callback may call any method but Advance and
// Set.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*fakeTimer
	adv    sync.Mutex // serializes Advance and Set
}

type fakeTimer struct {
	when time.Time
	seq  uint64
	f    func()
}

var _ Clock = (*FakeClock)(nil)

// NewFakeClock returns a fake clock reading start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now returns the fake time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer that Advance or Set runs once the clock reaches
// Now()+d; d <= 0 makes it due at once (it runs on the next Advance, even
// Advance(0)).
func (c *FakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{when: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.timers, t)
		if i < 0 {
			return false
		}
		c.timers = slices.Delete(c.timers, i, i+1)
		return true
	}
}

// Advance moves the clock forward by d, running every timer that falls due
// on the way.
func (c *FakeClock) Advance(d time.Duration) {
	c.Set(c.Now().Add(d))
}

// Set moves the clock to t, running every timer due by then (a t before
// the current time only moves the clock back, running nothing new).
func (c *FakeClock) Set(t time.Time) {
	c.adv.Lock()
	defer c.adv.Unlock()
	for {
		c.mu.Lock()
		i := c.next(t)
		if i < 0 {
			c.now = t
			c.mu.Unlock()
			return
		}
		tm := c.timers[i]
		c.timers = slices.Delete(c.timers, i, i+1)
		if tm.when.After(c.now) {
			c.now = tm.when
		}
		c.mu.Unlock()
		tm.f()
	}
}

// Pending returns the due times of the armed timers, earliest first.
func (c *FakeClock) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Time, 0, len(c.timers))
	for _, t := range c.timers {
		out = append(out, t.when)
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// next returns the index of the earliest timer due by t, or -1.
func (c *FakeClock) next(t time.Time) int {
	best := -1
	for i, tm := range c.timers {
		if tm.when.After(t) {
			continue
		}
		if best < 0 || tm.when.Before(c.timers[best].when) || (tm.when.Equal(c.timers[best].when) && tm.seq < c.timers[best].seq) {
			best = i
		}
	}
	return best
}
