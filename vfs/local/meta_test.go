package local_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// TestMetaOnHost: modes, times and links set through the tree land on
// the host: chmod +x makes a runnable script, a modification time is the
// host's, a link is a host link.
func TestMetaOnHost(t *testing.T) {
	ctx := t.Context()
	fsys, dir := newTree(t, map[string][]byte{"/script.sh": []byte("#!/bin/sh\necho ran\n"), "/d/f.txt": []byte("f")})
	require.NoError(t, fsys.SetMode(ctx, "/script.sh", 0o755))
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "script.sh")).Output()
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(out))
	require.NoError(t, fsys.SetMode(ctx, "/d", 0o700|os.ModeSticky))
	fi, err := os.Stat(filepath.Join(dir, "d"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700)|os.ModeSticky, fi.Mode()&(os.ModePerm|os.ModeSticky))

	when := time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)
	before, err := fsys.Stat(ctx, "/d/f.txt")
	require.NoError(t, err)
	require.NoError(t, fsys.SetModTime(ctx, "/d/f.txt", when))
	fi, err = os.Stat(filepath.Join(dir, "d/f.txt"))
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(when), "host mtime %v", fi.ModTime())
	after, err := fsys.Stat(ctx, "/d/f.txt")
	require.NoError(t, err)
	assert.NotEqual(t, before.ETag, after.ETag, "the etag follows the modification time")

	require.NoError(t, fsys.Symlink(ctx, "../script.sh", "/d/new/lnk"))
	target, err := os.Readlink(filepath.Join(dir, "d/new/lnk"))
	require.NoError(t, err)
	assert.Equal(t, "../script.sh", target)
	got, err := fsys.Readlink(ctx, "/d/new/lnk")
	require.NoError(t, err)
	assert.Equal(t, "../script.sh", got)
	err = fsys.Symlink(ctx, "x", "/d/f.txt")
	assert.ErrorIs(t, err, syscall.EEXIST)
	assert.ErrorIs(t, fsys.Symlink(ctx, "", "/d/empty"), syscall.EINVAL)
	_, err = fsys.Readlink(ctx, "/d/f.txt")
	assert.ErrorIs(t, err, syscall.EINVAL)
}

// TestMetaConfined: a link made through the tree to a path outside the
// root reads as missing and writes through it never touch the outside;
// SetMode and SetModTime through links out of the root are not found and
// change nothing outside.
func TestMetaConfined(t *testing.T) {
	ctx := t.Context()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("secret"), 0o600))
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	require.NoError(t, os.Chtimes(secret, old, old))
	fsys, dir := newTree(t, map[string][]byte{"/in.txt": []byte("in")})

	require.NoError(t, fsys.Symlink(ctx, secret, "/abs"))
	require.NoError(t, fsys.Symlink(ctx, "../"+filepath.Base(outside)+"/secret", "/rel"))
	require.NoError(t, fsys.Symlink(ctx, outside, "/outdir"))
	for _, p := range []string{"/abs", "/rel", "/outdir/secret"} {
		_, err := fsys.Read(ctx, p)
		assert.True(t, errors.Is(err, vfs.ErrNotFound), "Read(%s) = %v", p, err)
		assert.ErrorIs(t, fsys.SetMode(ctx, p, 0o777), vfs.ErrNotFound, "SetMode(%s)", p)
		assert.ErrorIs(t, fsys.SetModTime(ctx, p, time.Now()), vfs.ErrNotFound, "SetModTime(%s)", p)
	}
	assert.Error(t, fsys.Write(ctx, "/outdir/planted", []byte("x")))
	assert.Error(t, fsys.Symlink(ctx, "x", "/outdir/planted-link"))
	require.NoError(t, fsys.Write(ctx, "/abs", []byte("replaced")), "a write at a link replaces the link")

	fi, err := os.Stat(secret)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.True(t, fi.ModTime().Equal(old))
	data, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "secret", string(data))
	ents, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, ents, 1)
	fi, err = os.Lstat(filepath.Join(dir, "abs"))
	require.NoError(t, err)
	assert.True(t, fi.Mode().IsRegular())
}
