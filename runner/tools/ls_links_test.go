package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/temp"
)

// TestLSMarksLinks: LS marks every link with its target, as ls -l
// does (one to a directory or to nothing says so instead of a size); everything else keeps its format.
func TestLSMarksLinks(t *testing.T) {
	fs := temp.MustNew(map[string]string{"/a.txt": "hi\n", "/d/x": "x"})
	ctx := t.Context()
	require.NoError(t, fs.Symlink(ctx, "a.txt", "/lnk"))
	require.NoError(t, fs.Symlink(ctx, "/a.txt", "/abs"))
	require.NoError(t, fs.Symlink(ctx, "d", "/dlink"))
	require.NoError(t, fs.Symlink(ctx, "nothing", "/gone"))
	r := call(t, NewLS(fs, Options{}), `{"path":"/"}`)
	require.False(t, r.IsError, r.String())
	assert.Equal(t, "/\n  a.txt (3 bytes)\n  abs (3 bytes) -> /a.txt\n  d/\n  dlink (directory) -> d\n  gone (missing) -> nothing\n  lnk (3 bytes) -> a.txt", r.String())
}
