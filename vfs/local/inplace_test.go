package local_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// TestCreateInPlace: CreateInPlace makes a new file with the mode asked
// (the umask not applied), open for writing, reports the create, and
// refuses a name that is taken (a file, a directory, a link, dangling or
// not) or a missing parent; WroteInPlace reports the writes once it has
// checked that the name still holds the file, and is a conflict when
// another writer replaced it or removed it.
func TestCreateInPlace(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "taken"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir"), 0o755))
	require.NoError(t, os.Symlink("nowhere", filepath.Join(root, "dangling")))
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	var changes []vfs.Change
	cancel := fsys.Watch(func(c vfs.Change) { changes = append(changes, c) })
	t.Cleanup(cancel)

	old := syscall.Umask(0o077)
	f, fi, err := fsys.CreateInPlace(ctx, "/dir/new.txt", 0o664)
	syscall.Umask(old)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	assert.Equal(t, vfs.KindFile, fi.Kind)
	assert.Equal(t, "/dir/new.txt", fi.Path)
	assert.Zero(t, fi.Size)
	assert.Equal(t, uint32(0o664), vfs.ModeBits(fi.Mode), "the mode asked, not the umask's")
	st, err := fsys.Stat(ctx, "/dir/new.txt")
	require.NoError(t, err)
	assert.Equal(t, st.ETag, fi.ETag, "what Stat says")
	assert.Equal(t, []vfs.Change{{Path: "/dir/new.txt", Op: vfs.ChangeWrite}}, changes, "the create reported")

	_, err = f.WriteString("hello\n")
	require.NoError(t, err)
	got, err := fsys.Read(ctx, "/dir/new.txt")
	require.NoError(t, err)
	assert.Equal(t, "hello\n", string(got), "written in place: seen at once")
	fi, err = fsys.WroteInPlace(ctx, "/dir/new.txt", f)
	require.NoError(t, err)
	assert.Equal(t, int64(6), fi.Size)
	st, err = fsys.Stat(ctx, "/dir/new.txt")
	require.NoError(t, err)
	assert.Equal(t, st.ETag, fi.ETag)
	assert.Len(t, changes, 2, "the writes reported")

	for _, p := range []string{"/taken", "/dir", "/dangling"} {
		_, _, err := fsys.CreateInPlace(ctx, p, 0o644)
		assert.Equal(t, vfs.KindConflict, vfs.KindOf(err), "create of %s: %v", p, err)
	}
	got, err = os.ReadFile(filepath.Join(root, "taken"))
	require.NoError(t, err)
	assert.Equal(t, "x", string(got), "a taken name keeps its file")
	_, _, err = fsys.CreateInPlace(ctx, "/missing/new.txt", 0o644)
	assert.Equal(t, vfs.KindNotFound, vfs.KindOf(err), "a missing parent: %v", err)
	_, _, err = fsys.CreateInPlace(ctx, "/", 0o644)
	assert.Equal(t, vfs.KindIsDir, vfs.KindOf(err))
	assert.Len(t, changes, 2, "refused creates report nothing")

	// Another writer replaces the file, then removes it: the writes of
	// the first are no longer the tree's.
	require.NoError(t, fsys.Write(ctx, "/dir/new.txt", []byte("theirs\n")))
	_, err = fsys.WroteInPlace(ctx, "/dir/new.txt", f)
	assert.Equal(t, vfs.KindConflict, vfs.KindOf(err), "after a replace: %v", err)
	require.NoError(t, fsys.Delete(ctx, "/dir/new.txt"))
	_, err = fsys.WroteInPlace(ctx, "/dir/new.txt", f)
	assert.Equal(t, vfs.KindConflict, vfs.KindOf(err), "after a delete: %v", err)
	assert.Len(t, changes, 4, "only the other writer's changes reported")
}
