package vfs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gobwas/glob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

func TestNormalizePattern(t *testing.T) {
	for in, want := range map[string]string{
		"**/**/*.go":                         "**/*.go",
		"a/**/**/**/b":                       "a/**/b",
		"/**/**/x":                           "/**/x",
		"**/**":                              "**",
		"a/**/b/**/**":                       "a/**/b/**",
		"**/*.go":                            "**/*.go",
		"{**/**,a}/x":                        "{**/**,a}/x", // inside braces: kept
		`\**/**/x`:                           `\**/**/x`,
		"[/]/**/**":                          "[/]/**",
		"a//**/**":                           "a//**",
		strings.Repeat("**/", 8000) + "*.go": "**/*.go",
	} {
		assert.Equal(t, want, vfs.NormalizePattern(in), "%.40q", in)
	}
}

// TestPatternLimits: an over-long pattern or one with too many segments
// is an invalid glob pattern that says which limit it broke; a long run
// of "**/" within the length limit collapses and is fine.
func TestPatternLimits(t *testing.T) {
	long := strings.Repeat("**/", 8000) + "*.go"
	_, err := vfs.CompilePattern(long)
	require.Error(t, err)
	assert.True(t, errors.Is(err, vfs.ErrInvalidGlobPattern))
	assert.Equal(t, "invalid glob pattern: "+long[:64]+"... (24004 bytes; at most 8192)", err.Error())

	deep := strings.Repeat("a/", 300) + "*"
	_, err = vfs.CompilePattern(deep)
	require.Error(t, err)
	assert.Equal(t, "invalid glob pattern: "+deep[:64]+"... (301 segments; at most 256)", err.Error())

	p, err := vfs.CompilePattern(strings.Repeat("**/", 2000) + "*.go")
	require.NoError(t, err)
	assert.True(t, p.Match("a/b/c.go"))
	assert.True(t, p.Match("c.go"))

	fs := temp.MustNew(map[string]string{"/a/b.go": "", "/c.go": ""})
	var got []string
	for e, err := range fs.Glob(context.Background(), strings.Repeat("**/", 2000)+"*.go", "/") {
		require.NoError(t, err)
		got = append(got, e.Path)
	}
	assert.Equal(t, []string{"/a/b.go", "/c.go"}, got)
}

// FuzzNormalizePattern checks that NormalizePattern keeps a pattern's
// meaning (gobwas/glob matches the same paths with the original and the
// normalized pattern), is idempotent and never lengthens a pattern. Seeds
// are in testdata/fuzz/FuzzNormalizePattern.
func FuzzNormalizePattern(f *testing.F) {
	c := glob.Compiler{Separators: []rune{'/'}, Globstar: true}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		norm := vfs.NormalizePattern(pattern)
		require.LessOrEqual(t, len(norm), len(pattern), "NormalizePattern(%q) = %q, longer", pattern, norm)
		require.Equal(t, norm, vfs.NormalizePattern(norm), "NormalizePattern not idempotent on %q", pattern)
		g1, err1 := c.Compile(strings.TrimLeft(pattern, "/"))
		g2, err2 := c.Compile(strings.TrimLeft(norm, "/"))
		require.Equal(t, err1 == nil, err2 == nil, "%q compiles: %v; normalized %q: %v", pattern, err1, norm, err2)
		if err1 == nil {
			require.Equal(t, g1.Match(rel), g2.Match(rel), "%q.Match(%q) vs normalized %q", pattern, rel, norm)
		}
	})
}
