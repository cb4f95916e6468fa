package local_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc):
// an upper bound of how much its peak heap grows, whatever the collector
// does meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestGrepLongLineBounded greps a 64 MiB one-line file with its match
// near the end: with MaxLineBytes the line is matched a window at a time,
// never held whole (the grep allocates a few windows, not the file), and
// the hit's line is cut with its whole length reported; the same whether
// the scope is the directory or the file. Without the cap the line is
// returned whole, which the measurement sees (so it can fail).
func TestGrepLongLineBounded(t *testing.T) {
	const size = 64 << 20
	line := strings.Repeat("x", size) + " needle yy"
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(line+"\nsecond needle\n"), 0o644))
	fsys, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	want := []vfs.GrepResult{
		{Path: "/big.txt", LineNumber: 1, Line: strings.Repeat("x", 2000), LineBytes: len(line)},
		{Path: "/big.txt", LineNumber: 2, Line: "second needle"},
	}
	for _, scope := range []string{"/", "/big.txt"} {
		var got []vfs.GrepResult
		n := allocated(func() {
			for h, err := range fsys.Grep(t.Context(), vfs.GrepQuery{Pattern: "needle", Path: scope, MaxLineBytes: 2000}) {
				require.NoError(t, err)
				got = append(got, h)
			}
		})
		assert.Equal(t, want, got, "scope %s", scope)
		t.Logf("scope %s: %d bytes allocated", scope, n)
		assert.Less(t, n, uint64(2<<20), "scope %s: a grep of a %d-byte line allocated %d bytes", scope, size, n)

		// A pattern with a literal that is not the whole pattern (so the
		// DFA decides) takes the same bounded path.
		for _, p := range []string{`needle y+$`} {
			got = got[:0]
			n = allocated(func() {
				for h, err := range fsys.Grep(t.Context(), vfs.GrepQuery{Pattern: p, Path: scope, MaxLineBytes: 2000}) {
					require.NoError(t, err)
					got = append(got, h)
				}
			})
			assert.Equal(t, want[:1], got, "pattern %q scope %s", p, scope)
			assert.Less(t, n, uint64(8<<20), "pattern %q scope %s allocated %d bytes", p, scope, n)
		}

	}
	n := allocated(func() {
		for h, err := range fsys.Grep(t.Context(), vfs.GrepQuery{Pattern: "needle"}) {
			require.NoError(t, err)
			assert.Equal(t, 0, h.LineBytes)
		}
	})
	assert.Greater(t, n, uint64(size), "without the cap the line is held whole")
}
