//go:build linux

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// TestCreateInPlaceRacesCAS: an exclusive create in place takes no
// directory lock, so it can land between a compare-and-swap write's
// check that the name is free and its rename (here it does, from inside
// that window, which would deadlock had it waited for the lock): the
// write then fails as a conflict and leaves the new file alone, and no
// temporary file behind. The other order is the create's conflict.
func TestCreateInPlaceRacesCAS(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	fsys, err := New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })

	var f *os.File
	commitCheckedForTest = func(p string) {
		commitCheckedForTest = nil
		var cerr error
		f, _, cerr = fsys.CreateInPlace(ctx, p, 0o644)
		require.NoError(t, cerr)
		_, cerr = f.WriteString("in place\n")
		require.NoError(t, cerr)
	}
	t.Cleanup(func() { commitCheckedForTest = nil })
	_, err = fsys.WriteIf(ctx, "/a", []byte("cas\n"), vfs.Precondition{IfNoneMatch: true})
	assert.Equal(t, vfs.KindConflict, vfs.KindOf(err), "the name was taken before the rename: %v", err)
	require.NotNil(t, f, "the create ran in the window")
	t.Cleanup(func() { f.Close() })
	got, err := fsys.Read(ctx, "/a")
	require.NoError(t, err)
	assert.Equal(t, "in place\n", string(got), "the file created in place stays")
	_, _, err = fsys.WroteInPlace(ctx, "/a", f, vfs.FileInfo{})
	assert.NoError(t, err, "the name still holds the file written in place")
	names, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, n := range names {
		assert.False(t, strings.HasPrefix(n.Name(), tempPrefix), "temporary left: %s", n.Name())
	}

	_, err = fsys.WriteIf(ctx, "/b", []byte("cas\n"), vfs.Precondition{IfNoneMatch: true})
	require.NoError(t, err)
	_, _, err = fsys.CreateInPlace(ctx, "/b", 0o644)
	assert.Equal(t, vfs.KindConflict, vfs.KindOf(err), "the write came first: %v", err)
	got, err = os.ReadFile(filepath.Join(root, "b"))
	require.NoError(t, err)
	assert.Equal(t, "cas\n", string(got))
}

// TestWroteInPlaceRacesCAS: writes in place that land between a
// compare-and-swap write's check (which saw the file before them) and its
// rename are not reported as done: WroteInPlace's check waits for the
// directory's lock, which the commit holds until its rename, and then
// finds the name holding the commit's file, a conflict. Without the lock
// the check would answer at once, while the old file is still at the
// name, and the rename would then drop writes reported as kept.
func TestWroteInPlaceRacesCAS(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	fsys, err := New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	other, err := New(root) // another process's view: its own mutex
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })

	f, since, err := fsys.CreateInPlace(ctx, "/log", 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	_, err = f.WriteString("one\n")
	require.NoError(t, err)
	since, _, err = fsys.WroteInPlace(ctx, "/log", f, since)
	require.NoError(t, err)

	type result struct {
		wrote bool
		err   error
	}
	done := make(chan result, 1)
	early := false
	commitCheckedForTest = func(p string) {
		commitCheckedForTest = nil
		_, werr := f.WriteString("two\n")
		require.NoError(t, werr)
		go func() {
			_, wrote, err := fsys.WroteInPlace(ctx, "/log", f, since)
			done <- result{wrote, err}
		}()
		select {
		case r := <-done:
			early = true
			done <- r
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Cleanup(func() { commitCheckedForTest = nil })
	_, err = other.WriteIf(ctx, "/log", []byte("one\ncas\n"), vfs.Precondition{IfMatch: since.ETag})
	require.NoError(t, err, "the commit checked before the write in place")
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("WroteInPlace did not answer once the commit was done")
	}
	assert.False(t, early, "the check did not wait for the commit's rename")
	assert.Equal(t, vfs.KindConflict, vfs.KindOf(r.err), "the writes in place are not in the tree: %v", r.err)
	got, err := os.ReadFile(filepath.Join(root, "log"))
	require.NoError(t, err)
	assert.Equal(t, "one\ncas\n", string(got))
}
