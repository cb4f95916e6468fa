package cow_test

import (
	"context"
	"iter"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/readonly"
)

func list(t *testing.T, fsys vfs.FileSystem, dir string) []string {
	t.Helper()
	var out []string
	for e, err := range fsys.List(t.Context(), dir) {
		require.NoError(t, err)
		out = append(out, e.Path)
	}
	return out
}

func glob(t *testing.T, fsys vfs.FileSystem, pattern string) []string {
	t.Helper()
	var out []string
	for e, err := range fsys.Glob(t.Context(), pattern, "/") {
		require.NoError(t, err)
		out = append(out, e.Path)
	}
	return out
}

// TestRemovedDirStaysEmpty is rm -rf d && mkdir d: the base's old files
// do not come back, before or after a reopen.
func TestRemovedDirStaysEmpty(t *testing.T) {
	ctx := t.Context()
	base := tempBase(t, map[string][]byte{"/d/a.txt": []byte("a"), "/d/sub/b.txt": []byte("b"), "/keep.txt": []byte("k")})
	dir := t.TempDir()
	c, err := cow.Open(base, dir)
	require.NoError(t, err)
	require.NoError(t, c.Delete(ctx, "/d/sub/b.txt"))
	require.NoError(t, c.RemoveDir(ctx, "/d/sub"))
	require.NoError(t, c.Delete(ctx, "/d/a.txt"))
	require.NoError(t, c.RemoveDir(ctx, "/d"))
	info, err := c.Stat(ctx, "/d")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, info.Kind)
	require.NoError(t, c.MakeDir(ctx, "/d"))
	assert.Empty(t, list(t, c, "/d"))
	require.NoError(t, c.Write(ctx, "/d/new.txt", []byte("n")))
	check := func(c *cow.FS) {
		assert.Equal(t, []string{"/d/new.txt"}, list(t, c, "/d"))
		assert.Equal(t, []string{"/d", "/d/new.txt", "/keep.txt"}, glob(t, c, "**"))
		_, err := c.Read(ctx, "/d/sub/b.txt")
		assert.ErrorIs(t, err, vfs.ErrNotFound)
		var hits []string
		for h, err := range c.Grep(ctx, vfs.GrepQuery{Pattern: "."}) {
			require.NoError(t, err)
			hits = append(hits, h.Path)
		}
		assert.Equal(t, []string{"/d/new.txt", "/keep.txt"}, hits)
	}
	check(c)
	require.NoError(t, c.Close())
	c, err = cow.Open(base, dir)
	require.NoError(t, err)
	defer c.Close()
	check(c)
	// The entries: the directory is opaque over the base's.
	es := c.Entries()
	require.Len(t, es, 2)
	assert.Equal(t, cow.Entry{Path: "/d", Type: cow.TypeDir, Mode: 0o755, ModTime: es[0].ModTime, Opaque: true, BaseKind: "dir"}, es[0])
	assert.Equal(t, "/d/new.txt", es[1].Path)
}

// TestBaseNeverWritten runs every kind of change over a read-only base:
// all succeed, and the base is as it was.
func TestBaseNeverWritten(t *testing.T) {
	ctx := t.Context()
	files := map[string][]byte{"/a.txt": []byte("a\n"), "/dir/b.txt": []byte("b\n"), "/dir/sub/c.txt": []byte("c\n")}
	inner := tempBase(t, files)
	c := open(t, readonly.New(inner))
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("changed\n")))
	require.NoError(t, c.Write(ctx, "/new/deep/n.txt", []byte("n\n")))
	require.NoError(t, c.Delete(ctx, "/dir/b.txt"))
	require.NoError(t, c.Rename(ctx, "/dir/sub/c.txt", "/moved.txt"))
	require.NoError(t, c.Symlink(ctx, "a.txt", "/link"))
	require.NoError(t, c.SetMode(ctx, "/dir", 0o700))
	require.NoError(t, c.MakeDir(ctx, "/empty"))
	s, err := c.Stage(ctx, "/a.txt", true)
	require.NoError(t, err)
	_, err = s.WriteAt([]byte("C"), 0)
	require.NoError(t, err)
	require.NoError(t, s.Commit(ctx))

	got, err := c.Read(ctx, "/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "Changed\n", string(got))
	got, err = c.Read(ctx, "/link")
	require.NoError(t, err)
	assert.Equal(t, "Changed\n", string(got))
	for p, data := range files {
		got, err := inner.Read(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, string(data), string(got), "base %s", p)
	}
	var basePaths []string
	for e, err := range inner.Glob(ctx, "**", "/") {
		require.NoError(t, err)
		basePaths = append(basePaths, e.Path)
	}
	assert.Equal(t, []string{"/a.txt", "/dir", "/dir/b.txt", "/dir/sub", "/dir/sub/c.txt"}, basePaths)
}

