package local_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// TestLongPaths: a path longer than the kernel's PATH_MAX (4,096 bytes)
// made of ordinary names works for every verb, as the host allows it; a
// single name over 255 bytes fails to write with the OS's reason and is
// missing for the read verbs.
func TestLongPaths(t *testing.T) {
	ctx := t.Context()
	fsys, _ := newTree(t, nil)
	seg := strings.Repeat("d", 200)
	var b strings.Builder
	for b.Len() < 4200 {
		b.WriteString("/" + seg)
	}
	dir := b.String()
	p := dir + "/f.txt"
	require.Greater(t, len(p), 4096)

	require.NoError(t, fsys.Write(ctx, p, []byte("long")))
	st, err := fsys.Stat(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, vfs.KindFile, st.Kind)
	data, err := fsys.Read(ctx, p)
	require.NoError(t, err)
	assert.Equal(t, "long", string(data))
	buf := make([]byte, 3)
	n, err := fsys.ReadAt(ctx, p, buf, 1)
	require.NoError(t, err)
	assert.Equal(t, "ong", string(buf[:n]))
	assert.Equal(t, []string{p}, paths(collect(t, fsys.List(ctx, dir))))
	assert.Equal(t, []string{p}, paths(collect(t, fsys.Glob(ctx, "**/f.txt", "/"))))
	hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "long", Path: dir}))
	require.Len(t, hits, 1)
	assert.Equal(t, p, hits[0].Path)
	etag, err := fsys.WriteIf(ctx, p, []byte("longer"), vfs.Precondition{IfMatch: st.ETag})
	require.NoError(t, err)
	assert.NotEqual(t, st.ETag, etag)
	require.NoError(t, fsys.Rename(ctx, p, dir+"/g.txt"))
	require.NoError(t, fsys.Delete(ctx, dir+"/g.txt"))
	st, err = fsys.Stat(ctx, dir+"/g.txt")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, st.Kind)

	long := "/" + strings.Repeat("n", 300)
	err = fsys.Write(ctx, long, []byte("x"))
	assert.EqualError(t, err, "write failed: "+long+": file name too long")
	_, err = fsys.Read(ctx, long)
	assert.ErrorIs(t, err, vfs.ErrNotFound)
}

// TestStaleTempsSwept: temporary files left by a writer that died (old and
// unlocked) are removed when the tree opens (root directory) and when a
// walk reads their directory; a fresh one, a locked one and anything not a
// regular file stay.
func TestStaleTempsSwept(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	seed(t, dir, map[string][]byte{"/a.txt": []byte("a"), "/sub/b.txt": []byte("b")})
	old := time.Now().Add(-time.Hour)
	mk := func(name string, age time.Time) string {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o644))
		require.NoError(t, os.Chtimes(p, age, age))
		return p
	}
	rootStale := mk(".julyfs-tmp-00000000000000a1", old)
	subStale := mk("sub/.julyfs-tmp-00000000000000b1", old)
	fresh := mk("sub/.julyfs-tmp-00000000000000b2", time.Now())
	locked := mk("sub/.julyfs-tmp-00000000000000b3", old)
	lf, err := os.Open(locked)
	require.NoError(t, err)
	defer lf.Close()
	require.NoError(t, unix.Flock(int(lf.Fd()), unix.LOCK_SH))
	linkTemp := filepath.Join(dir, "sub/.julyfs-tmp-00000000000000b4")
	require.NoError(t, os.Symlink("b.txt", linkTemp))
	require.NoError(t, os.Chtimes(filepath.Join(dir, "sub"), old, old))

	fsys, err := local.New(dir)
	require.NoError(t, err)
	defer fsys.Close()
	assert.NoFileExists(t, rootStale, "a stale temporary in the root survives New")
	assert.FileExists(t, subStale, "New reads only the root directory")

	assert.Equal(t, []string{"/sub/b.txt"}, paths(collect(t, fsys.List(ctx, "/sub"))))
	assert.NoFileExists(t, subStale, "a stale temporary survives a listing of its directory")
	assert.FileExists(t, fresh)
	assert.FileExists(t, locked, "a temporary whose writer holds its lock was removed")
	_, err = os.Lstat(linkTemp)
	assert.NoError(t, err, "a link named like a temporary was removed")

	// Sweep reaches every directory.
	deep := mk("sub/.julyfs-tmp-00000000000000c1", old)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "x/y"), 0o755))
	deeper := mk("x/y/.julyfs-tmp-00000000000000c2", old)
	require.NoError(t, fsys.Sweep(ctx))
	assert.NoFileExists(t, deep)
	assert.NoFileExists(t, deeper)
}

