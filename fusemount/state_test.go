package fusemount

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The mount's own state (state.go) needs no kernel: these tests run it over
// a tree with no FUSE mount.

func newTestState(t *testing.T, fsys vfs.FileSystem) *state {
	s := newState(t.Context(), fsys)
	return &s
}

func paths(t *testing.T, entries []vfs.DirEntry, err error) []string {
	t.Helper()
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Path)
	}
	return out
}

// TestStatePendingDirs: a directory made by mkdir on a tree without
// directories of its own shows in stat and in its parent's listing,
// merged in path order with the tree's entries, until removed.
func TestStatePendingDirs(t *testing.T) {
	st := newTestState(t, temp.MustNew(map[string]string{"/b.txt": "b", "/d/x": "x"}))
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	st.addPending("/a", when)
	st.addPending("/c", when)
	fi, err := st.stat("/a")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindDir, fi.Kind)
	assert.True(t, fi.ModTime.Equal(when))
	entries, err := st.list("/")
	assert.Equal(t, []string{"/a", "/b.txt", "/c", "/d"}, paths(t, entries, err))
	st.removePending("/a")
	fi, err = st.stat("/a")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, fi.Kind)
	entries, err = st.list("/")
	assert.Equal(t, []string{"/b.txt", "/c", "/d"}, paths(t, entries, err))
}

// TestStateHoldParents: deleting the last file of a directory keeps the
// directory where the tree would drop it (temp:), and holds nothing where
// the tree has directories of its own (local:).
func TestStateHoldParents(t *testing.T) {
	tm := temp.MustNew(map[string]string{"/d/e/f": "f"})
	st := newTestState(t, tm)
	require.NoError(t, tm.Delete(t.Context(), "/d/e/f"))
	st.holdParents("/d/e/f")
	for _, p := range []string{"/d", "/d/e"} {
		fi, err := st.stat(p)
		require.NoError(t, err)
		assert.Equal(t, vfs.KindDir, fi.Kind, p)
	}

	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	lf, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { lf.Close() })
	st = newTestState(t, lf)
	require.NoError(t, os.Remove(filepath.Join(root, "d")))
	st.holdParents("/d/f")
	fi, err := st.stat("/d")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, fi.Kind, "a host directory removed on the host is not held")
}

// TestStateHidden: a host directory rmdir hid stays hidden while empty and
// shows again once something is under it.
func TestStateHidden(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	lf, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { lf.Close() })
	st := newTestState(t, lf)
	st.hide("/d")
	fi, err := st.stat("/d")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, fi.Kind)
	entries, err := st.list("/")
	assert.Empty(t, paths(t, entries, err))
	require.NoError(t, lf.Write(t.Context(), "/d/f", []byte("f")))
	fi, err = st.stat("/d")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindDir, fi.Kind)
	assert.False(t, st.isHidden("/d"), "no longer hidden once written under")
}

// TestStateRebase: a rename moves what the mount holds at and under the
// source (pending directories, metadata) to the destination and drops hidden
// marks; metadata set back to zero is forgotten.
func TestStateRebase(t *testing.T) {
	st := newTestState(t, temp.MustNew(nil))
	now := time.Now()
	st.addPending("/src", now)
	st.addPending("/src/sub", now)
	st.addPending("/other", now)
	st.setMeta("/src/sub", func(md *meta) { md.mode = 0o700 })
	st.setMeta("/srcfile", func(md *meta) { md.mode = 0o600 })
	st.hide("/src/gone")

	st.rebase("/src", "/dst")
	st.mu.Lock()
	assert.Contains(t, st.pending["/"], "dst", "the source itself moves")
	assert.NotContains(t, st.pending["/"], "src")
	assert.Contains(t, st.pending["/"], "other")
	assert.Contains(t, st.pending["/dst"], "sub")
	assert.NotContains(t, st.pending, "/src")
	assert.Empty(t, st.hidden)
	st.mu.Unlock()
	assert.Equal(t, uint32(0o700), st.getMeta("/dst/sub").mode)
	assert.Zero(t, st.getMeta("/src/sub"))
	assert.Equal(t, uint32(0o600), st.getMeta("/srcfile").mode, "a sibling that shares the prefix's text is not under it")

	st.setMeta("/srcfile", func(md *meta) { md.mode = 0 })
	st.mu.Lock()
	assert.NotContains(t, st.meta, "/srcfile")
	st.mu.Unlock()
	st.forget("/dst")
	assert.Zero(t, st.getMeta("/dst/sub"))
}

// expecting reports whether the state awaits the tree's report of a
// change of kind op at p, made by the mount.
func (s *state) expecting(p string, op vfs.ChangeOp) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.self[p]
	return b != nil && b.want[op] > 0
}

