package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

func TestCompileGrepInvalid(t *testing.T) {
	for _, p := range []string{"(", "a[", "*x", `\`} {
		_, err := vfs.CompileGrepQuery(vfs.GrepQuery{Pattern: p})
		assert.ErrorIs(t, err, vfs.ErrInvalidGrepPattern, "CompileGrepQuery(%q)", p)
		assert.EqualError(t, err, "invalid grep pattern: "+p, "CompileGrepQuery(%q)", p)
	}
}

// failingRead is a tree whose Read fails for one path.
type failingRead struct {
	vfs.FileSystem
	path string
	err  error
}

func (f failingRead) Read(ctx context.Context, p string) ([]byte, error) {
	if vfs.Clean(p) == f.path {
		return nil, f.err
	}
	return f.FileSystem.Read(ctx, p)
}

func grepAll(t *testing.T, seq iter.Seq2[vfs.GrepResult, error]) ([]string, error) {
	t.Helper()
	var out []string
	for h, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%s:%d:%s", h.Path, h.LineNumber, h.Line))
	}
	return out, nil
}

func TestGrepHelper(t *testing.T) {
	tree := temp.MustNew(map[string]string{
		"/a.txt":   "hit 1\nmiss\nhit 2\n",
		"/b.bin":   "hit\x00binary\n",
		"/c/d.txt": "hit 3\n",
		"/e.txt":   "hit 4\n",
	})
	ctx := t.Context()
	got, err := grepAll(t, vfs.Grep(ctx, tree, vfs.GrepQuery{Pattern: "hit"}))
	assert.NoError(t, err, "Grep(hit)")
	assert.Equal(t, []string{"/a.txt:1:hit 1", "/a.txt:3:hit 2", "/c/d.txt:1:hit 3", "/e.txt:1:hit 4"}, got, "Grep(hit) (binary file skipped)")
	got, err = grepAll(t, vfs.Grep(ctx, tree, vfs.GrepQuery{Pattern: "hit", MaxResults: 3}))
	assert.NoError(t, err, "Grep(hit, max 3)")
	assert.Equal(t, []string{"/a.txt:1:hit 1", "/a.txt:3:hit 2", "/c/d.txt:1:hit 3"}, got, "Grep(hit, max 3)")
	// A file that vanished between the walk and the read is skipped.
	gone := failingRead{tree, "/c/d.txt", vfs.NotFound("/c/d.txt")}
	got, err = grepAll(t, vfs.Grep(ctx, gone, vfs.GrepQuery{Pattern: "hit"}))
	assert.NoError(t, err, "Grep with a vanished file")
	assert.Equal(t, []string{"/a.txt:1:hit 1", "/a.txt:3:hit 2", "/e.txt:1:hit 4"}, got, "Grep with a vanished file")
	// Any other read failure ends the stream, after the hits before it.
	boom := vfs.NewError(vfs.KindUnavailable, "/c/d.txt", errors.New("backend down"))
	got, err = grepAll(t, vfs.Grep(ctx, failingRead{tree, "/c/d.txt", boom}, vfs.GrepQuery{Pattern: "hit"}))
	assert.ErrorIs(t, err, vfs.ErrUnavailable, "Grep with a failing read")
	assert.Equal(t, []string{"/a.txt:1:hit 1", "/a.txt:3:hit 2"}, got, "Grep with a failing read")
	// Invalid patterns fail before any work.
	_, err = grepAll(t, vfs.Grep(ctx, tree, vfs.GrepQuery{Pattern: "("}))
	assert.EqualError(t, err, "invalid grep pattern: (", "Grep(\"(\")")
	_, err = grepAll(t, vfs.Grep(ctx, tree, vfs.GrepQuery{Pattern: "x", Glob: "{"}))
	assert.ErrorIs(t, err, vfs.ErrInvalidGlobPattern, "Grep(glob \"{\")")
}

func TestIsBinary(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{{"", false}, {"text\n", false}, {"a\x00b", true}, {"\x89PNG\r\n\x1a\n\x00\x00", true}, {"caf\u00e9", false}} {
		assert.Equal(t, c.want, vfs.IsBinary([]byte(c.data)), "IsBinary(%q)", c.data)

	}
}
