package local_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// hostNames lists every name under dir on the host (temporaries included).
func hostNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			r, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(r))
		}
		return nil
	})
	return names
}

func TestOpenFileKeepsVersion(t *testing.T) {
	fsys, _ := newTree(t, map[string][]byte{"/d/f": []byte("version one")})
	ctx := t.Context()
	f, err := fsys.OpenFile(ctx, "/d/../d/f")
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, fsys.Write(ctx, "/d/f", []byte("2")))
	buf := make([]byte, 20)
	n, _ := f.ReadAt(buf, 0)
	assert.Equal(t, "version one", string(buf[:n]), "reader opened before a Write, want the version it opened")
	assert.Equal(t, int64(11), f.Size(), "size of a reader opened before a Write")
	for p, want := range map[string]string{"/d": "is a directory: /d", "/nope": "not found: /nope"} {
		_, err := fsys.OpenFile(ctx, p)
		assert.EqualError(t, err, want, "OpenFile(%q)", p)
	}
}

func TestStageConfined(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644)
	fsys, dir := newTree(t, map[string][]byte{"/in.txt": []byte("in")})
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "secretlink"))
	ctx := t.Context()

	// keep through a link out of the root starts empty: the file is missing.
	s, err := fsys.Stage(ctx, "/out/secret", true)
	require.NoError(t, err, "Stage(/out/secret)")
	assert.Equal(t, int64(0), s.Size(), "Stage(/out/secret, keep) copied bytes from outside the root")
	s.WriteAt([]byte("pwned"), 0)
	assert.Error(t, s.Commit(ctx), "Commit through a directory link out of the root succeeded")
	s.Abort()
	for _, p := range []string{"/../../secret", "/secretlink"} {
		s, err := fsys.Stage(ctx, p, true)
		require.NoError(t, err, "Stage(%q)", p)
		assert.Equal(t, int64(0), s.Size(), "Stage(%q, keep) copied bytes from outside the root", p)
		s.WriteAt([]byte("pwned"), 0)
		assert.NoError(t, s.Commit(ctx), "Commit(%q)", p)
	}
	data, _ := os.ReadFile(filepath.Join(outside, "secret"))
	assert.Equal(t, "outside", string(data), "file outside the root, want it untouched")
	assert.Equal(t, []string{"secret"}, hostNames(t, outside), "outside the root, want only secret")
	// /../../secret is /secret; the link at /secretlink is replaced, not
	// written through.
	for p, want := range map[string]string{"/secret": "pwned", "/secretlink": "pwned"} {
		data, err := fsys.Read(ctx, p)
		assert.Equal(t, want, string(data), "Read(%q) (err %v)", p, err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "secretlink")); assert.NoError(t, err, "/secretlink after Commit") {
		assert.True(t, fi.Mode().IsRegular(), "/secretlink after Commit: %v, want a regular file", fi.Mode())
	}
}

func TestStageAtomic(t *testing.T) {
	old := bytes.Repeat([]byte("o"), 1<<20)
	fsys, dir := newTree(t, map[string][]byte{"/d/f": old})
	os.Chmod(filepath.Join(dir, "d/f"), 0o600)
	ctx := t.Context()
	var changes []vfs.Change
	var mu sync.Mutex
	cancel := fsys.Watch(func(c vfs.Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() })
	defer cancel()

	s, err := fsys.Stage(ctx, "/d/f", true)
	require.NoError(t, err)
	newData := bytes.Repeat([]byte("n"), 3<<20)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			data, err := fsys.Read(ctx, "/d/f")
			if !assert.NoError(t, err, "a reader") ||
				!assert.True(t, bytes.Equal(data, old) || bytes.Equal(data, newData), "a reader saw %d bytes: neither the old nor the new file", len(data)) {
				return
			}
			runtime.Gosched()
		}
	})
	for off := 0; off < len(newData); off += 64 << 10 {
		_, err := s.WriteAt(newData[off:off+64<<10], int64(off))
		require.NoError(t, err)
	}
	if names := hostNames(t, dir); runtime.GOOS == "linux" {
		assert.Equal(t, []string{"d", "d/f"}, names, "host tree while staging, want no temporary file")
	}
	assert.Len(t, collect(t, fsys.List(ctx, "/d")), 1, "List(/d) while staging, want only /d/f")
	require.NoError(t, s.Commit(ctx))
	stop.Store(true)
	wg.Wait()
	data, _ := fsys.Read(ctx, "/d/f")
	assert.True(t, bytes.Equal(data, newData), "after Commit: %d bytes, want the 3 MiB staged", len(data))
	fi, _ := os.Stat(filepath.Join(dir, "d/f"))
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "mode after Commit, want 0600 kept")

	// Abort leaves nothing; a staging under missing directories makes
	// them only at Commit.
	s, _ = fsys.Stage(ctx, "/d/f", false)
	s.WriteAt([]byte("dropped"), 0)
	s.Abort()
	s2, err := fsys.Stage(ctx, "/new/sub/g", false)
	require.NoError(t, err)
	s2.WriteAt([]byte("g"), 0)
	assert.Equal(t, []string{"d", "d/f"}, hostNames(t, dir), "host tree after Abort and a pending staging, want d, d/f only")
	require.NoError(t, s2.Commit(ctx))
	assert.Equal(t, []string{"d", "d/f", "new", "new/sub", "new/sub/g"}, hostNames(t, dir), "host tree after Commit")
	for _, n := range hostNames(t, dir) {
		assert.NotContains(t, n, ".julyfs-tmp-", "temporary file left")
	}
	mu.Lock()
	want := []vfs.Change{{Path: "/d/f", Op: vfs.ChangeWrite}, {Path: "/new/sub/g", Op: vfs.ChangeWrite}}
	assert.Equal(t, want, changes, "Watch events (one per Commit, none for Abort)")
	mu.Unlock()
}

func TestStageCommitOverDir(t *testing.T) {
	fsys, dir := newTree(t, nil)
	ctx := t.Context()
	s, err := fsys.Stage(ctx, "/x", false)
	require.NoError(t, err)
	s.WriteAt([]byte("data"), 0)
	os.Mkdir(filepath.Join(dir, "x"), 0o755)
	assert.EqualError(t, s.Commit(ctx), "is a directory: /x", "Commit over a directory")
	os.Remove(filepath.Join(dir, "x"))
	assert.NoError(t, s.Commit(ctx), "Commit retried")
	data, _ := fsys.Read(ctx, "/x")
	assert.Equal(t, "data", string(data), "Read(/x)")
	assert.Equal(t, []string{"x"}, hostNames(t, dir), "host tree, want x only")
	_, err = fsys.Stage(ctx, "/", false)
	assert.EqualError(t, err, "is a directory: /", "Stage(/)")
}
