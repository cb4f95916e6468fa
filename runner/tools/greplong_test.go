package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestGrepLongLineBounded: Grep of a 64 MiB one-line file whose match is
// near the end of the line, in content mode, with -C context and in files
// mode, through local (which streams the file) and temp (which holds it):
// the line is shown cut with the notice, and the call allocates a few
// windows and cut lines, not the line (it used to hold the line several
// times over: 783 MB for a 200 MB line).
func TestGrepLongLineBounded(t *testing.T) {
	const size = 64 << 20
	line := strings.Repeat("x", size) + " needle"
	content := "before\n" + line + "\nafter needle\nend\n"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(content), 0o644))
	lfs, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { lfs.Close() })
	tfs, err := temp.New(map[string][]byte{"/big.txt": []byte(content)})
	require.NoError(t, err)

	cut := fmt.Sprintf("%s... [line cut: %d bytes]", strings.Repeat("x", 2000), len(line))
	for _, tree := range []struct {
		name string
		fsys vfs.FileSystem
	}{{"local", lfs}, {"temp", tfs}} {
		g := NewGrep(tree.fsys, Options{})
		for _, c := range []struct{ args, want string }{
			{`{"pattern":"needle","output_mode":"content"}`, "/big.txt:2:" + cut + "\n/big.txt:3:after needle"},
			{`{"pattern":"needle$","output_mode":"content","-C":3}`,
				"/big.txt-1-before\n/big.txt:2:" + cut + "\n/big.txt:3:after needle\n/big.txt-4-end"},
			{`{"pattern":"x needle","path":"/big.txt","output_mode":"content","-B":1}`, "/big.txt-1-before\n/big.txt:2:" + cut},
			{`{"pattern":"needle","output_mode":"count"}`, "/big.txt:2"},
			{`{"pattern":"x needle"}`, "/big.txt"},
		} {
			var r *Result
			n := allocated(func() { r = runNoPanic(t, g, c.args) })
			assert.Equal(t, c.want, r.String(), "%s %s", tree.name, c.args)
			assert.Less(t, n, uint64(4<<20), "%s %s allocated %d bytes for a %d-byte line", tree.name, c.args, n, size)
		}
	}
}
