package index_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
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
