package vfs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBelowBounded: Below walks each (pattern suffix, path suffix) pair
// once, so repeated "**" cannot multiply its branches. Before, this
// pattern's walk had billions of branches.
func TestBelowBounded(t *testing.T) {
	pattern := strings.Repeat("**/a/", 100) + "b"
	p, err := CompilePattern(pattern)
	require.NoError(t, err)
	out, ok := p.Below(strings.Repeat("a/", 30) + "a")
	require.True(t, ok)
	assert.NotEmpty(t, out)
	rel := strings.Split(strings.Repeat("a/", 30)+"a", "/")
	_, steps := deriveSteps(p.split, rel)
	assert.LessOrEqual(t, steps, (len(p.split)+1)*(len(rel)+1))
}

// TestBelow: the patterns below a directory, and the patterns that
// cannot be matched a segment at a time.
func TestBelow(t *testing.T) {
	for _, c := range []struct {
		pattern, rel string
		want         []string
		ok           bool
	}{
		{"repo/**/*.go", "repo", []string{"**/*.go"}, true},
		{"**/*.go", "a/b", []string{"**/*.go"}, true},
		{"*/src/*.go", "x", []string{"src/*.go"}, true},
		{"src/*.go", "docs", nil, true},
		{"a/b", "a/b", nil, true},
		{"{a/b,c}/x", "a", nil, false},
		{`a\/b/x`, "a", nil, false},
		{"a//b", "a", nil, false},
		{"a**/b", "a", nil, false},
		{"[!a]/b", "x", nil, false},
		{"[^a]/b", "a", []string{"b"}, true}, // gobwas negates with !, not ^
	} {
		p, err := CompilePattern(c.pattern)
		require.NoError(t, err, c.pattern)
		got, ok := p.Below(c.rel)
		assert.Equal(t, c.ok, ok, "Below(%q) of %q ok", c.rel, c.pattern)
		assert.Equal(t, c.want, got, "Below(%q) of %q", c.rel, c.pattern)
	}
}
