package vfs_test

import (
	"context"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// exdevRenamer is a Renamer that can never move in one step.
type exdevRenamer struct{ vfs.FileSystem }

func (exdevRenamer) Rename(_ context.Context, _, to string) error {
	return vfs.WriteFailed(to, syscall.EXDEV)
}

// TestRenameFallback: without a Renamer, or with one answering EXDEV,
// vfs.Rename copies a file and deletes the original; it refuses a
// directory and changes nothing; a rename onto itself keeps the file.
func TestRenameFallback(t *testing.T) {
	ctx := t.Context()
	for name, wrap := range map[string]func(vfs.FileSystem) vfs.FileSystem{
		"no Renamer": func(f vfs.FileSystem) vfs.FileSystem { return plain{f} },
		"EXDEV":      func(f vfs.FileSystem) vfs.FileSystem { return exdevRenamer{f} },
	} {
		t.Run(name, func(t *testing.T) {
			base := temp.MustNew(map[string]string{"/a.txt": "a", "/d/b.txt": "b", "/c.txt": "c"})
			fsys := wrap(base)
			require.NoError(t, vfs.Rename(ctx, fsys, "/a.txt", "/moved/a.txt"))
			data, err := base.Read(ctx, "/moved/a.txt")
			require.NoError(t, err)
			assert.Equal(t, "a", string(data))
			st, err := base.Stat(ctx, "/a.txt")
			require.NoError(t, err)
			assert.Equal(t, vfs.KindMissing, st.Kind)

			require.NoError(t, vfs.Rename(ctx, fsys, "/c.txt", "/./c.txt"))
			data, err = base.Read(ctx, "/c.txt")
			require.NoError(t, err, "a rename onto itself lost the file")
			assert.Equal(t, "c", string(data))

			err = vfs.Rename(ctx, fsys, "/d", "/e")
			assert.ErrorIs(t, err, vfs.ErrIsDir)
			assert.ErrorIs(t, err, syscall.EXDEV)
			data, err = base.Read(ctx, "/d/b.txt")
			require.NoError(t, err)
			assert.Equal(t, "b", string(data))

			assert.EqualError(t, vfs.Rename(ctx, fsys, "/nope", "/x"), "not found: /nope")
		})
	}
}

// TestRenameNative: a Renamer's answer is used as it is.
func TestRenameNative(t *testing.T) {
	ctx := t.Context()
	base := temp.MustNew(map[string]string{"/d/a.txt": "a", "/d/e/b.txt": "b"})
	require.NoError(t, vfs.Rename(ctx, base, "/d", "/z"))
	data, err := base.Read(ctx, "/z/e/b.txt")
	require.NoError(t, err)
	assert.Equal(t, "b", string(data))
}
