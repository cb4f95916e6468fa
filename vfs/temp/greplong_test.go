package temp_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestGrepLongLineBounded greps a 64 MiB one-line file held in memory,
// its match near the end: with MaxLineBytes the hit copies only the cut
// line, so the grep allocates next to nothing beyond the file the tree
// already holds; without it the line is copied whole (which the
// measurement sees, so it can fail).
func TestGrepLongLineBounded(t *testing.T) {
	const size = 64 << 20
	line := strings.Repeat("x", size) + " needle yy"
	fsys, err := temp.New(map[string][]byte{"/big.txt": []byte(line + "\nsecond needle\n")})
	require.NoError(t, err)
	want := []vfs.GrepResult{
		{Path: "/big.txt", LineNumber: 1, Line: strings.Repeat("x", 2000), LineBytes: len(line)},
		{Path: "/big.txt", LineNumber: 2, Line: "second needle"},
	}
	allocated := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, p := range []string{"needle", `needle y+$`} {
		var got []vfs.GrepResult
		n := allocated(func() {
			for h, err := range fsys.Grep(t.Context(), vfs.GrepQuery{Pattern: p, MaxLineBytes: 2000}) {
				require.NoError(t, err)
				got = append(got, h)
			}
		})
		if p == "needle" {
			assert.Equal(t, want, got)
		} else {
			assert.Equal(t, want[:1], got)
		}
		t.Logf("pattern %q: %d bytes allocated", p, n)
		assert.Less(t, n, uint64(1<<20), "pattern %q: a grep of a %d-byte line allocated %d bytes", p, size, n)
	}
	n := allocated(func() {
		for _, err := range fsys.Grep(t.Context(), vfs.GrepQuery{Pattern: "needle"}) {
			require.NoError(t, err)
		}
	})
	assert.Greater(t, n, uint64(size), "without the cap the line is copied whole")
}
