package local_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// TestStatIno: Stat gives the host's device and inode number, the same
// for two names of one file and kept across a rename, and a link's own
// (LinkDev, LinkIno) beside its target's.
func TestStatIno(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "d"), 0o755))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	ctx := t.Context()
	host := func(name string) syscall.Stat_t {
		var st syscall.Stat_t
		require.NoError(t, syscall.Lstat(filepath.Join(root, name), &st))
		return st
	}

	require.NoError(t, vfs.Link(ctx, fsys, "/f", "/g"))
	require.NoError(t, vfs.Symlink(ctx, fsys, "f", "/l"))
	f, err := fsys.Stat(ctx, "/f")
	require.NoError(t, err)
	g, err := fsys.Stat(ctx, "/g")
	require.NoError(t, err)
	st := host("f")
	assert.Equal(t, [2]uint64{uint64(st.Dev), st.Ino}, [2]uint64{f.Dev, f.Ino})
	assert.Equal(t, f.Ino, g.Ino, "two names, one inode")
	d, err := fsys.Stat(ctx, "/d")
	require.NoError(t, err)
	assert.Equal(t, host("d").Ino, d.Ino)
	l, err := fsys.Stat(ctx, "/l")
	require.NoError(t, err)
	assert.Equal(t, f.Ino, l.Ino, "a link's target")
	assert.Equal(t, host("l").Ino, l.LinkIno, "the link's own")

	require.NoError(t, vfs.Rename(ctx, fsys, "/g", "/d/h"))
	h, err := fsys.Stat(ctx, "/d/h")
	require.NoError(t, err)
	assert.Equal(t, f.Ino, h.Ino, "kept across a rename")
}

// TestListHost: ListHost lists every entry of a directory with the
// host's inode number (a link's own), and the type of its FIFOs and
// sockets, in name order; nothing for a missing directory.
func TestListHost(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a"), nil, 0o644))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "c"), 0o600))
	require.NoError(t, os.Symlink("a", filepath.Join(root, "d")))
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer syscall.Close(fd)
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrUnix{Name: filepath.Join(root, "b")}))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })

	var want []vfs.FileInfo
	for _, e := range []struct {
		name string
		sp   fs.FileMode
	}{{"a", 0}, {"b", fs.ModeSocket}, {"c", fs.ModeNamedPipe}, {"d", 0}} {
		var st syscall.Stat_t
		require.NoError(t, syscall.Lstat(filepath.Join(root, e.name), &st))
		want = append(want, vfs.FileInfo{Path: "/" + e.name, Kind: vfs.KindMissing, Special: e.sp, Dev: uint64(st.Dev), Ino: st.Ino})
	}
	got, err := vfs.ListHost(t.Context(), fsys, "/")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got, err = vfs.ListHost(t.Context(), fsys, "/nope")
	require.NoError(t, err)
	assert.Empty(t, got)
}
