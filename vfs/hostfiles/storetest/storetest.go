// Package storetest is the shared test suite of hostfiles stores: the
// rules a [hostfiles.Store] must keep beyond what vfs/vfstest checks of the
// tree over it (CAS under contention, conflicts carrying both etags,
// changes seen by another store value on the same backing, size limits,
// scope names). Every store's tests run it, as vfstest.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/hostfiles"
)

// Options describe the store under test.
type Options struct {
	// Open returns a new, independent Store value on the same backing
	// (another "host"): a second directory handle, a second pool. The
	// suite closes it.
	Open func(t *testing.T) hostfiles.Store
	// Scope returns a scope no other test uses.
	Scope func(t *testing.T) hostfiles.Scope
	// MaxFileSize is the limit of stores Open returns; 0 skips the check.
	MaxFileSize int64
}

// Run runs every check as a subtest.
func Run(t *testing.T, o Options) {
	open := func(t *testing.T) hostfiles.Store {
		s := o.Open(t)
		t.Cleanup(func() { s.Close() })
		return s
	}
	t.Run("ConflictCarriesBothETags", func(t *testing.T) { checkConflict(t, open(t), open(t), o.Scope(t)) })
	t.Run("DeleteIsCAS", func(t *testing.T) { checkDeleteCAS(t, open(t), open(t), o.Scope(t)) })
	t.Run("LostUpdate/goroutines", func(t *testing.T) {
		s := open(t)
		sc := o.Scope(t)
		Counter(t, 8, 10, func() hostfiles.Store { return s }, sc)
	})
	t.Run("LostUpdate/storeValues", func(t *testing.T) {
		stores := []hostfiles.Store{open(t), open(t)}
		sc := o.Scope(t)
		i := 0
		var mu sync.Mutex
		Counter(t, 6, 10, func() hostfiles.Store {
			mu.Lock()
			defer mu.Unlock()
			i++
			return stores[i%2]
		}, sc)
	})
	t.Run("CrossHostNotify", func(t *testing.T) { checkCrossHost(t, open(t), open(t), o.Scope(t)) })
	t.Run("ScopeNames", func(t *testing.T) { checkScopes(t, open(t)) })
	t.Run("StoreName", func(t *testing.T) {
		s := open(t)
		assert.NotEmpty(t, s.Name())
	})
	if o.MaxFileSize > 0 {
		t.Run("SizeLimit", func(t *testing.T) { checkSizeLimit(t, open(t), o.Scope(t), o.MaxFileSize) })
	}
}

func checkConflict(t *testing.T, a, b hostfiles.Store, sc hostfiles.Scope) {
	ctx := t.Context()
	fa, err := hostfiles.New(a, sc)
	require.NoError(t, err)
	fb, err := hostfiles.New(b, sc)
	require.NoError(t, err)
	require.NoError(t, fa.Write(ctx, "/p", []byte("A")))
	// Both read version A, then both write: the first wins.
	_, err = fa.Read(ctx, "/p")
	require.NoError(t, err)
	_, err = fb.Read(ctx, "/p")
	require.NoError(t, err)
	require.NoError(t, fa.Write(ctx, "/p", []byte("from a")))
	err = fb.Write(ctx, "/p", []byte("from b"))
	require.Error(t, err)
	assert.EqualError(t, err, "conflict: /p")
	assert.ErrorIs(t, err, vfs.ErrConflict)
	assert.Equal(t, vfs.KindConflict, vfs.KindOf(err))
	var ce *hostfiles.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, vfs.ContentETag([]byte("A")), ce.Want, "the etag b read")
	assert.Equal(t, vfs.ContentETag([]byte("from a")), ce.Have, "the etag a wrote")
	got, err := fa.Read(ctx, "/p")
	require.NoError(t, err)
	assert.Equal(t, "from a", string(got), "the refused write changed nothing")

	// b re-reads, and its next write wins.
	_, err = fb.Read(ctx, "/p")
	require.NoError(t, err)
	require.NoError(t, fb.Write(ctx, "/p", []byte("from b")))

	// A write without a cached etag is unconditional.
	fc, err := hostfiles.New(a, sc)
	require.NoError(t, err)
	require.NoError(t, fc.Write(ctx, "/p", []byte("blind")))

	// Created by someone else after a create-only precondition.
	_, err = fa.WriteIf(ctx, "/p", []byte("x"), vfs.Precondition{IfNoneMatch: true})
	require.ErrorAs(t, err, &ce)
	assert.True(t, ce.WantMissing)
	assert.Equal(t, vfs.ContentETag([]byte("blind")), ce.Have)

	// Deleted by someone else: the CAS fails with Have "".
	_, err = fa.Read(ctx, "/p")
	require.NoError(t, err)
	require.NoError(t, fc.Delete(ctx, "/p")) // fc wrote the current version
	err = fa.Write(ctx, "/p", []byte("resurrect"))
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "", ce.Have)
	assert.Equal(t, vfs.KindMissing, stat(t, fa, "/p").Kind)

	// The store-level delete precondition.
	m, err := a.Put(ctx, sc, "/q", []byte("1"), vfs.Precondition{})
	require.NoError(t, err)
	err = a.Delete(ctx, sc, "/q", vfs.Precondition{IfMatch: "stale"})
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, m.ETag, ce.Have)
	require.NoError(t, a.Delete(ctx, sc, "/q", vfs.Precondition{IfMatch: m.ETag}))
}

