package plugins_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// TestDirsThroughPlugin: MakeDir and RemoveDir of a vfs/local tree through
// a plugin answer what the same calls answer in process, on a twin
// directory: the same errors (message, errors.Is of the errno and of
// vfs.ErrNotFound) and the same directories on the host.
func TestDirsThroughPlugin(t *testing.T) {
	plain, remote := t.TempDir(), t.TempDir()
	for _, d := range []string{plain, remote} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "full"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "full", "f.txt"), []byte("f\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(d, "file.txt"), []byte("file\n"), 0o644))
	}
	in, err := local.New(plain)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	fsys := open(t, plugins.Config{Args: map[string]string{"mode": "local", "dir": remote}})
	_, ok := fsys.(vfs.DirMaker)
	require.True(t, ok, "a plugin tree is a vfs.DirMaker")
	_, ok = fsys.(vfs.DirRemover)
	require.True(t, ok, "a plugin tree is a vfs.DirRemover")

	calls := []struct {
		op   string
		path string
		errs []error // what errors.Is must find in the error
	}{
		{"make", "/a//b/c/", nil},
		{"make", "/a/b", nil},
		{"make", "/", nil},
		{"make", "/file.txt", []error{syscall.EEXIST}},
		{"make", "/file.txt/x", []error{syscall.ENOTDIR}},
		{"remove", "/a", []error{syscall.ENOTEMPTY}},
		{"remove", "/full", []error{syscall.ENOTEMPTY}},
		{"remove", "/file.txt", []error{syscall.ENOTDIR}},
		{"remove", "/", []error{syscall.EBUSY}},
		{"remove", "/missing", []error{vfs.ErrNotFound}},
		{"remove", "/a/b/c", nil},
		{"remove", "/a/b", nil},
		{"remove", "/a/b", []error{vfs.ErrNotFound}},
	}
	for _, c := range calls {
		call := func(f vfs.FileSystem) error {
			if c.op == "make" {
				return vfs.MakeDir(t.Context(), f, c.path)
			}
			return vfs.RemoveDir(t.Context(), f, c.path)
		}
		want, got := call(in), call(fsys)
		if want == nil {
			assert.NoError(t, got, "%s %s", c.op, c.path)
		} else {
			assert.EqualError(t, got, want.Error(), "%s %s", c.op, c.path)
		}
		for _, e := range c.errs {
			assert.ErrorIs(t, want, e, "%s %s in process", c.op, c.path)
			assert.ErrorIs(t, got, e, "%s %s through the plugin", c.op, c.path)
		}
	}
	assert.Equal(t, hostTree(t, plain), hostTree(t, remote))
	assert.Equal(t, []string{"a", "file.txt", "full", "full/f.txt"}, hostTree(t, remote))
}

// hostTree lists every name under dir.
func hostTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		r, err := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(r))
		return err
	}))
	slices.Sort(out)
	return out
}

// TestDirsUnsupported: a plugin tree without directories of its own
// (temp) answers errors.ErrUnsupported for both, as vfs.MakeDir and
// vfs.RemoveDir do for such a tree in process, and changes nothing.
func TestDirsUnsupported(t *testing.T) {
	fsys := open(t, plugins.Config{})
	assert.ErrorIs(t, vfs.MakeDir(t.Context(), fsys, "/d"), errors.ErrUnsupported)
	require.NoError(t, fsys.Write(t.Context(), "/d/f", []byte("f")))
	require.NoError(t, fsys.Delete(t.Context(), "/d/f"))
	assert.ErrorIs(t, vfs.RemoveDir(t.Context(), fsys, "/d"), errors.ErrUnsupported)
	info, err := fsys.Stat(t.Context(), "/d")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, info.Kind)
}

// TestClearThroughPlugin is what `julyfs conformance` does between checks
// to a writable plugin over a host directory: delete every file, then
// remove every directory, deepest first. The tree and the host directory
// end empty (the empty directories a Delete leaves on a host used to stay,
// and the next check found them).
func TestClearThroughPlugin(t *testing.T) {
	dir := t.TempDir()
	fsys := open(t, plugins.Config{Args: map[string]string{"mode": "local", "dir": dir}})
	ctx := t.Context()
	for _, p := range []string{"/a.txt", "/w/x.txt", "/w/deep/er/y.txt", "/z/z.txt"} {
		require.NoError(t, fsys.Write(ctx, p, []byte(p)))
	}
	require.NoError(t, vfs.MakeDir(ctx, fsys, "/empty/too"))
	var all []vfs.DirEntry
	for e, err := range fsys.Glob(ctx, "**", "/") {
		require.NoError(t, err)
		all = append(all, e)
	}
	for _, e := range slices.Backward(all) {
		if e.Kind == vfs.KindDir {
			require.NoError(t, vfs.RemoveDir(ctx, fsys, e.Path), e.Path)
		} else {
			require.NoError(t, fsys.Delete(ctx, e.Path), e.Path)
		}
	}
	var left []string
	for e, err := range fsys.List(ctx, "/") {
		require.NoError(t, err)
		left = append(left, e.Path)
	}
	assert.Empty(t, left)
	assert.Empty(t, hostTree(t, dir))
}

// TestConformanceHostDir runs the conformance suite on a writable plugin
// serving vfs/local over a fresh host directory per tree, through the
// host's own reads beneath its root and without them.
func TestConformanceHostDir(t *testing.T) {
	for name, cfg := range map[string]plugins.Config{"HostDir": {}, "NoHostDir": {NoHostDir: true}} {
		t.Run(name, func(t *testing.T) {
			vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
				dir := t.TempDir()
				for p, data := range files {
					f := filepath.Join(dir, filepath.FromSlash(p))
					require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
					require.NoError(t, os.WriteFile(f, data, 0o644))
				}
				c := cfg
				c.Args = map[string]string{"mode": "local", "dir": dir}
				return open(t, c)
			}, vfstest.Options{KeepsEmptyDirs: true, HostGrepRoot: true})
		})
	}
}
