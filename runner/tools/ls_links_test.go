package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/temp"
)

// TestLSMarksLinks: LS marks a link to a file with its target, as ls -l
// does; everything else keeps its format.
func TestLSMarksLinks(t *testing.T) {
	fs := temp.MustNew(map[string]string{"/a.txt": "hi\n", "/d/x": "x"})
	ctx := t.Context()
	require.NoError(t, fs.Symlink(ctx, "a.txt", "/lnk"))
	require.NoError(t, fs.Symlink(ctx, "/a.txt", "/abs"))
	r := call(t, NewLS(fs, Options{}), `{"path":"/"}`)
	require.False(t, r.IsError, r.String())
	assert.Equal(t, "/\n  a.txt (3 bytes)\n  abs (3 bytes) -> /a.txt\n  d/\n  lnk (3 bytes) -> a.txt", r.String())
}