// TestRenameBaseDirIsCrossDevice: a directory holding base files is not
// moved in one step; one of the layer's own is.
func TestRenameBaseDirIsCrossDevice(t *testing.T) {
	ctx := t.Context()
	c := open(t, tempBase(t, map[string][]byte{"/dir/b.txt": []byte("b")}))
	err := c.Rename(ctx, "/dir", "/other")
	assert.ErrorIs(t, err, syscall.EXDEV)
	require.NoError(t, c.Write(ctx, "/mine/x.txt", []byte("x")))
	require.NoError(t, c.Rename(ctx, "/mine", "/dir2"))
	assert.Equal(t, []string{"/dir", "/dir/b.txt", "/dir2", "/dir2/x.txt"}, glob(t, c, "**"))
	// vfs.Rename copies and deletes a base file.
	require.NoError(t, vfs.Rename(ctx, c, "/dir/b.txt", "/dir2/b.txt"))
	assert.Equal(t, []string{"/dir", "/dir2", "/dir2/b.txt", "/dir2/x.txt"}, glob(t, c, "**"))
}

// TestResetAndMissingBlob: Reset brings back a snapshot; one naming a
// blob the layer lacks is refused, naming the blob, and changes nothing.
func TestResetAndMissingBlob(t *testing.T) {
	ctx := t.Context()
	c := open(t, tempBase(t, map[string][]byte{"/a.txt": []byte("a")}))
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("v1")))
	snap := c.Entries()
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("v2")))
	require.NoError(t, c.Write(ctx, "/b.txt", []byte("b")))
	require.NoError(t, c.Reset(snap))
	got, err := c.Read(ctx, "/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "v1", string(got))
	assert.Equal(t, []string{"/a.txt"}, list(t, c, "/"))

	bad := append([]cow.Entry(nil), snap...)
	bad[0].Hash = "00000000000000000000000000000000000000000000000000000000000000ff"
	err = c.Reset(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "blob 00000000000000000000000000000000000000000000000000000000000000ff of /a.txt is missing")
	assert.Equal(t, snap, c.Entries())

	// A blob removed by hand: the read names it.
	require.NoError(t, os.Remove(cow.BlobPath(c.Dir(), snap[0].Hash)))
	_, err = c.Read(ctx, "/a.txt")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "blob "+snap[0].Hash+" of /a.txt is missing")
}

// TestTornJournalLine: a change cut off mid-line by a crash was never
// reported done; the layer reopens without it.
func TestTornJournalLine(t *testing.T) {
	ctx := t.Context()
	base := tempBase(t, nil)
	dir := t.TempDir()
	c, err := cow.Open(base, dir)
	require.NoError(t, err)
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("a")))
	require.NoError(t, c.Close())
	f, err := os.OpenFile(filepath.Join(dir, "journal.ndjson"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"ops":[{"op":"set","path":"/b.txt","e":{"ty`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	c, err = cow.Open(base, dir)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, []string{"/a.txt"}, list(t, c, "/"))
}

// counting is a base with only the eight verbs, or with ReadAt and
// OpenFile counted.
type plain struct{ vfs.FileSystem }

type ranged struct {
	vfs.FileSystem
	readAts, opens atomic.Int32
}

func (r *ranged) ReadAt(ctx context.Context, p string, b []byte, off int64) (int, error) {
	r.readAts.Add(1)
	return vfs.ReadAt(ctx, r.FileSystem, p, b, off)
}

func (r *ranged) OpenFile(ctx context.Context, p string) (vfs.FileReader, error) {
	r.opens.Add(1)
	return vfs.OpenFile(ctx, r.FileSystem, p)
}

// TestBaseCapabilities: a base file is read through the base's ReadAt and
// OpenFile when it has them, and through the fallbacks when not.
func TestBaseCapabilities(t *testing.T) {
	ctx := t.Context()
	files := map[string][]byte{"/a.txt": []byte("0123456789")}
	r := &ranged{FileSystem: tempBase(t, files)}
	for name, base := range map[string]vfs.FileSystem{"method": r, "fallback": plain{tempBase(t, files)}} {
		t.Run(name, func(t *testing.T) {
			c := open(t, base)
			buf := make([]byte, 3)
			n, err := c.ReadAt(ctx, "/a.txt", buf, 4)
			require.NoError(t, err)
			assert.Equal(t, "456", string(buf[:n]))
			f, err := c.OpenFile(ctx, "/a.txt")
			require.NoError(t, err)
			n, err = f.ReadAt(buf, 7)
			require.NoError(t, err)
			assert.Equal(t, "789", string(buf[:n]))
			require.NoError(t, f.Close())
		})
	}
	assert.Equal(t, int32(1), r.readAts.Load())
	assert.Equal(t, int32(1), r.opens.Load())
	// A layer file's reader is its blob, with a descriptor.
	c := open(t, plain{tempBase(t, files)})
	require.NoError(t, c.Write(ctx, "/a.txt", []byte("layer")))
	f, err := c.OpenFile(ctx, "/a.txt")
	require.NoError(t, err)
	defer f.Close()
	_, ok := vfs.Fd(f)
	assert.True(t, ok, "a layer file's reader has a descriptor")
	var _ iter.Seq2[vfs.DirEntry, error] = c.List(ctx, "/")
}