// TestWriteKeepsOwner (as root): a rewrite keeps the file's owner, group
// and permission bits, and drops setuid and setgid as a write by an
// unprivileged process does.
func TestWriteKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	ctx := t.Context()
	fsys, dir := newTree(t, map[string][]byte{"/owned.sh": []byte("#!/bin/sh\n"), "/plain.txt": []byte("p")})
	host := filepath.Join(dir, "owned.sh")
	require.NoError(t, os.Chown(host, 65534, 65534))
	require.NoError(t, os.Chmod(host, 0o750|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
	require.NoError(t, fsys.Write(ctx, "/owned.sh", []byte("#!/bin/sh\necho\n")))
	fi, err := os.Stat(host)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, uint32(65534), st.Uid, "owner")
	assert.Equal(t, uint32(65534), st.Gid, "group")
	assert.Equal(t, os.FileMode(0o750)|os.ModeSticky, fi.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))

	// A new file is the writer's, with the umask's mode, as before.
	require.NoError(t, fsys.Write(ctx, "/new.txt", []byte("n")))
	fi, err = os.Stat(filepath.Join(dir, "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, uint32(0), fi.Sys().(*syscall.Stat_t).Uid)
}

// TestWriteThroughAbsoluteDirLink: Write, WriteIf, Delete, MakeDir and
// Stage reach a file through a directory link whose target is an
// absolute path inside the root, as Read does.
func TestWriteThroughAbsoluteDirLink(t *testing.T) {
	ctx := t.Context()
	fsys, dir := newTree(t, map[string][]byte{"/real/f.txt": []byte("f")})
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(filepath.Join(real, "real"), filepath.Join(dir, "abs")))

	require.NoError(t, fsys.Write(ctx, "/abs/new.txt", []byte("new")))
	data, err := os.ReadFile(filepath.Join(dir, "real/new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new", string(data))
	require.NoError(t, fsys.Write(ctx, "/abs/deeper/n.txt", []byte("n")))
	assert.FileExists(t, filepath.Join(dir, "real/deeper/n.txt"))
	st, err := fsys.Stat(ctx, "/abs/f.txt")
	require.NoError(t, err)
	_, err = fsys.WriteIf(ctx, "/abs/f.txt", []byte("f2"), vfs.Precondition{IfMatch: st.ETag})
	require.NoError(t, err)
	require.NoError(t, fsys.Delete(ctx, "/abs/new.txt"))
	assert.NoFileExists(t, filepath.Join(dir, "real/new.txt"))
	require.NoError(t, fsys.MakeDir(ctx, "/abs/made/sub"))
	assert.DirExists(t, filepath.Join(dir, "real/made/sub"))
	s, err := fsys.Stage(ctx, "/abs/staged.txt", false)
	require.NoError(t, err)
	_, err = s.WriteAt([]byte("staged"), 0)
	require.NoError(t, err)
	require.NoError(t, s.Commit(ctx))
	data, err = os.ReadFile(filepath.Join(dir, "real/staged.txt"))
	require.NoError(t, err)
	assert.Equal(t, "staged", string(data))
	fi, err := os.Lstat(filepath.Join(dir, "abs"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link itself is untouched")
}

// TestDiskFull (as root, on a 64 KiB tmpfs): a write that does not fit
// says why, leaves the old file and no temporary behind.
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	ctx := t.Context()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.txt"), []byte("old"), 0o644))
	fsys, err := local.New(dir)
	require.NoError(t, err)
	defer fsys.Close()

	err = fsys.Write(ctx, "/old.txt", bytes.Repeat([]byte("x"), 1<<20))
	assert.EqualError(t, err, "write failed: /old.txt: no space left on device")
	assert.ErrorIs(t, err, vfs.ErrWriteFailed)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	data, err := os.ReadFile(filepath.Join(dir, "old.txt"))
	require.NoError(t, err)
	assert.Equal(t, "old", string(data))
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.True(t, slices.Equal(names, []string{"old.txt"}), "left behind: %q", names)
}
