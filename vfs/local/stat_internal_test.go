//go:build linux

package local

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// TestStatBeneathSameAnswer: Stat's bare-descriptor answer (statBeneath:
// openat2 of the name itself, fstat) is what the os.File path (statLink,
// info) answers for every kind of name: files with setuid, setgid and
// sticky bits, directories, missing names, names under a file, special
// files; links it leaves to statLink.
func TestStatBeneathSameAnswer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("openat2 is Linux only")
	}
	root := t.TempDir()
	w := func(name string, mode os.FileMode) {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("data of "+name), 0o644))
		require.NoError(t, os.Chmod(p, mode))
	}
	w("plain", 0o644)
	w("d/exec", 0o755|os.ModeSetuid|os.ModeSetgid)
	w("d/e/deep", 0o600)
	require.NoError(t, os.Mkdir(filepath.Join(root, "sticky"), 0o777))
	require.NoError(t, os.Chmod(filepath.Join(root, "sticky"), 0o777|os.ModeSticky))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	require.NoError(t, os.Symlink("plain", filepath.Join(root, "link")))
	fsys, err := New(root)
	require.NoError(t, err)
	defer fsys.Close()
	if fsys.rootDir == nil || noOpenat2.Load() {
		t.Skip("no openat2")
	}
	for _, p := range []string{"/plain", "/d", "/d/exec", "/d/e", "/d/e/deep", "/sticky", "/fifo", "/nope", "/plain/under", "/d/nope/x"} {
		got, ok, err := fsys.statBeneath(p)
		require.True(t, ok, p)
		require.NoError(t, err, p)
		fi, lfi, err := fsys.statLink(rel(p))
		want := vfs.FileInfo{Path: p, Kind: vfs.KindMissing}
		if err == nil {
			want = info(p, fi)
		} else {
			require.True(t, isMissing(err), "%s: %v", p, err)
		}
		require.Nil(t, lfi, p)
		assert.Equal(t, want, got, p)
	}
	for _, p := range []string{"/", "/link"} {
		_, ok, _ := fsys.statBeneath(p)
		assert.False(t, ok, "%s: left to statLink", p)
	}
	st, err := fsys.Stat(t.Context(), "/d/exec")
	require.NoError(t, err)
	assert.Equal(t, 0o755|os.ModeSetuid|os.ModeSetgid, st.Mode, "setuid and setgid shown")
	st, err = fsys.Stat(t.Context(), "/link")
	require.NoError(t, err)
	assert.True(t, st.Link && st.Kind == vfs.KindFile && st.Size == int64(len("data of plain")), "a link followed: %+v", st)
}

// TestStatDirSameAnswer: a StatDir describes a file or a directory of
// its directory as the tree's Stat does, and leaves everything else
// (links, special files, missing names, names that are not one
// component) to Stat; after Close it answers nothing.
func TestStatDirSameAnswer(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "d/sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "d/f"), []byte("data"), 0o640))
	require.NoError(t, os.Chmod(filepath.Join(root, "d/f"), 0o640|os.ModeSetgid))
	require.NoError(t, os.WriteFile(filepath.Join(root, "top"), []byte("t"), 0o644))
	require.NoError(t, os.Symlink("f", filepath.Join(root, "d/link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "d/fifo"), 0o644))
	fsys, err := New(root)
	require.NoError(t, err)
	defer fsys.Close()
	for _, dir := range []string{"/d", "/"} {
		sd, err := fsys.OpenStatDir(dir)
		require.NoError(t, err)
		for _, name := range []string{"f", "sub", "top", "d"} {
			want, err := fsys.Stat(t.Context(), vfs.Join(dir, name))
			require.NoError(t, err)
			got, ok := sd.Stat(name)
			if want.Kind == vfs.KindMissing {
				assert.False(t, ok, "%s in %s", name, dir)
				continue
			}
			require.True(t, ok, "%s in %s", name, dir)
			assert.Equal(t, want, got, "%s in %s", name, dir)
		}
		for _, name := range []string{"link", "fifo", "nope", "..", ".", "", "sub/x", "f/.."} {
			_, ok := sd.Stat(name)
			assert.False(t, ok, "%q in %s", name, dir)
		}
		require.NoError(t, sd.Close())
		require.NoError(t, sd.Close())
		_, ok := sd.Stat("f")
		assert.False(t, ok, "after Close")
	}
	_, err = fsys.OpenStatDir("/top")
	assert.Error(t, err, "a file")
	_, err = fsys.OpenStatDir("/nope")
	assert.Error(t, err, "missing")
}