// checkDeleteCAS: a tree's Delete of a path it has read is a CAS on that
// read, so a delete after another host's write is a conflict that keeps
// their write; a delete of a path the tree never read is unconditional.
func checkDeleteCAS(t *testing.T, a, b hostfiles.Store, sc hostfiles.Scope) {
	ctx := t.Context()
	fa, err := hostfiles.New(a, sc)
	require.NoError(t, err)
	fb, err := hostfiles.New(b, sc)
	require.NoError(t, err)
	require.NoError(t, fa.Write(ctx, "/d", []byte("v1")))
	_, err = fb.Read(ctx, "/d")
	require.NoError(t, err)
	require.NoError(t, fa.Write(ctx, "/d", []byte("v2 from a")))

	err = fb.Delete(ctx, "/d")
	require.Error(t, err, "b deleted a file a changed after b read it")
	assert.EqualError(t, err, "conflict: /d")
	assert.ErrorIs(t, err, vfs.ErrConflict)
	var ce *hostfiles.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, vfs.ContentETag([]byte("v1")), ce.Want, "the etag b read")
	assert.Equal(t, vfs.ContentETag([]byte("v2 from a")), ce.Have, "the etag a wrote")
	got, err := fa.Read(ctx, "/d")
	require.NoError(t, err, "the refused delete removed the file")
	assert.Equal(t, "v2 from a", string(got), "the refused delete changed nothing")

	// b re-reads a's version: now its delete is a CAS on it and succeeds.
	_, err = fb.Read(ctx, "/d")
	require.NoError(t, err)
	require.NoError(t, fb.Delete(ctx, "/d"))
	assert.Equal(t, vfs.KindMissing, stat(t, fa, "/d").Kind)

	// Deleted by someone else after the read: not found, nothing else.
	require.NoError(t, fa.Write(ctx, "/e", []byte("e")))
	_, err = fb.Read(ctx, "/e")
	require.NoError(t, err)
	require.NoError(t, fa.Delete(ctx, "/e"))
	assert.EqualError(t, fb.Delete(ctx, "/e"), "not found: /e")

	// A tree that never read the path deletes it unconditionally.
	require.NoError(t, fa.Write(ctx, "/f", []byte("f")))
	fc, err := hostfiles.New(b, sc)
	require.NoError(t, err)
	require.NoError(t, fc.Delete(ctx, "/f"))
	assert.Equal(t, vfs.KindMissing, stat(t, fa, "/f").Kind)
}

func stat(t *testing.T, fsys vfs.FileSystem, p string) vfs.FileInfo {
	t.Helper()
	info, err := fsys.Stat(t.Context(), p)
	require.NoError(t, err)
	return info
}

