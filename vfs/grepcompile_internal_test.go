package vfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompileGrepQueryOnce checks that a compiled query's pattern is
// reused by whatever compiles it again (a composer's children, with their
// own Path and Glob), and compiled afresh once its pattern or folding
// changes.
func TestCompileGrepQueryOnce(t *testing.T) {
	q, err := CompileGrepQuery(GrepQuery{Pattern: `errors\.New\(`, Path: "/repo", Glob: "*.go"})
	require.NoError(t, err)
	require.NotNil(t, q.compiled)

	child := q
	child.Path, child.Glob = "/", "/src/**/*.go"
	m, _, err := compileGrep(&child)
	require.NoError(t, err)
	assert.Same(t, q.compiled.m, m, "a child recompiled the pattern")

	for _, change := range []func(*GrepQuery){
		func(q *GrepQuery) { q.Pattern = "other" },
		func(q *GrepQuery) { q.CaseInsensitive = true },
	} {
		c := q
		change(&c)
		m, _, err := compileGrep(&c)
		require.NoError(t, err)
		assert.NotSame(t, q.compiled.m, m, "a changed query reused the old pattern")
	}

	_, err = CompileGrepQuery(GrepQuery{Pattern: "x", Glob: "{"})
	assert.ErrorIs(t, err, ErrInvalidGlobPattern)
}
