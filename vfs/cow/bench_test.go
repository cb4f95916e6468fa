package cow_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/local"
)

// BenchmarkGrep greps GOROOT/src/net for a literal through the base
// alone and through a layer over it that changed nothing, and through
// one that changed a file elsewhere in the tree.
func BenchmarkGrep(b *testing.B) {
	base, err := local.New(filepath.Join(runtime.GOROOT(), "src"))
	require.NoError(b, err)
	defer base.Close()
	q := vfs.GrepQuery{Pattern: "ResponseWriter", Path: "/net"}
	layer, err := cow.Open(base, b.TempDir())
	require.NoError(b, err)
	defer layer.Close()
	changed, err := cow.Open(base, b.TempDir())
	require.NoError(b, err)
	defer changed.Close()
	require.NoError(b, changed.Write(b.Context(), "/net/http/changed.go", []byte("package http // ResponseWriter\n")))
	for name, fsys := range map[string]vfs.FileSystem{"base": base, "layer": layer.Tree(), "layerChanged": changed.Tree()} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				for _, err := range fsys.Grep(b.Context(), q) {
					require.NoError(b, err)
					n++
				}
				require.NotZero(b, n)
			}
		})
	}
}
