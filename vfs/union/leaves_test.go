package union_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/readonly"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// TestLeaves: a tree's leaves are itself, a union's mounts (within a
// nested union too, at the joined prefix) and what a read-only wrapper
// wraps, each at the prefix where its root appears.
func TestLeaves(t *testing.T) {
	tree := func() *temp.FS {
		f, err := temp.New(nil)
		require.NoError(t, err)
		return f
	}
	a, b, c, d := tree(), tree(), tree(), tree()
	inner, err := union.New([]union.Mount{{Prefix: "/x", FS: b}, {Prefix: "/y", FS: readonly.New(c)}})
	require.NoError(t, err)
	outer, err := union.New([]union.Mount{{Prefix: "/", FS: a}, {Prefix: "/in", FS: inner}, {Prefix: "/ro", FS: readonly.New(d)}})
	require.NoError(t, err)

	want := []union.Mount{{Prefix: "/", FS: a}, {Prefix: "/in/x", FS: b}, {Prefix: "/in/y", FS: c}, {Prefix: "/ro", FS: d}}
	got := union.Leaves(outer)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Prefix, got[i].Prefix)
		assert.Same(t, want[i].FS, got[i].FS, "the tree at %s", want[i].Prefix) // the same tree, not an equal one
	}

	leaves := union.Leaves(a)
	require.Len(t, leaves, 1)
	assert.Equal(t, "/", leaves[0].Prefix)
	assert.Same(t, a, leaves[0].FS)
	require.Len(t, union.Leaves(readonly.New(b)), 1)
	assert.Same(t, b, union.Leaves(readonly.New(b))[0].FS)
}
