package local_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// TestRename moves files and directories on the host: across directories,
// over an existing file, a directory with its contents, through a
// directory link with an absolute target inside the root; and refuses
// what rename(2) refuses, changing nothing.
func TestRename(t *testing.T) {
	ctx := t.Context()
	fsys, dir := newTree(t, map[string][]byte{
		"/a/f.txt": []byte("f"), "/a/g.txt": []byte("g"), "/b/old.txt": []byte("old"),
		"/d/x/y.txt": []byte("y"), "/d/z.txt": []byte("z"), "/e/keep.txt": []byte("keep"),
	})
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(filepath.Join(real, "b"), filepath.Join(dir, "absb")))
	require.NoError(t, os.Chmod(filepath.Join(dir, "a/f.txt"), 0o640))
	before, err := os.Stat(filepath.Join(dir, "a/f.txt"))
	require.NoError(t, err)

	require.NoError(t, fsys.Rename(ctx, "/a/f.txt", "/c/new/f2.txt"))
	after, err := os.Stat(filepath.Join(dir, "c/new/f2.txt"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "a rename moves the inode, it does not copy")
	assert.Equal(t, os.FileMode(0o640), after.Mode().Perm())
	assert.NoFileExists(t, filepath.Join(dir, "a/f.txt"))

	// Over an existing file, through a link with an absolute target.
	require.NoError(t, fsys.Rename(ctx, "/a/g.txt", "/absb/old.txt"))
	data, err := os.ReadFile(filepath.Join(dir, "b/old.txt"))
	require.NoError(t, err)
	assert.Equal(t, "g", string(data))
	fi, err := os.Lstat(filepath.Join(dir, "absb"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, fi.Mode().Type(), "the link is followed, not replaced")

	// A directory with its contents, over an empty directory.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	require.NoError(t, fsys.Rename(ctx, "/d", "/empty"))
	for p, want := range map[string]string{"/empty/x/y.txt": "y", "/empty/z.txt": "z"} {
		data, err := fsys.Read(ctx, p)
		require.NoError(t, err, p)
		assert.Equal(t, want, string(data), p)
	}
	assert.NoDirExists(t, filepath.Join(dir, "d"))

	for _, c := range []struct{ from, to, msg string }{
		{"/nope", "/x", "not found: /nope"},
		{"/empty/x/y.txt", "/e", "is a directory: /e"},
		{"/empty", "/e", "write failed: /e: directory not empty"},
		{"/empty", "/empty/x/in", "write failed: /empty/x/in: invalid argument"},
		{"/empty", "/b/old.txt", "write failed: /b/old.txt: not a directory"},
		{"/", "/r", "write failed: /: device or resource busy"},
		{"/e/keep.txt", "/b/old.txt/under", "write failed: /b/old.txt/under: not a directory"},
	} {
		err := fsys.Rename(ctx, c.from, c.to)
		assert.EqualError(t, err, c.msg, "Rename(%q, %q)", c.from, c.to)
	}
	data, err = fsys.Read(ctx, "/e/keep.txt")
	require.NoError(t, err)
	assert.Equal(t, "keep", string(data))
	assert.NoError(t, fsys.Rename(ctx, "/e/keep.txt", "/e//keep.txt"), "onto itself")
}

// TestRenameConfined: nothing outside the root is moved, replaced or
// made by a rename through a link out of the root, either way.
func TestRenameConfined(t *testing.T) {
	ctx := t.Context()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644))
	fsys, dir := newTree(t, map[string][]byte{"/in.txt": []byte("in")})
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "secretlink")))

	assert.ErrorIs(t, fsys.Rename(ctx, "/out/secret", "/stolen"), vfs.ErrNotFound)
	// A link out of the root moves as a link, inside the root; what it
	// points at stays where it is.
	require.NoError(t, fsys.Rename(ctx, "/secretlink", "/moved"))
	target, err := os.Readlink(filepath.Join(dir, "moved"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(outside, "secret"), target)
	_, err = fsys.Read(ctx, "/moved")
	assert.ErrorIs(t, err, vfs.ErrNotFound, "still missing through the tree")
	assert.Error(t, fsys.Rename(ctx, "/in.txt", "/out/planted"))
	assert.Error(t, fsys.Rename(ctx, "/in.txt", "/../../out/planted2"))
	ents, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Len(t, ents, 1)
	data, err := os.ReadFile(filepath.Join(outside, "secret"))
	require.NoError(t, err)
	assert.Equal(t, "secret", string(data))
	assert.FileExists(t, filepath.Join(dir, "in.txt"))
}

// TestRenameAtomic: readers of the target path during renames over it
// see the old file or the new one, whole, never a missing or partial one.
func TestRenameAtomic(t *testing.T) {
	ctx := t.Context()
	oldData := bytes.Repeat([]byte("o"), 1<<20)
	newData := bytes.Repeat([]byte("n"), 1<<20)
	fsys, _ := newTree(t, map[string][]byte{"/t.bin": oldData})
	var stop atomic.Bool
	var bad atomic.Int32
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				data, err := fsys.Read(ctx, "/t.bin")
				if err != nil || !(bytes.Equal(data, oldData) || bytes.Equal(data, newData)) {
					bad.Add(1)
				}
			}
		}()
	}
	for i := range 50 {
		data := newData
		if i%2 == 1 {
			data = oldData
		}
		require.NoError(t, fsys.Write(ctx, "/src/staged.bin", data))
		require.NoError(t, fsys.Rename(ctx, "/src/staged.bin", "/t.bin"))
	}
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, bad.Load(), "reads of a missing or partial file during renames")
}

// TestRenameAcrossFilesystems mounts a tmpfs inside the root (as root):
// a rename onto it fails with EXDEV, and vfs.Rename falls back to copy
// and delete for a file.
func TestRenameAcrossFilesystems(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	ctx := t.Context()
	fsys, dir := newTree(t, map[string][]byte{"/a.txt": []byte("a"), "/d/b.txt": []byte("b")})
	mnt := filepath.Join(dir, "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })

	err := fsys.Rename(ctx, "/a.txt", "/mnt/a.txt")
	assert.True(t, errors.Is(err, syscall.EXDEV), "Rename across filesystems = %v, want EXDEV", err)
	assert.ErrorIs(t, err, vfs.ErrWriteFailed)
	require.NoError(t, vfs.Rename(ctx, fsys, "/a.txt", "/mnt/a.txt"))
	data, err := fsys.Read(ctx, "/mnt/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "a", string(data))
	assert.NoFileExists(t, filepath.Join(dir, "a.txt"))
	// A directory cannot be copied by the helper: refused, nothing moved.
	assert.ErrorIs(t, vfs.Rename(ctx, fsys, "/d", "/mnt/d"), syscall.EXDEV)
	assert.FileExists(t, filepath.Join(dir, "d/b.txt"))
}
