package checkpoint_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/local"
)

// BenchmarkCheckpoint10Files is the checkpoint of a turn that changed 10
// files, over GOROOT/src as the base: the writes are outside the timer.
func BenchmarkCheckpoint10Files(b *testing.B) {
	base, err := local.New(filepath.Join(runtime.GOROOT(), "src"))
	require.NoError(b, err)
	defer base.Close()
	ses := b.TempDir()
	c, err := cow.Open(base, filepath.Join(ses, checkpoint.LayerDir))
	require.NoError(b, err)
	defer c.Close()
	ctx := b.Context()
	var prev []cow.Entry
	turn := 0
	for b.Loop() {
		b.StopTimer()
		turn++
		for i := range 10 {
			require.NoError(b, c.Write(ctx, fmt.Sprintf("/net/http/bench_%d.go", i), fmt.Appendf(nil, "package http // turn %d\n", turn)))
		}
		b.StartTimer()
		_, es, err := checkpoint.Take(c, ses, turn, "turn", prev)
		require.NoError(b, err)
		prev = es
	}
}
