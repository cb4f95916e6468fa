package aferofs_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/aferofs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func memFs(t *testing.T, files map[string][]byte) afero.Fs {
	mem := afero.NewMemMapFs()
	for p, data := range files {
		require.NoError(t, mem.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, afero.WriteFile(mem, p, data, 0o644))
	}
	return mem
}

// TestConformanceMemMapFs: afero's in-memory tree as a vfs tree.
func TestConformanceMemMapFs(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return aferofs.New(memFs(t, files))
	}, vfstest.Options{})
}

// TestConformanceReadOnlyFs: afero's read-only wrapper refuses writes
// with EPERM, which the bridge reports as read-only mount.
func TestConformanceReadOnlyFs(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		return aferofs.New(afero.NewReadOnlyFs(memFs(t, files)))
	}, vfstest.Options{ReadOnly: true})
}

// TestConformanceRoundTrip: a vfs tree as an afero.Fs and back passes the
// vfs suite, which exercises ToAfero's files and directories.
func TestConformanceRoundTrip(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		tree, err := temp.New(files)
		require.NoError(t, err)
		return aferofs.New(aferofs.ToAfero(tree))
	}, vfstest.Options{})
}

// aferoBehaviour checks what code written against afero relies on, with
// afero's own helpers. It runs on afero's MemMapFs first (so the test
// itself is right) and then on ToAfero of a temp tree.
func aferoBehaviour(t *testing.T, afs afero.Fs) {
	a := afero.Afero{Fs: afs}
	require.NoError(t, a.MkdirAll("/d/sub", 0o755))
	require.NoError(t, a.WriteFile("/d/sub/b.txt", []byte("bee"), 0o644))
	require.NoError(t, a.WriteFile("/d/a.txt", []byte("ay"), 0o644))

	data, err := a.ReadFile("/d/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "ay", string(data))

	ok, err := a.Exists("/d/a.txt")
	assert.True(t, ok && err == nil)
	ok, err = a.Exists("/nope")
	assert.False(t, ok)
	assert.NoError(t, err)
	ok, err = a.DirExists("/d/sub")
	assert.True(t, ok && err == nil)
	ok, err = a.IsDir("/d/a.txt")
	assert.False(t, ok)
	assert.NoError(t, err)

	infos, err := a.ReadDir("/d")
	require.NoError(t, err)
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	assert.Equal(t, []string{"a.txt", "sub"}, names)
	assert.True(t, infos[1].IsDir())
	assert.Equal(t, int64(2), infos[0].Size())

	var walked []string
	require.NoError(t, a.Walk("/d", func(p string, fi fs.FileInfo, err error) error {
		require.NoError(t, err)
		walked = append(walked, p)
		return nil
	}))
	assert.Equal(t, []string{"/d", "/d/a.txt", "/d/sub", "/d/sub/b.txt"}, walked)

	_, err = a.ReadFile("/missing")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = a.Stat("/missing")
	assert.True(t, os.IsNotExist(err))

	// Append, exclusive create, truncate.
	f, err := a.OpenFile("/d/a.txt", os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("!")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	data, _ = a.ReadFile("/d/a.txt")
	assert.Equal(t, "ay!", string(data))
	_, err = a.OpenFile("/d/a.txt", os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	assert.ErrorIs(t, err, fs.ErrExist)
	f, err = a.Create("/d/a.txt")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	data, _ = a.ReadFile("/d/a.txt")
	assert.Empty(t, data)

	// Seek and read in parts.
	require.NoError(t, a.WriteFile("/s.txt", []byte("0123456789"), 0o644))
	f, err = a.Open("/s.txt")
	require.NoError(t, err)
	_, err = f.Seek(4, io.SeekStart)
	require.NoError(t, err)
	buf := make([]byte, 3)
	_, err = io.ReadFull(f, buf)
	require.NoError(t, err)
	assert.Equal(t, "456", string(buf))
	require.NoError(t, f.Close())

	// A temp file is created, written and listed.
	tf, err := a.TempFile("/d", "tmp-*.txt")
	require.NoError(t, err)
	_, err = tf.Write([]byte("t"))
	require.NoError(t, err)
	require.NoError(t, tf.Close())
	data, err = a.ReadFile(tf.Name())
	require.NoError(t, err)
	assert.Equal(t, "t", string(data))

	require.NoError(t, a.Rename("/d/sub/b.txt", "/d/c.txt"))
	data, err = a.ReadFile("/d/c.txt")
	require.NoError(t, err)
	assert.Equal(t, "bee", string(data))
	_, err = a.Stat("/d/sub/b.txt")
	assert.ErrorIs(t, err, fs.ErrNotExist)

	err = a.Remove("/missing")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	require.NoError(t, a.RemoveAll("/d"))
	ok, _ = a.Exists("/d/c.txt")
	assert.False(t, ok)
	require.NoError(t, a.RemoveAll("/d"), "RemoveAll of a missing path is not an error")

	var pe *os.PathError
	_, err = a.Open("/nope")
	assert.True(t, errors.As(err, &pe), "errors are *os.PathError: %T", err)
}

func TestAferoBehaviourReference(t *testing.T) { aferoBehaviour(t, afero.NewMemMapFs()) }

func TestAferoBehaviourToAfero(t *testing.T) {
	tree, err := temp.New(nil)
	require.NoError(t, err)
	aferoBehaviour(t, aferofs.ToAfero(tree))
}

func TestToAferoReadOnly(t *testing.T) {
	tree, err := temp.New(map[string][]byte{"/a": []byte("x")})
	require.NoError(t, err)
	afs := aferofs.ToAfero(aferofsReadOnly(tree))
	err = afero.WriteFile(afs, "/a", []byte("y"), 0o644)
	assert.ErrorIs(t, err, fs.ErrPermission)
}
