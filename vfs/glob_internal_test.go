package vfs

import (
	"math/rand/v2"
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

// TestBelowAgreesWithMatch: for random patterns and paths, a path
// rel/rest matches the pattern exactly when rest matches one of the
// patterns Below(rel) returns (when it returns any answer).
func TestBelowAgreesWithMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 3))
	atoms := []string{"a", "b", "*", "**", "?", "{a,b}", "[ab]", "a*", "*b", "{a,b*}"}
	names := []string{"a", "b", "ab", "ba", "bb"}
	for range 3000 {
		segs := make([]string, 1+r.IntN(4))
		for i := range segs {
			segs[i] = atoms[r.IntN(len(atoms))]
		}
		src := strings.Join(segs, "/")
		p, err := CompilePattern(src)
		require.NoError(t, err, src)
		path := make([]string, 2+r.IntN(4))
		for i := range path {
			path[i] = names[r.IntN(len(names))]
		}
		k := 1 + r.IntN(len(path)-1)
		rel, rest := strings.Join(path[:k], "/"), strings.Join(path[k:], "/")
		qs, ok := p.Below(rel)
		if !ok {
			continue
		}
		below := false
		for _, q := range qs {
			qp, err := CompilePattern(q)
			require.NoError(t, err, q)
			below = below || qp.Match(rest)
		}
		require.Equal(t, p.Match(rel+"/"+rest), below, "pattern %q, path %s/%s, below %q", src, rel, rest, qs)
	}
}