// TestStateSelf: the mount's own changes in flight take one report each,
// of their kind, by path; a rename takes every report under what moves.
// A report taken for a change that was not made is sent on.
func TestStateSelf(t *testing.T) {
	st := newTestState(t, temp.MustNew(nil))
	var sent []vfs.Change
	st.setForeign(func(c vfs.Change) { sent = append(sent, c) })
	w, d := vfs.Change{Path: "/a", Op: vfs.ChangeWrite}, vfs.Change{Path: "/a", Op: vfs.ChangeDelete}
	assert.False(t, st.ownReport(w))

	st.beginSelf("/a", vfs.ChangeWrite)
	assert.False(t, st.ownReport(d), "another kind of change is another's")
	assert.True(t, st.ownReport(w), "the write's report")
	assert.False(t, st.ownReport(w), "a second write is another's")
	st.endSelf("/a", vfs.ChangeWrite, true)
	assert.Empty(t, sent)
	assert.Empty(t, st.self, "nothing left in flight")

	st.beginSelf("/a", vfs.ChangeWrite)
	st.beginSelf("/a", vfs.ChangeWrite)
	assert.True(t, st.ownReport(w))
	assert.True(t, st.ownReport(w), "two writes in flight, two reports")
	st.endSelf("/a", vfs.ChangeWrite, true)
	st.endSelf("/a", vfs.ChangeWrite, true)
	assert.False(t, st.ownReport(w))

	st.beginSelf("/a", vfs.ChangeWrite)
	assert.True(t, st.ownReport(w), "taken for the mount's")
	st.endSelf("/a", vfs.ChangeWrite, false)
	assert.Equal(t, []vfs.Change{w}, sent, "the change was not made: the report was another's")

	st.beginSelf("/a", vfs.ChangeWrite)
	st.endSelf("/a", vfs.ChangeWrite, true) // made, but not reported (a tree without reports)
	assert.False(t, st.ownReport(w), "a report after the change is another's")

	st.beginSelf("/a", 0)
	assert.False(t, st.ownReport(w), "a change that reports nothing takes no report")
	st.endSelf("/a", 0, true)

	st.beginSelfTree("/d")
	assert.True(t, st.ownReport(vfs.Change{Path: "/d/x/y", Op: vfs.ChangeDelete}))
	assert.False(t, st.ownReport(vfs.Change{Path: "/dx", Op: vfs.ChangeWrite}))
	st.endSelfTree("/d")
	assert.False(t, st.ownReport(vfs.Change{Path: "/d/x/y", Op: vfs.ChangeDelete}))
	assert.Len(t, sent, 1)
}

// selfProbe records, at each call the state makes of the tree, whether the
// state awaited the report of that change at that moment.
type selfProbe struct {
	vfs.FileSystem
	st   *state
	seen []string
}

func (p *selfProbe) Write(ctx context.Context, path string, data []byte) error {
	p.seen = append(p.seen, fmt.Sprintf("write %s self=%v", path, p.st.expecting(path, vfs.ChangeWrite)))
	return p.FileSystem.Write(ctx, path, data)
}

func (p *selfProbe) Delete(ctx context.Context, path string) error {
	p.seen = append(p.seen, fmt.Sprintf("delete %s self=%v", path, p.st.expecting(path, vfs.ChangeDelete)))
	return p.FileSystem.Delete(ctx, path)
}

// TestStateOwnChanges: write, create and remove reach the tree while the
// state awaits their report, and not after; create refuses a path that
// exists, with a conflict.
func TestStateOwnChanges(t *testing.T) {
	probe := &selfProbe{FileSystem: temp.MustNew(nil)}
	st := newTestState(t, probe)
	probe.st = st
	require.NoError(t, st.write("/a", []byte("a")))
	require.NoError(t, st.create("/b"))
	err := st.create("/a")
	require.Error(t, err)
	assert.ErrorIs(t, err, vfs.ErrConflict)
	require.NoError(t, st.remove("/a"))
	assert.Equal(t, []string{"write /a self=true", "write /b self=true", "delete /a self=true"}, probe.seen)
	assert.Empty(t, st.self)
	fi, err := st.stat("/b")
	require.NoError(t, err)
	assert.Equal(t, int64(0), fi.Size)
	assert.Equal(t, vfs.KindFile, fi.Kind)
}

// TestStateIsPlain: state.go stays free of the kernel binding, so what it
// decides is tested here without /dev/fuse.
func TestStateIsPlain(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "state.go", nil, parser.ImportsOnly)
	require.NoError(t, err)
	for _, imp := range f.Imports {
		assert.NotContains(t, imp.Path.Value, "go-fuse", "state.go imports the FUSE binding")
	}
}
