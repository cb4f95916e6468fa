package index_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// followWait bounds how long a test waits for a change to become
// searchable (the FS applies changes about 100 ms after they happen).
const followWait = 10 * time.Second

// eventually waits until query finds want, failing after followWait.
func eventually(t *testing.T, f vfs.FileSystem, query string, want []string) {
	t.Helper()
	deadline := time.Now().Add(followWait)
	var got []string
	for time.Now().Before(deadline) {
		got = nil
		for r, err := range f.Search(t.Context(), vfs.SearchQuery{Query: query}) {
			require.NoError(t, err)
			got = append(got, r.Path)
		}
		if slices.Equal(got, want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Failf(t, "not searchable in time", "search %q = %q after %v, want %q", query, got, followWait, want)
}

// TestFollowLocal: with Follow, files created, rewritten in place,
// deleted and renamed in the host directory behind julyfs's back, and
// directories made and removed, become searchable without a Sync.
func TestFollowLocal(t *testing.T) {
	root := hostTree(t, syncFixture)
	var logs []string
	f := open(t, localTree(t, root), "", index.Options{Follow: true, Log: func(m string) { logs = append(logs, m) }})
	assert.Empty(t, logs, "following is silent")

	host := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	require.NoError(t, os.WriteFile(host("a/one.go"), []byte("package a\n\nfunc Foxtrot() {}\n"), 0o644))
	eventually(t, f, "foxtrot", []string{"/a/one.go"})
	eventually(t, f, "alpha", nil)

	require.NoError(t, os.MkdirAll(host("new/sub"), 0o755))
	require.NoError(t, os.WriteFile(host("new/sub/fresh.go"), []byte("func Delta() {}\n"), 0o644))
	eventually(t, f, "delta", []string{"/new/sub/fresh.go"})
	// The new directory is watched too.
	require.NoError(t, os.WriteFile(host("new/sub/later.go"), []byte("func Kilo() {}\n"), 0o644))
	eventually(t, f, "kilo", []string{"/new/sub/later.go"})

	require.NoError(t, os.Rename(host("a/two.go"), host("new/two.go")))
	eventually(t, f, "bravo", []string{"/new/two.go"})

	require.NoError(t, os.RemoveAll(host("b")))
	eventually(t, f, "charlie", nil)
	require.NoError(t, os.Rename(host("new"), host("renamed")))
	eventually(t, f, "kilo", []string{"/renamed/sub/later.go"})
	eventually(t, f, "delta", []string{"/renamed/sub/fresh.go"})

	// Skipped directories stay out.
	require.NoError(t, os.MkdirAll(host(".git"), 0o755))
	require.NoError(t, os.WriteFile(host(".git/config"), []byte("lima\n"), 0o644))
	require.NoError(t, os.WriteFile(host("a/marker.go"), []byte("func Mike() {}\n"), 0o644))
	eventually(t, f, "mike", []string{"/a/marker.go"})
	assert.Empty(t, found(t, f, "lima"))
}

// TestFollowUnion: a local tree mounted in a union is followed under its
// prefix, and a change made through a tree's Notifier (here a temp tree
// written directly, not through the FS) is followed too.
func TestFollowUnion(t *testing.T) {
	root := hostTree(t, syncFixture)
	notes := temp.MustNew(map[string]string{"/n.md": "november\n"})
	other := hostTree(t, map[string]string{"/r.go": "func Romeo() {}\n"})
	u, err := union.New([]union.Mount{
		{Prefix: "/repo", FS: localTree(t, root)},
		{Prefix: "/notes", FS: notes},
		{Prefix: "/ro", FS: readonly.New(localTree(t, other))},
	})
	require.NoError(t, err)
	f := open(t, u, "", index.Options{Follow: true})
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "three.go"), []byte("func Oscar() {}\n"), 0o644))
	eventually(t, f, "oscar", []string{"/repo/a/three.go"})
	// A read-only mount of a local tree is followed through its wrapper.
	require.NoError(t, os.WriteFile(filepath.Join(other, "s.go"), []byte("func Sierra() {}\n"), 0o644))
	eventually(t, f, "sierra", []string{"/ro/s.go"})
	require.NoError(t, notes.Write(t.Context(), "/p.md", []byte("papa\n")))
	eventually(t, f, "papa", []string{"/notes/p.md"})
	require.NoError(t, notes.Delete(t.Context(), "/n.md"))
	eventually(t, f, "november", nil)
}

