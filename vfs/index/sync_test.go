package index_test

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/local"
)

// hostTree writes files under a new host directory and backdates every
// file and directory by an hour, so SyncAuto trusts the directories'
// times (a time within the racy window is always listed again).
func hostTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, data := range files {
		host := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(host), 0o755))
		require.NoError(t, os.WriteFile(host, []byte(data), 0o644))
	}
	backdate(t, root)
	return root
}

// backdate sets the times of everything under root an hour back.
func backdate(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
}

// backdateDirs sets the times of the directories under root an hour back
// (the files keep theirs).
func backdateDirs(t *testing.T, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
}

func localTree(t *testing.T, root string) *local.FS {
	t.Helper()
	tree, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { tree.Close() })
	return tree
}

// reopen opens the index in dir with opts, runs fn and closes it.
func reopen(t *testing.T, tree vfs.FileSystem, dir string, opts index.Options, fn func(f *index.FS)) {
	t.Helper()
	f, err := index.Open(t.Context(), tree, dir, opts)
	require.NoError(t, err)
	defer func() { assert.NoError(t, f.Close()) }()
	fn(f)
}

func found(t *testing.T, f vfs.FileSystem, query string) []string {
	t.Helper()
	return paths(search(t, f, vfs.SearchQuery{Query: query}))
}

var syncFixture = map[string]string{
	"/a/one.go":    "package a\n\nfunc Alpha() {}\n",
	"/a/two.go":    "package a\n\nfunc Bravo() {}\n",
	"/b/c/deep.go": "package c\n\nfunc Charlie() {}\n",
}

// TestSyncAutoSeesNewDeletedRenamed: SyncAuto finds files created,
// deleted and renamed since the last sync, in directories old and new,
// and reads nothing when nothing changed.
func TestSyncAutoSeesNewDeletedRenamed(t *testing.T) {
	for _, limit := range []int{-1, 0} { // stat directories only; every file too
		t.Run("StatLimit="+map[int]string{-1: "never", 0: "default"}[limit], func(t *testing.T) {
			// /k is not touched: its records are written back undecoded.
			fixture := maps.Clone(syncFixture)
			fixture["/k/keep.go"] = "package k\n\nfunc Kilo() {}\n"
			root := hostTree(t, fixture)
			dir := filepath.Join(t.TempDir(), "idx")
			opts := index.Options{Sync: index.SyncAuto, StatLimit: limit}
			reopen(t, localTree(t, root), dir, opts, func(f *index.FS) {
				assert.Equal(t, 4, f.Stats().Indexed)
			})
			reopen(t, localTree(t, root), dir, opts, func(f *index.FS) {
				st := f.Stats()
				assert.Equal(t, 4, st.Files, "%v", st)
				assert.Equal(t, 4, st.Unchanged, "%v", st)
				assert.Equal(t, 0, st.Indexed, "%v", st)
			})

			require.NoError(t, os.Remove(filepath.Join(root, "a", "two.go")))
			require.NoError(t, os.Rename(filepath.Join(root, "b", "c", "deep.go"), filepath.Join(root, "b", "c", "moved.go")))
			require.NoError(t, os.MkdirAll(filepath.Join(root, "new", "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "new", "sub", "fresh.go"), []byte("package sub\n\nfunc Delta() {}\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(root, "a", "three.go"), []byte("package a\n\nfunc Echo() {}\n"), 0o644))

			reopen(t, localTree(t, root), dir, opts, func(f *index.FS) {
				st := f.Stats()
				assert.Equal(t, 5, st.Files, "%v", st)
				assert.Equal(t, 3, st.Indexed, "%v", st) // moved, fresh, three
				assert.Equal(t, 2, st.Removed, "%v", st) // two, deep
				assert.Empty(t, found(t, f, "bravo"))
				assert.Equal(t, []string{"/b/c/moved.go"}, found(t, f, "charlie"))
				assert.Equal(t, []string{"/new/sub/fresh.go"}, found(t, f, "delta"))
				assert.Equal(t, []string{"/a/three.go"}, found(t, f, "echo"))
			})
			// The manifest file written then (directories not listed kept
			// as they were) describes the tree: nothing to read, by either
			// mode.
			backdateDirs(t, root)
			for _, mode := range []index.SyncMode{index.SyncAuto, index.SyncAlways} {
				reopen(t, localTree(t, root), dir, index.Options{Sync: mode, StatLimit: limit}, func(f *index.FS) {
					st := f.Stats()
					assert.Equal(t, 5, st.Files, "%s: %v", mode, st)
					assert.Equal(t, 5, st.Unchanged, "%s: %v", mode, st)
				})
			}
			reopen(t, localTree(t, root), dir, index.Options{Sync: index.SyncAuto, StatLimit: limit}, func(f *index.FS) {
				st := f.Stats()
				assert.Equal(t, 5, st.Unchanged, "%v", st)
				assert.Equal(t, []string{"/k/keep.go"}, found(t, f, "kilo"))
			})
		})
	}
}

// TestSyncAutoInPlaceEdit: a file rewritten in place in a directory whose
// time did not change is seen by SyncAuto within StatLimit and by
// SyncAlways, and not by SyncAuto beyond StatLimit, as documented.
func TestSyncAutoInPlaceEdit(t *testing.T) {
	root := hostTree(t, syncFixture)
	dir := filepath.Join(t.TempDir(), "idx")
	reopen(t, localTree(t, root), dir, index.Options{}, func(*index.FS) {})

	a := filepath.Join(root, "a")
	fi, err := os.Stat(a)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(a, "one.go"), []byte("package a\n\nfunc Foxtrot() {}\n"), 0o644))
	require.NoError(t, os.Chtimes(a, fi.ModTime(), fi.ModTime())) // an in-place write leaves it so

	reopen(t, localTree(t, root), dir, index.Options{Sync: index.SyncAuto, StatLimit: -1}, func(f *index.FS) {
		assert.Empty(t, found(t, f, "foxtrot"), "beyond StatLimit, SyncAuto stats directories only")
		assert.Equal(t, []string{"/a/one.go"}, found(t, f, "alpha"))
	})
	reopen(t, localTree(t, root), dir, index.Options{Sync: index.SyncAuto}, func(f *index.FS) {
		assert.Equal(t, []string{"/a/one.go"}, found(t, f, "foxtrot"))
		assert.Empty(t, found(t, f, "alpha"))
	})
	require.NoError(t, os.WriteFile(filepath.Join(a, "one.go"), []byte("package a\n\nfunc Golf() {}\n"), 0o644))
	require.NoError(t, os.Chtimes(a, fi.ModTime(), fi.ModTime()))
	reopen(t, localTree(t, root), dir, index.Options{Sync: index.SyncAlways, StatLimit: -1}, func(f *index.FS) {
		assert.Equal(t, []string{"/a/one.go"}, found(t, f, "golf"))
	})
}

