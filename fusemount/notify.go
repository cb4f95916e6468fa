package fusemount

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/julyfs/julyfs/third_party/go-fuse/fs"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// invalidator turns the tree's change notifications into kernel cache
// invalidations. The tree calls the Watch callback synchronously, often from
// inside a FUSE request the kernel is holding locks for, so the callback only
// queues the change; one goroutine sends the invalidations, holding no lock
// of the mount while it does (go-fuse's deadlock rules).
type invalidator struct {
	m    *mount
	root *fs.Inode

	mu    sync.Mutex
	queue []vfs.Change
	// host holds the host changes not sent yet, by path (merged), in
	// the order of hostOrder (see hostwatch.go).
	host      map[string]local.HostChange
	hostOrder []string
	busy      bool       // run is sending a batch taken from queue
	idle      *sync.Cond // broadcast when queue is empty and !busy
	wake      chan struct{}
	stopped   bool
	done      chan struct{}

	queued atomic.Int64 // the tree's changes queued, ever (tests)
}

func newInvalidator(m *mount, root *fs.Inode) *invalidator {
	iv := &invalidator{m: m, root: root, wake: make(chan struct{}, 1), done: make(chan struct{})}
	iv.idle = sync.NewCond(&iv.mu)
	go iv.run()
	return iv
}

// changed is the Watch callback.
func (iv *invalidator) changed(c vfs.Change) {
	if iv.m.ownReport(c) {
		// The mount made this change; the kernel already knows it.
		return
	}
	iv.queueChange(c)
}

// queueChange queues c for the goroutine that sends invalidations.
func (iv *invalidator) queueChange(c vfs.Change) {
	iv.queued.Add(1)
	iv.mu.Lock()
	if !iv.stopped {
		iv.queue = append(iv.queue, c)
	}
	iv.mu.Unlock()
	select {
	case iv.wake <- struct{}{}:
	default:
	}
}

// stop ends the goroutine after the queued changes are sent.
func (iv *invalidator) stop() {
	iv.mu.Lock()
	iv.stopped = true
	iv.mu.Unlock()
	select {
	case iv.wake <- struct{}{}:
	default:
	}
	<-iv.done
}

// flush waits until every change queued so far has been sent to the
// kernel (or the invalidator stopped).
func (iv *invalidator) flush() {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	for (len(iv.queue) > 0 || len(iv.hostOrder) > 0 || iv.busy) && !iv.stopped {
		iv.idle.Wait()
	}
}

func (iv *invalidator) run() {
	defer close(iv.done)
	defer func() {
		iv.mu.Lock()
		iv.busy = false
		iv.idle.Broadcast()
		iv.mu.Unlock()
	}()
	for range iv.wake {
		iv.mu.Lock()
		q, stopped := iv.queue, iv.stopped
		host, order := iv.host, iv.hostOrder
		iv.queue, iv.host, iv.hostOrder = nil, nil, nil
		iv.busy = true
		iv.mu.Unlock()
		for _, c := range q {
			iv.invalidate(c)
		}
		dirs := map[*fs.Inode]bool{}
		for _, p := range order {
			iv.invalidateHost(host[p], dirs)
		}
		iv.invalidateDirs(dirs)
		iv.mu.Lock()
		iv.busy = false
		if len(iv.queue) == 0 && len(iv.hostOrder) == 0 {
			iv.idle.Broadcast()
		}
		iv.mu.Unlock()
		if stopped {
			return
		}
	}
}

// invalidate drops what the kernel caches about c.Path: the file's data and
// attributes, its name (or a negative lookup of the first name on the way
// to it that the kernel does not know) and, for a delete, the names of the
// directories the tree dropped with the file.
func (iv *invalidator) invalidate(c vfs.Change) {
	segs := vfs.Split(c.Path)
	if len(segs) == 0 {
		iv.root.NotifyContent(0, 0)
		return
	}
	// chain[i] is the directory holding segs[i].
	chain := []*fs.Inode{iv.root}
	cur := iv.root
	for _, seg := range segs {
		ch := cur.GetChild(seg)
		if ch == nil {
			cur.NotifyEntry(seg)
			cur.NotifyContent(0, 0)
			return
		}
		cur = ch
		chain = append(chain, cur)
	}
	if cn, ok := cur.Operations().(*node); ok {
		cn.mu.Lock()
		// A node marked deleted is no longer the file at c.Path: a
		// rename replaced it (go-fuse may still hold it at the name
		// until the rename returns, and the tree's notification of
		// that very rename can arrive in between) or it was unlinked.
		// Its staging is the private copy its open handles read; the
		// change is not about it.
		if !cn.deleted {
			cn.changes.Add(1)
			if !cn.dirty {
				// A clean staging is stale now; a dirty one wins
				// at its next commit (last writer wins).
				cn.dropStage()
			}
			cn.version = fileVersion{}
		}
		cn.mu.Unlock()
	}
	cur.NotifyContent(0, 0)
	if c.Op != vfs.ChangeDelete {
		return
	}
	last := len(segs) - 1
	chain[last].NotifyEntry(segs[last])
	chain[last].NotifyContent(0, 0)
	for i := last - 1; i >= 0; i-- {
		p := "/" + strings.Join(segs[:i+1], "/")
		if fi, err := iv.m.stat(p); err != nil || fi.Kind != vfs.KindMissing {
			return
		}
		chain[i].NotifyEntry(segs[i])
	}
}
