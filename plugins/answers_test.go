package plugins_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
)

// collect drains seq: the values before the first error, and that error.
func collect[E any](seq iter.Seq2[E, error]) ([]E, error) {
	var out []E
	for e, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func paths(es []vfs.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

// TestLyingPluginAnswers: a plugin whose answers break the contract gets
// an error naming it and the broken rule, once, and none of its bad
// answers reach the caller.
func TestLyingPluginAnswers(t *testing.T) {
	fsys := open(t, plugins.Config{Args: map[string]string{"mode": "liar"}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	lists := []struct {
		prefix string
		passed []string // what reaches the caller before the error
		msg    string
	}{
		{"/order", []string{"/order/b"}, `List /order: broke the filesystem contract: answered "/order/a" after "/order/b": not sorted by path`},
		{"/dup", []string{"/dup/a"}, `List /dup: broke the filesystem contract: answered "/dup/a" twice`},
		{"/escape", []string{"/escape/ok"}, `List /escape: broke the filesystem contract: answered the path "/../../etc/passwd", which is not clean and absolute`},
		{"/deep", nil, `List /deep: broke the filesystem contract: listed "/deep/a/b", which is not a child of "/deep"`},
		{"/kind", nil, `List /kind: broke the filesystem contract: answered "/kind/a" of kind 7, which is no kind of entry`},
	}
	for _, l := range lists {
		got, err := collect(fsys.List(ctx, l.prefix))
		require.Error(t, err, "List(%q)", l.prefix)
		assert.ErrorIs(t, err, plugins.ErrContract, "List(%q)", l.prefix)
		assert.Equal(t, "plugin testplugin: "+l.msg, err.Error(), "List(%q)", l.prefix)
		assert.Equal(t, l.passed, paths(got), "List(%q) passed on", l.prefix)
	}

	_, err := collect(fsys.Glob(ctx, "*", "/escape"))
	assert.ErrorIs(t, err, plugins.ErrContract)
	assert.EqualError(t, err, `plugin testplugin: Glob *: broke the filesystem contract: answered the path "/escape/../x", which is not clean and absolute`)

	_, err = fsys.Stat(ctx, "/negative")
	assert.EqualError(t, err, `plugin testplugin: Stat /negative: broke the filesystem contract: answered a Stat of "/negative" with the size -1`)
	_, err = fsys.Stat(ctx, "/other")
	assert.EqualError(t, err, `plugin testplugin: Stat /other: broke the filesystem contract: answered a Stat of "/other" with one of "/etc/passwd"`)

	hits, err := collect(fsys.Grep(ctx, vfs.GrepQuery{Pattern: "lie"}))
	assert.EqualError(t, err, `plugin testplugin: Grep lie: broke the filesystem contract: found "/a.txt":1 after "/b.txt":1: not sorted by path then line`)
	assert.Len(t, hits, 1, "Grep passed on")
	_, err = collect(fsys.Grep(ctx, vfs.GrepQuery{Pattern: "zero"}))
	assert.EqualError(t, err, `plugin testplugin: Grep zero: broke the filesystem contract: found a line of "/a.txt" at line number 0 (lines count from 1)`)

	// Honest answers of the same plugin still pass.
	got, err := collect(fsys.List(ctx, "/"))
	require.NoError(t, err)
	assert.Equal(t, []string{"/a.txt", "/b.txt"}, paths(got))
	info, err := fsys.Stat(ctx, "/a.txt")
	require.NoError(t, err)
	assert.Equal(t, int64(4), info.Size)
}
