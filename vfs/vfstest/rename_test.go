package vfstest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// copyingRename claims a Renamer but copies: the source stays.
type copyingRename struct{ *vfstest.Reference }

func (c copyingRename) Rename(ctx context.Context, from, to string) error {
	data, err := c.Read(ctx, from)
	if err != nil {
		return err
	}
	return c.Write(ctx, to, data)
}

// flatRename moves files but answers success for a directory it leaves.
type flatRename struct{ *vfstest.Reference }

func (f flatRename) Rename(ctx context.Context, from, to string) error {
	if st, err := f.Stat(ctx, from); err == nil && st.Kind == vfs.KindDir {
		return nil
	}
	return vfs.Rename(ctx, f.Reference, from, to)
}

// The rename check passes on the reference (no Renamer: the helper's copy
// and delete) and fails on each broken Renamer.
func TestRenameCheckCatches(t *testing.T) {
	ref := func(files map[string][]byte) (vfs.FileSystem, error) { return vfstest.NewReference(files), nil }
	failures, found := runOne(t.Context(), "Capability/rename", ref, vfstest.Options{})
	require.True(t, found)
	assert.Empty(t, failures, "the reference through the helper's fallback")
	failures, _ = runOne(t.Context(), "Capability/rename", ref, vfstest.Options{ReadOnly: true})
	assert.NotEmpty(t, failures, "a writable tree declared read-only")

	for name, wrap := range map[string]func(*vfstest.Reference) vfs.FileSystem{
		"rename keeps the source":    func(r *vfstest.Reference) vfs.FileSystem { return copyingRename{r} },
		"rename ignores a directory": func(r *vfstest.Reference) vfs.FileSystem { return flatRename{r} },
	} {
		t.Run(name, func(t *testing.T) {
			failures, found := runOne(t.Context(), "Capability/rename", func(files map[string][]byte) (vfs.FileSystem, error) {
				return wrap(vfstest.NewReference(files)), nil
			}, vfstest.Options{})
			require.True(t, found)
			require.NotEmpty(t, failures, "check Capability/rename passed on a tree that breaks it")
			t.Log(failures[0])
		})
	}
}
