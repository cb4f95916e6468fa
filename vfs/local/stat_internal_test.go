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
