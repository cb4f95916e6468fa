package union_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

// FuzzGlob checks that the union's routed and rewritten Glob finds exactly
// what the same Glob finds on one flat tree with the same contents, for
// any pattern and any of the fixture's directories.
func FuzzGlob(f *testing.F) {
	for i, p := range globPatterns {
		f.Add(p, uint8(i))
	}
	ctx := context.Background()
	u, _ := fixture.build(f)
	flat := fixture.flat(f)
	f.Fuzz(func(t *testing.T, pattern string, dirIndex uint8) {
		dir := globDirs[int(dirIndex)%len(globDirs)]
		if _, err := vfs.CompilePattern(pattern); err != nil {
			_, err := collect(t, u.Glob(ctx, pattern, dir))
			require.Error(t, err, "Glob(%q): no error for a bad pattern", pattern)
			return
		}
		got, err := collect(t, u.Glob(ctx, pattern, dir))
		require.NoError(t, err, "Glob(%q, %q)", pattern, dir)
		want, err := collect(t, flat.Glob(ctx, pattern, dir))
		require.NoError(t, err, "flat Glob(%q, %q)", pattern, dir)
		require.Equal(t, want, got, "Glob(%q, %q)", pattern, dir)
	})
}

// FuzzGrepFilter checks the union's Grep, whose file filter is rewritten
// for each mount below the scope, against one flat tree.
func FuzzGrepFilter(f *testing.F) {
	for i, g := range append(grepGlobs, globPatterns...) {
		f.Add(g, uint8(i), uint8(i%4))
	}
	ctx := context.Background()
	u, _ := fixture.build(f)
	flat := fixture.flat(f)
	f.Fuzz(func(t *testing.T, glob string, scopeIndex, max uint8) {
		q := vfs.GrepQuery{Pattern: "func main", Path: grepScopes[int(scopeIndex)%len(grepScopes)], Glob: glob, MaxResults: int(max % 4)}
		want, wantErr := collect(t, flat.Grep(ctx, q))
		got, err := collect(t, u.Grep(ctx, q))
		require.Equal(t, wantErr != nil, err != nil, "Grep(%+v) error %v, flat tree's %v", q, err, wantErr)
		require.Equal(t, want, got, "Grep(%+v)", q)
	})
}
