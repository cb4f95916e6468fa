package fusemount

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/julyfs/julyfs/third_party/go-fuse/fuse"
)

// requests holds a value per FUSE request in flight, by the request's
// cancel channel: the channel rawFS's methods get and go-fuse's node
// methods find in their fuse.Context. It is what the two layers of one
// request share where go-fuse's node API passes nothing: a RELEASE's
// backing hold (ptReleasing), an UNLINK's node (unlinkEnding), a kernel
// flag asking for set-ID bits cleared (killing).
type requests[V any] struct {
	n  atomic.Int32 // entries: none is the common case, seen without the lock
	mu sync.Mutex
	m  map[<-chan struct{}]V
}

// put records v for the request of cancel unless it has a value already,
// and reports whether it did.
func (r *requests[V]) put(cancel <-chan struct{}, v V) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[cancel]; dup {
		return false
	}
	if r.m == nil {
		r.m = map[<-chan struct{}]V{}
	}
	r.m[cancel] = v
	r.n.Add(1)
	return true
}

// take removes the value of the request of cancel and returns it.
func (r *requests[V]) take(cancel <-chan struct{}) (V, bool) {
	var v V
	if r.n.Load() == 0 {
		return v, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[cancel]
	if ok {
		delete(r.m, cancel)
		r.n.Add(-1)
	}
	return v, ok
}

// get returns the value of the request of ctx, if ctx is a request's.
func (r *requests[V]) get(ctx context.Context) (V, bool) {
	var v V
	c, ok := ctx.(*fuse.Context)
	if r.n.Load() == 0 || !ok || c.Cancel == nil {
		return v, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok = r.m[c.Cancel]
	return v, ok
}

// cancelOf is the cancel channel of the request of ctx, nil when ctx is
// no request's.
func cancelOf(ctx context.Context) <-chan struct{} {
	if c, ok := ctx.(*fuse.Context); ok {
		return c.Cancel
	}
	return nil
}
