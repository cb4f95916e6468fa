package union

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// TestGlobRepeatedGlobstar: a union's Glob with thousands of "**/" finds
// what "**/" alone finds (the runs collapse), and one over the length
// limit is refused with a clear error.
func TestGlobRepeatedGlobstar(t *testing.T) {
	ctx := context.Background()
	u, err := New([]Mount{
		{Prefix: "/", FS: temp.MustNew(map[string]string{"/top.go": ""})},
		{Prefix: "/m1", FS: temp.MustNew(map[string]string{"/x/a.go": ""})},
		{Prefix: "/m2/deep", FS: temp.MustNew(map[string]string{"/b.go": "", "/c.txt": ""})},
	})
	require.NoError(t, err)
	collectPaths := func(pattern string) ([]string, error) {
		var out []string
		for e, err := range u.Glob(ctx, pattern, "/") {
			if err != nil {
				return out, err
			}
			out = append(out, e.Path)
		}
		return out, nil
	}
	want, err := collectPaths("**/*.go")
	require.NoError(t, err)
	assert.Equal(t, []string{"/m1/x/a.go", "/m2/deep/b.go", "/top.go"}, want)
	got, err := collectPaths(strings.Repeat("**/", 2700) + "*.go")
	require.NoError(t, err)
	assert.Equal(t, want, got)

	_, err = collectPaths(strings.Repeat("**/", 8000) + "*.go")
	require.ErrorIs(t, err, vfs.ErrInvalidGlobPattern)
	assert.Contains(t, err.Error(), "(24004 bytes; at most 8192)")
}

// BenchmarkGlobRepeatedGlobstar: Glob under a union with 2,700 "**/"
// (8,100 bytes, under the length limit) before "*.go".
func BenchmarkGlobRepeatedGlobstar(b *testing.B) {
	ctx := context.Background()
	u, err := New([]Mount{
		{Prefix: "/", FS: temp.MustNew(map[string]string{"/top.go": ""})},
		{Prefix: "/m1", FS: temp.MustNew(map[string]string{"/x/a.go": ""})},
		{Prefix: "/m2/deep", FS: temp.MustNew(map[string]string{"/b.go": ""})},
	})
	require.NoError(b, err)
	pattern := strings.Repeat("**/", 2700) + "*.go"
	for b.Loop() {
		n := 0
		for _, err := range u.Glob(ctx, pattern, "/") {
			require.NoError(b, err)
			n++
		}
		require.Equal(b, 3, n)
	}
}