// TestSyncNever: the index is searched as it is.
func TestSyncNever(t *testing.T) {
	root := hostTree(t, syncFixture)
	dir := filepath.Join(t.TempDir(), "idx")
	reopen(t, localTree(t, root), dir, index.Options{}, func(*index.FS) {})
	require.NoError(t, os.Remove(filepath.Join(root, "a", "two.go")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "three.go"), []byte("func Echo() {}\n"), 0o644))
	reopen(t, localTree(t, root), dir, index.Options{Sync: index.SyncNever}, func(f *index.FS) {
		assert.Equal(t, index.Stats{}, f.Stats())
		assert.Empty(t, found(t, f, "echo"))
		// A file gone from the tree is left out when its snippet is read.
		assert.Empty(t, found(t, f, "bravo"))
	})
}

// TestShrinksToNothing: a tree emptied empties the index, whatever the
// sync mode.
func TestShrinksToNothing(t *testing.T) {
	for _, mode := range []index.SyncMode{index.SyncAuto, index.SyncAlways} {
		t.Run(string(mode), func(t *testing.T) {
			root := hostTree(t, syncFixture)
			dir := filepath.Join(t.TempDir(), "idx")
			reopen(t, localTree(t, root), dir, index.Options{}, func(*index.FS) {})
			ents, err := os.ReadDir(root)
			require.NoError(t, err)
			for _, e := range ents {
				require.NoError(t, os.RemoveAll(filepath.Join(root, e.Name())))
			}
			backdate(t, root)
			reopen(t, localTree(t, root), dir, index.Options{Sync: mode, StatLimit: -1}, func(f *index.FS) {
				st := f.Stats()
				assert.Equal(t, 0, st.Files, "%v", st)
				assert.Equal(t, 3, st.Removed, "%v", st)
				assert.Empty(t, found(t, f, "alpha bravo charlie"))
			})
			reopen(t, localTree(t, root), dir, index.Options{Sync: mode}, func(f *index.FS) {
				assert.Equal(t, 0, f.Stats().Files)
			})
		})
	}
}

