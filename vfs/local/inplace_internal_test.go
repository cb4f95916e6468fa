//go:build linux

package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// TestCreateInPlaceRacesCAS: an exclusive create in place takes no
// directory lock, so it can land between a compare-and-swap write's
// check that the name is free and its rename (here it does, from inside
// that window, which would deadlock had it waited for the lock): the
// write then fails as a conflict and leaves the new file alone, and no
// temporary file behind. The other order is the create's conflict.
func TestCreateInPlaceRacesCAS(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	fsys, err := New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })

	var f *os.File
	commitCheckedForTest = func(p string) {
		commitCheckedForTest = nil
		var cerr error
		f, _, cerr = fsys.CreateInPlace(ctx, p, 0o644)
		require.NoError(t, cerr)
		_, cerr = f.WriteString("in place\n")
		require.NoError(t, cerr)
	}
	t.Cleanup(func() { commitCheckedForTest = nil })
	_, err = fsys.WriteIf(ctx, "/a", []byte("cas\n"), vfs.Precondition{IfNoneMatch: true})
	assert.Equal(t, vfs.KindConflict, vfs.KindOf(err), "the name was taken before the rename: %v", err)
	require.NotNil(t, f, "the create ran in the window")
	t.Cleanup(func() { f.Close() })
	got, err := fsys.Read(ctx, "/a")
	require.NoError(t, err)
	assert.Equal(t, "in place\n", string(got), "the file created in place stays")
	_, _, err = fsys.WroteInPlace(ctx, "/a", f, vfs.FileInfo{})
	assert.NoError(t, err, "the name still holds the file written in place")
	names, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, n := range names {
		assert.False(t, strings.HasPrefix(n.Name(), tempPrefix), "temporary left: %s", n.Name())
	}

	_, err = fsys.WriteIf(ctx, "/b", []byte("cas\n"), vfs.Precondition{IfNoneMatch: true})
	require.NoError(t, err)
	_, _, err = fsys.CreateInPlace(ctx, "/b", 0o644)
	assert.Equal(t, vfs.KindConflict, vfs.KindOf(err), "the write came first: %v", err)
	got, err = os.ReadFile(filepath.Join(root, "b"))
	require.NoError(t, err)
	assert.Equal(t, "cas\n", string(got))
}
