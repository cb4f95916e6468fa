package fusemount

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// TestHardLinkLocal: ln through a local: mount makes a host hard link;
// both names show Nlink 2 and the same content, an unlink of one shows
// Nlink 1 through the other at once, a link to a directory is EPERM,
// cp -al copies a tree as links, and tar keeps hard links on extraction
// (both names one host inode).
func TestHardLinkLocal(t *testing.T) {
	dir := t.TempDir()
	s := mountT(t, newLocal(t, dir), Options{})
	env := []string{"M=" + s.Dir()}
	out := sh(t, `cd "$M" && echo one > a && ln a b && stat -c '%h' a b && cat b
rm a && stat -c '%h' b && mkdir d && { ln d d2 2>&1 || true; } | grep -c 'not allowed'`, env...)
	assert.Equal(t, "2\n2\none\n1\n1\n", out)
	var a, b os.FileInfo
	sh(t, `cd "$M" && mkdir -p t/s && echo x > t/s/x && cp -al t t2`, env...)
	a, err := os.Stat(filepath.Join(dir, "t", "s", "x"))
	require.NoError(t, err)
	b, err = os.Stat(filepath.Join(dir, "t2", "s", "x"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(a, b), "cp -al: one host inode")

	src := t.TempDir()
	sh(t, `cd "$S" && echo h > h1 && ln h1 h2 && tar -cf ../hl.tar h1 h2 && cd "$M" && tar -xf "$S/../hl.tar"`, append(env, "S="+src)...)
	a, err = os.Stat(filepath.Join(dir, "h1"))
	require.NoError(t, err)
	b, err = os.Stat(filepath.Join(dir, "h2"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(a, b), "tar -xf keeps hard links")
}

// TestHardLinkUnion: within a local: mount of a union ln works; across
// two mounts it is EXDEV (ln says "Invalid cross-device link"); on a
// temp: tree, which has no hard links, ENOTSUP.
func TestHardLinkUnion(t *testing.T) {
	dir := t.TempDir()
	u, err := union.New([]union.Mount{{Prefix: "/", FS: newLocal(t, dir)}, {Prefix: "/notes", FS: temp.MustNew(nil)}})
	require.NoError(t, err)
	s := mountT(t, u, Options{})
	env := []string{"M=" + s.Dir()}
	sh(t, `cd "$M" && echo one > a && ln a b && echo n > notes/n`, env...)
	_, stderr, err := shErr(t, `cd "$M" && ln a notes/a`, env...)
	require.Error(t, err)
	assert.Contains(t, stderr, "Invalid cross-device link")
	_, stderr, err = shErr(t, `cd "$M" && ln notes/n notes/m`, env...)
	require.Error(t, err)
	assert.Contains(t, stderr, "not supported")
	a, err := os.Stat(filepath.Join(dir, "a"))
	require.NoError(t, err)
	b, err := os.Stat(filepath.Join(dir, "b"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(a, b))
}