// Counter runs writers goroutines, each with its own hostfiles.FS over
// store(), each adding increments to the counter file /counter by read,
// increment, write (a CAS on the etag read) and retry on a conflict. It
// fails t unless the counter ends at writers*increments exactly.
func Counter(t *testing.T, writers, increments int, store func() hostfiles.Store, sc hostfiles.Scope) {
	ctx := t.Context()
	s := store()
	_, err := s.Put(ctx, sc, "/counter", []byte("0"), vfs.Precondition{})
	require.NoError(t, err)
	var wg sync.WaitGroup
	conflicts := make([]int, writers)
	errs := make(chan error, writers)
	for w := range writers {
		fsys, err := hostfiles.New(store(), sc)
		require.NoError(t, err)
		wg.Go(func() {
			n, err := Increment(ctx, fsys, increments)
			conflicts[w] = n
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	data, _, err := s.Get(ctx, sc, "/counter")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(writers*increments), string(data))
	total := 0
	for _, n := range conflicts {
		total += n
	}
	t.Logf("%d writers x %d increments: %d conflicts retried", writers, increments, total)
}

// Increment adds n to the decimal counter in /counter of fsys with read,
// increment, write, retrying on a conflict; it returns the conflicts it
// retried. Other errors stop it.
func Increment(ctx context.Context, fsys vfs.FileSystem, n int) (conflicts int, err error) {
	for range n {
		for {
			data, err := fsys.Read(ctx, "/counter")
			if err != nil {
				return conflicts, err
			}
			v, err := strconv.Atoi(string(data))
			if err != nil {
				return conflicts, fmt.Errorf("counter holds %q: %w", data, err)
			}
			err = fsys.Write(ctx, "/counter", []byte(strconv.Itoa(v+1)))
			if errors.Is(err, vfs.ErrConflict) {
				conflicts++
				continue
			}
			if err != nil {
				return conflicts, err
			}
			break
		}
	}
	return conflicts, nil
}

func checkCrossHost(t *testing.T, a, b hostfiles.Store, sc hostfiles.Scope) {
	ctx := t.Context()
	fa, err := hostfiles.New(a, sc)
	require.NoError(t, err)
	fb, err := hostfiles.New(b, sc)
	require.NoError(t, err)
	got := make(chan vfs.Change, 16)
	cancel := fb.Watch(func(c vfs.Change) { got <- c })
	defer cancel()
	require.NoError(t, fa.Write(ctx, "/shared/note.md", []byte("hello from a")))
	want := vfs.Change{Path: "/shared/note.md", Op: vfs.ChangeWrite}
	select {
	case c := <-got:
		assert.Equal(t, want, c)
	case <-time.After(5 * time.Second):
		t.Fatal("b's watcher did not hear a's write within 5 s")
	}
	data, err := fb.Read(ctx, "/shared/note.md")
	require.NoError(t, err)
	assert.Equal(t, "hello from a", string(data))
	require.NoError(t, fa.Delete(ctx, "/shared/note.md"))
	select {
	case c := <-got:
		assert.Equal(t, vfs.Change{Path: "/shared/note.md", Op: vfs.ChangeDelete}, c)
	case <-time.After(5 * time.Second):
		t.Fatal("b's watcher did not hear a's delete within 5 s")
	}
	// b's own write is reported once, synchronously, not echoed by the feed.
	require.NoError(t, fb.Write(ctx, "/own", []byte("b")))
	select {
	case c := <-got:
		assert.Equal(t, vfs.Change{Path: "/own", Op: vfs.ChangeWrite}, c)
	default:
		t.Fatal("b's own write was not reported before Write returned")
	}
	// A marker write from a, heard after any echo of /own would be.
	require.NoError(t, fa.Write(ctx, "/marker", []byte("m")))
	for {
		select {
		case c := <-got:
			if c.Path == "/marker" {
				return
			}
			t.Fatalf("unexpected change %+v (an echo of b's own write?)", c)
		case <-time.After(5 * time.Second):
			t.Fatal("b's watcher did not hear a's marker within 5 s")
		}
	}
}

func checkScopes(t *testing.T, s hostfiles.Store) {
	ctx := t.Context()
	for _, sc := range []hostfiles.Scope{"", "a/b", "..", "x..y", ".hidden", "tab\there"} {
		_, err := hostfiles.New(s, sc)
		assert.Error(t, err, "New(%q)", sc)
		_, err = s.Put(ctx, sc, "/x", []byte("x"), vfs.Precondition{})
		assert.Error(t, err, "Put in scope %q", sc)
	}
	_, err := hostfiles.SessionScope("../etc")
	assert.Error(t, err)
	sc, err := hostfiles.SessionScope("abc-123")
	require.NoError(t, err)
	assert.Equal(t, hostfiles.Scope("session-abc-123"), sc)
}

func checkSizeLimit(t *testing.T, s hostfiles.Store, sc hostfiles.Scope, limit int64) {
	ctx := t.Context()
	fsys, err := hostfiles.New(s, sc)
	require.NoError(t, err)
	require.NoError(t, fsys.Write(ctx, "/big", []byte("old")))
	err = fsys.Write(ctx, "/big", make([]byte, limit+1))
	require.Error(t, err)
	assert.ErrorIs(t, err, hostfiles.ErrTooLarge)
	assert.Contains(t, err.Error(), "/big")
	assert.Contains(t, err.Error(), strconv.FormatInt(limit, 10))
	got, err := fsys.Read(ctx, "/big")
	require.NoError(t, err)
	assert.Equal(t, "old", string(got), "the refused write kept the old contents")
	require.NoError(t, fsys.Write(ctx, "/big", make([]byte, limit)))
}
