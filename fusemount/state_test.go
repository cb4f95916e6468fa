package fusemount

import (
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
	m := newMount(t.Context(), temp.MustNew(map[string]string{"/b.txt": "b", "/d/x": "x"}), Options{})
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	m.addPending("/a", when)
	m.addPending("/c", when)
	fi, err := m.stat("/a")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindDir, fi.Kind)
	assert.True(t, fi.ModTime.Equal(when))
	entries, err := m.list("/")
	assert.Equal(t, []string{"/a", "/b.txt", "/c", "/d"}, paths(t, entries, err))
	m.removePending("/a")
	fi, err = m.stat("/a")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, fi.Kind)
	entries, err = m.list("/")
	assert.Equal(t, []string{"/b.txt", "/c", "/d"}, paths(t, entries, err))
}

// TestStateHoldParents: deleting the last file of a directory keeps the
// directory where the tree would drop it (temp:), and holds nothing where
// the tree has directories of its own (local:).
func TestStateHoldParents(t *testing.T) {
	tm := temp.MustNew(map[string]string{"/d/e/f": "f"})
	m := newMount(t.Context(), tm, Options{})
	require.NoError(t, tm.Delete(t.Context(), "/d/e/f"))
	m.holdParents("/d/e/f")
	for _, p := range []string{"/d", "/d/e"} {
		fi, err := m.stat(p)
		require.NoError(t, err)
		assert.Equal(t, vfs.KindDir, fi.Kind, p)
	}

	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d"), 0o755))
	lf, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { lf.Close() })
	m = newMount(t.Context(), lf, Options{})
	require.NoError(t, os.Remove(filepath.Join(root, "d")))
	m.holdParents("/d/f")
	fi, err := m.stat("/d")
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
	m := newMount(t.Context(), lf, Options{})
	m.mu.Lock()
	m.hidden["/d"] = true
	m.mu.Unlock()
	fi, err := m.stat("/d")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, fi.Kind)
	entries, err := m.list("/")
	assert.Empty(t, paths(t, entries, err))
	require.NoError(t, lf.Write(t.Context(), "/d/f", []byte("f")))
	fi, err = m.stat("/d")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindDir, fi.Kind)
	assert.False(t, m.isHidden("/d"), "no longer hidden once written under")
}

// TestStateRebase: a rename moves what the mount holds at and under the
// source (pending directories, metadata) to the destination and drops hidden
// marks; metadata set back to zero is forgotten.
func TestStateRebase(t *testing.T) {
	m := newMount(t.Context(), temp.MustNew(nil), Options{})
	now := time.Now()
	m.addPending("/src", now)
	m.addPending("/src/sub", now)
	m.addPending("/other", now)
	m.setMeta("/src/sub", func(md *meta) { md.mode = 0o700 })
	m.setMeta("/srcfile", func(md *meta) { md.mode = 0o600 })
	m.mu.Lock()
	m.hidden["/src/gone"] = true
	m.mu.Unlock()

	m.rebase("/src", "/dst")
	m.mu.Lock()
	assert.Contains(t, m.pending["/"], "dst", "the source itself moves")
	assert.NotContains(t, m.pending["/"], "src")
	assert.Contains(t, m.pending["/"], "other")
	assert.Contains(t, m.pending["/dst"], "sub")
	assert.NotContains(t, m.pending, "/src")
	assert.Empty(t, m.hidden)
	m.mu.Unlock()
	assert.Equal(t, uint32(0o700), m.getMeta("/dst/sub").mode)
	assert.Zero(t, m.getMeta("/src/sub"))
	assert.Equal(t, uint32(0o600), m.getMeta("/srcfile").mode, "a sibling that shares the prefix's text is not under it")

	m.setMeta("/srcfile", func(md *meta) { md.mode = 0 })
	m.mu.Lock()
	assert.NotContains(t, m.meta, "/srcfile")
	m.mu.Unlock()
	m.forget("/dst")
	assert.Zero(t, m.getMeta("/dst/sub"))
}

// TestStateSelf: the mount's own changes in flight, by path and by tree.
func TestStateSelf(t *testing.T) {
	m := newMount(t.Context(), temp.MustNew(nil), Options{})
	assert.False(t, m.isSelf("/a"))
	m.beginSelf("/a")
	m.beginSelf("/a")
	m.endSelf("/a")
	assert.True(t, m.isSelf("/a"))
	m.endSelf("/a")
	assert.False(t, m.isSelf("/a"))
	m.beginSelfTree("/d")
	assert.True(t, m.isSelf("/d/x/y"))
	assert.False(t, m.isSelf("/dx"))
	m.endSelfTree("/d")
	assert.False(t, m.isSelf("/d/x/y"))
}