// TestDamagedManifestFile: a manifest file that cannot be read is
// ignored: SyncAuto walks the tree as SyncAlways does, and writes it anew.
func TestDamagedManifestFile(t *testing.T) {
	root := hostTree(t, syncFixture)
	dir := filepath.Join(t.TempDir(), "idx")
	reopen(t, localTree(t, root), dir, index.Options{}, func(*index.FS) {})
	mf := filepath.Join(dir, "julyfs-manifest")
	raw, err := os.ReadFile(mf)
	require.NoError(t, err)
	raw[len(raw)/2] ^= 0xff
	require.NoError(t, os.WriteFile(mf, raw, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "one.go"), []byte("func Hotel() {}\n"), 0o644))
	backdate(t, root)
	reopen(t, localTree(t, root), dir, index.Options{Sync: index.SyncAuto, StatLimit: -1}, func(f *index.FS) {
		assert.Equal(t, []string{"/a/one.go"}, found(t, f, "hotel"), "a damaged manifest file means a full walk")
	})
	fixed, err := os.ReadFile(mf)
	require.NoError(t, err)
	assert.NotEqual(t, raw, fixed)
}

// TestOtherTreeRefused: an index recorded for another tree is refused
// with a message naming both, and Rebuild builds it for the new one.
func TestOtherTreeRefused(t *testing.T) {
	root := hostTree(t, syncFixture)
	dir := filepath.Join(t.TempDir(), "idx")
	tree := localTree(t, root)
	reopen(t, tree, dir, index.Options{Tree: "/=local:/src/one"}, func(*index.FS) {})
	_, err := index.Open(t.Context(), tree, dir, index.Options{Tree: "/=local:/src/two"})
	require.Error(t, err)
	assert.True(t, errors.Is(err, index.ErrOtherTree), "%v", err)
	assert.Contains(t, err.Error(), `"/=local:/src/one"`)
	assert.Contains(t, err.Error(), `"/=local:/src/two"`)
	assert.Contains(t, err.Error(), "--rebuild")
	// No tree given: not checked.
	reopen(t, tree, dir, index.Options{}, func(*index.FS) {})
	reopen(t, tree, dir, index.Options{Tree: "/=local:/src/two", Rebuild: true}, func(f *index.FS) {
		assert.Equal(t, 3, f.Stats().Indexed)
	})
	reopen(t, tree, dir, index.Options{Tree: "/=local:/src/two"}, func(*index.FS) {})
	meta, err := os.ReadFile(filepath.Join(dir, "julyfs-index.json"))
	require.NoError(t, err)
	assert.Contains(t, string(meta), `"tree":"/=local:/src/two"`)
}

// TestReadOnlyIndexDir: an index on a read-only filesystem is searched as
// it is, without a sync, with one message saying so; writes through the
// FS reach the tree and report that the index could not follow.
func TestReadOnlyIndexDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to bind-mount a directory read-only")
	}
	root := hostTree(t, syncFixture)
	base := t.TempDir()
	dir := filepath.Join(base, "idx")
	reopen(t, localTree(t, root), dir, index.Options{}, func(*index.FS) {})
	ro := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(ro, 0o755))
	if err := unix.Mount(dir, ro, "", unix.MS_BIND, ""); errors.Is(err, unix.EPERM) {
		t.Skipf("cannot bind-mount here: %v", err)
	} else {
		require.NoError(t, err)
	}
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(ro, unix.MNT_DETACH)) })
	require.NoError(t, unix.Mount("", ro, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""))

	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "three.go"), []byte("func Echo() {}\n"), 0o644))
	var logs []string
	tree := localTree(t, root)
	reopen(t, tree, ro, index.Options{Sync: index.SyncAuto, Log: func(m string) { logs = append(logs, m) }}, func(f *index.FS) {
		assert.True(t, f.ReadOnly())
		assert.Equal(t, []string{"/a/one.go"}, found(t, f, "alpha"))
		assert.Empty(t, found(t, f, "echo"), "not synced")
		_, err := f.Sync(t.Context())
		assert.ErrorIs(t, err, index.ErrReadOnly)
		err = f.Write(t.Context(), "/a/four.go", []byte("func Foxtrot() {}\n"))
		assert.ErrorIs(t, err, index.ErrReadOnly)
		data, rerr := tree.Read(t.Context(), "/a/four.go")
		require.NoError(t, rerr)
		assert.Equal(t, "func Foxtrot() {}\n", string(data), "the write reached the tree")
	})
	require.Len(t, logs, 1)
	assert.Contains(t, logs[0], "read-only")
	assert.Contains(t, logs[0], "without bringing it up to date")

	_, err := index.Open(t.Context(), tree, ro, index.Options{Rebuild: true})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "cannot be written"), "%v", err)
}
