package vfstest_test

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// hiddenLinks is a temp tree whose Stat does not say a link is one.
type hiddenLinks struct{ *temp.FS }

func (h hiddenLinks) Stat(ctx context.Context, p string) (vfs.FileInfo, error) {
	fi, err := h.FS.Stat(ctx, p)
	fi.Link = false
	return fi, err
}

// frozenTime claims to set modification times but sets none.
type frozenTime struct{ *vfstest.Reference }

func (frozenTime) SetModTime(context.Context, string, time.Time) error { return nil }

// modeAnywhere claims to set a mode on any path, missing ones too.
type modeAnywhere struct{ *vfstest.Reference }

func (modeAnywhere) SetMode(context.Context, string, fs.FileMode) error { return nil }

// copyLinks "links" by copying the target's content, and reads a link
// back as its own path.
type copyLinks struct{ *vfstest.Reference }

func (c copyLinks) Symlink(ctx context.Context, target, p string) error {
	data, err := c.Read(ctx, vfs.Join(vfs.Parent(vfs.Clean(p)), target))
	if err != nil {
		return err
	}
	return c.Write(ctx, p, data)
}

func (c copyLinks) Readlink(ctx context.Context, p string) (string, error) {
	st, err := c.Stat(ctx, p)
	if err != nil || st.Kind == vfs.KindMissing {
		return "", vfs.NotFound(vfs.Clean(p))
	}
	return vfs.Clean(p), nil
}

// The meta check passes on the reference (no capabilities: unsupported)
// and fails on each broken capability.
func TestMetaCheckCatches(t *testing.T) {
	ref := func(files map[string][]byte) (vfs.FileSystem, error) { return vfstest.NewReference(files), nil }
	failures, found := runOne(t.Context(), "Capability/meta", ref, vfstest.Options{})
	require.True(t, found)
	assert.Empty(t, failures)
	// temp has every capability and passes; hiding its links fails.
	newTemp := func(files map[string][]byte) (vfs.FileSystem, error) { return temp.New(files) }
	failures, _ = runOne(t.Context(), "Capability/meta", newTemp, vfstest.Options{})
	assert.Empty(t, failures)
	failures, _ = runOne(t.Context(), "Capability/meta", func(files map[string][]byte) (vfs.FileSystem, error) {
		fsys, err := temp.New(files)
		return hiddenLinks{fsys}, err
	}, vfstest.Options{})
	assert.NotEmpty(t, failures, "check Capability/meta passed on a tree whose Stat hides links")
	for name, wrap := range map[string]func(*vfstest.Reference) vfs.FileSystem{
		"SetModTime sets nothing":            func(r *vfstest.Reference) vfs.FileSystem { return frozenTime{r} },
		"SetMode succeeds on a missing path": func(r *vfstest.Reference) vfs.FileSystem { return modeAnywhere{r} },
		"links are copies":                   func(r *vfstest.Reference) vfs.FileSystem { return copyLinks{r} },
	} {
		t.Run(name, func(t *testing.T) {
			failures, _ := runOne(t.Context(), "Capability/meta", func(files map[string][]byte) (vfs.FileSystem, error) {
				return wrap(vfstest.NewReference(files)), nil
			}, vfstest.Options{})
			require.NotEmpty(t, failures, "check Capability/meta passed on a tree that breaks it")
			t.Log(failures[0])
		})
	}
}
