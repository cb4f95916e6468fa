package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// catchUpMargin is how far below the last sequence number seen a
// reconnecting listener re-reads: a transaction takes its number when it
// inserts and becomes visible when it commits, so a lower number can
// appear after a higher one.
const catchUpMargin = 1000

// retention is how long changes stay in julyfs_changes.
const retention = "1 hour"

// Watch subscribes fn to the changes of scope sc: this store's own writes
// synchronously, other stores' (other processes, other hosts) from the
// NOTIFY feed. The first watcher starts the store's listening connection;
// Watch waits up to five seconds for it to be listening, so a change
// committed after Watch returns is delivered. cancel must not be called
// from inside fn.
func (s *Store) Watch(sc hostfiles.Scope, fn func(hostfiles.Event)) (cancel func()) {
	if sc.Validate() != nil {
		return func() {}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return func() {}
	}
	s.smu.Lock()
	if s.subs[sc] == nil {
		s.subs[sc] = map[int]func(hostfiles.Event){}
	}
	id := s.next
	s.next++
	s.subs[sc][id] = fn
	s.smu.Unlock()
	l := s.listen
	if l == nil {
		l = startListener(s)
		s.listen = l
	}
	s.mu.Unlock()
	select {
	case <-l.ready:
	case <-time.After(5 * time.Second):
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.smu.Lock()
			delete(s.subs[sc], id)
			if len(s.subs[sc]) == 0 {
				delete(s.subs, sc)
			}
			empty := len(s.subs) == 0
			s.smu.Unlock()
			if !empty {
				return
			}
			s.mu.Lock()
			l := s.listen
			s.listen = nil
			s.mu.Unlock()
			if l != nil {
				l.stop()
			}
		})
	}
}

// publish delivers e to the subscribers of sc in the caller's goroutine.
func (s *Store) publish(sc hostfiles.Scope, e hostfiles.Event) {
	s.smu.RLock()
	defer s.smu.RUnlock()
	for _, fn := range s.subs[sc] {
		fn(e)
	}
}

// listener keeps one connection LISTENing on the change channel and
// reconnects, catching up from the sequence table, when it drops.
type listener struct {
	s      *Store
	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed once the first LISTEN is active

	started bool
	last    int64
	seen    map[int64]struct{}
	ring    []int64
	pos     int
}

func startListener(s *Store) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{s: s, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{}),
		seen: map[int64]struct{}{}, ring: make([]int64, 8192)}
	go l.run(ctx)
	return l
}

func (l *listener) stop() {
	l.cancel()
	<-l.done
}

func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	prune := time.NewTicker(10 * time.Minute)
	defer prune.Stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-prune.C:
				l.s.prune(ctx)
			}
		}
	}()
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		if l.session(ctx) {
			backoff = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

// session runs one connection until it fails; it reports whether it got
// as far as listening.
func (l *listener) session(ctx context.Context) bool {
	pc, err := l.s.pool.Acquire(ctx)
	if err != nil {
		return false
	}
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return false
	}
	if !l.started {
		// Everything before now is history: start from the current end.
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM julyfs_changes`).Scan(&l.last); err != nil {
			return false
		}
		l.started = true
		close(l.ready)
	} else {
		rows, err := conn.Query(ctx, `SELECT seq, scope, key, deleted, etag, origin FROM julyfs_changes
			WHERE seq > $1 ORDER BY seq`, l.last-catchUpMargin)
		if err != nil {
			return false
		}
		var backlog []payload
		for rows.Next() {
			var p payload
			if err := rows.Scan(&p.Seq, &p.Scope, &p.Key, &p.Deleted, &p.ETag, &p.Origin); err != nil {
				rows.Close()
				return false
			}
			backlog = append(backlog, p)
		}
		if rows.Err() != nil {
			return false
		}
		for _, p := range backlog {
			l.handle(p)
		}
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if p, err := decodePayload(n.Payload); err == nil {
			l.handle(p)
		}
	}
}

// handle delivers p unless it was delivered before or is this store's own
// change (delivered when it was made).
func (l *listener) handle(p payload) {
	if _, dup := l.seen[p.Seq]; dup {
		return
	}
	if old := l.ring[l.pos]; old != 0 {
		delete(l.seen, old)
	}
	l.ring[l.pos] = p.Seq
	l.pos = (l.pos + 1) % len(l.ring)
	l.seen[p.Seq] = struct{}{}
	l.last = max(l.last, p.Seq)
	if p.Origin == l.s.origin {
		return
	}
	l.s.publish(hostfiles.Scope(p.Scope), hostfiles.Event{Key: p.Key, Deleted: p.Deleted, ETag: p.ETag})
}