// TestFollowDirRenamed: a directory renamed within the tree behind
// julyfs's back is searchable under its new path and gone under its old
// one, and so is everything changed in it afterwards (its files rewritten
// in place, made, deleted), also after it moves again into another
// directory and a directory under it is renamed.
func TestFollowDirRenamed(t *testing.T) {
	root := hostTree(t, map[string]string{
		"/mv/sub/x.go": "func Quebec() {}\n",
		"/mv/y.go":     "func Romeo() {}\n",
		"/other/z.go":  "func Sierra() {}\n",
	})
	f := open(t, localTree(t, root), "", index.Options{Follow: true})
	host := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }

	require.NoError(t, os.Rename(host("mv"), host("moved")))
	eventually(t, f, "quebec", []string{"/moved/sub/x.go"})
	eventually(t, f, "romeo", []string{"/moved/y.go"})

	// Changes in the renamed directory, after the rename.
	require.NoError(t, os.WriteFile(host("moved/sub/x.go"), []byte("func Tango() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(host("moved/sub/new.go"), []byte("func Uniform() {}\n"), 0o644))
	require.NoError(t, os.Remove(host("moved/y.go")))
	eventually(t, f, "tango", []string{"/moved/sub/x.go"})
	eventually(t, f, "uniform", []string{"/moved/sub/new.go"})
	eventually(t, f, "quebec", nil)
	eventually(t, f, "romeo", nil)

	// Moved again, into another directory; then a directory under it
	// renamed; then changes in it.
	require.NoError(t, os.Rename(host("moved"), host("other/in")))
	require.NoError(t, os.Rename(host("other/in/sub"), host("other/in/sub2")))
	eventually(t, f, "tango", []string{"/other/in/sub2/x.go"})
	require.NoError(t, os.WriteFile(host("other/in/sub2/x.go"), []byte("func Victor() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(host("other/in/sub2/w.go"), []byte("func Whiskey() {}\n"), 0o644))
	eventually(t, f, "victor", []string{"/other/in/sub2/x.go"})
	eventually(t, f, "whiskey", []string{"/other/in/sub2/w.go"})
	eventually(t, f, "uniform", []string{"/other/in/sub2/new.go"})
	eventually(t, f, "tango", nil)
	eventually(t, f, "sierra", []string{"/other/z.go"})
}

// TestFollowOverflow: when the kernel's event queue overflows (the
// follower was held up), the change whose event was lost is still found:
// the follower walks the tree again.
func TestFollowOverflow(t *testing.T) {
	queue, err := local.HostQueueEvents()
	if err != nil {
		t.Skipf("no inotify limits to read: %v", err)
	}
	if queue > 110000 {
		t.Skipf("%d events wait before a loss: too many to make", queue)
	}
	root := hostTree(t, syncFixture)
	var mu sync.Mutex
	var logs []string
	f := open(t, localTree(t, root), "", index.Options{Follow: true, Log: func(m string) {
		mu.Lock()
		logs = append(logs, m)
		mu.Unlock()
	}})
	release := index.HoldFollower(f)
	t.Cleanup(release)
	// More events than can wait (local.HostQueueEvents): files made and
	// removed (nothing to index), then one made whose event the full
	// queue drops.
	for i := range (queue+2000)/2 + 1 {
		p := filepath.Join(root, "f"+strconv.Itoa(i))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
		require.NoError(t, os.Remove(p))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "late.go"), []byte("func Yankee() {}\n"), 0o644))
	release()
	eventually(t, f, "yankee", []string{"/late.go"})
	eventually(t, f, "alpha", []string{"/a/one.go"})
	mu.Lock()
	defer mu.Unlock()
	assert.True(t, slices.ContainsFunc(logs, func(m string) bool { return strings.Contains(m, "walking the tree again") }),
		"the loss is logged: %q", logs)
}
