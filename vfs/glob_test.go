package vfs_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gobwas/glob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

func TestCompilePattern(t *testing.T) {
	for _, c := range []struct {
		pattern  string
		lit      string
		depth    int
		literal  bool
		match    []string
		mismatch []string
	}{
		{"*.ts", "", 1, false, []string{"a.ts", ".ts"}, []string{"a/b.ts", "a.tsx", "a.js"}},
		{"**/*.ts", "", 0, false, []string{"a.ts", "x/a.ts", "x/y/a.ts"}, []string{"a.js", "x/a.tsx"}},
		{"src/**/*.go", "src", 0, false, []string{"src/a.go", "src/x/y/a.go"}, []string{"a.go", "srcx/a.go"}},
		{"src/*", "src", 2, false, []string{"src/a", "src/b.c"}, []string{"src", "src/a/b"}},
		{"a/b/c.txt", "a/b/c.txt", 3, true, []string{"a/b/c.txt"}, []string{"a/b/c.txtx", "a/b"}},
		{"/abs/*.md", "abs", 2, false, []string{"abs/r.md"}, []string{"/abs/r.md"}},
		{"*.{ts,js}", "", 1, false, []string{"a.ts", "a.js"}, []string{"a.go", "x/a.ts"}},
		{"{a,b}/c", "", 2, false, []string{"a/c", "b/c"}, []string{"c/c"}},
		{"[ab]?", "", 1, false, []string{"ax", "b1"}, []string{"cx", "a", "a/"}},
		{"[!a]*", "", 1, false, []string{"b", "bcd"}, []string{"a", "abc"}},
		{"**", "", 0, false, []string{"a", "a/b/c"}, nil},
		{"?", "", 1, false, []string{"a"}, []string{"", "ab", "/"}},
		{"a*/b", "", 2, false, []string{"a/b", "ax/b"}, []string{"a/x/b"}},
	} {
		p, err := vfs.CompilePattern(c.pattern)
		if !assert.NoError(t, err, "CompilePattern(%q)", c.pattern) {
			continue
		}
		assert.Equal(t, c.pattern, p.String(), "CompilePattern(%q).String()", c.pattern)
		assert.Equal(t, c.lit, p.LiteralPrefix(), "CompilePattern(%q).LiteralPrefix()", c.pattern)
		assert.Equal(t, c.depth, p.MaxDepth(), "CompilePattern(%q).MaxDepth()", c.pattern)
		assert.Equal(t, c.literal, p.IsLiteral(), "CompilePattern(%q).IsLiteral()", c.pattern)
		for _, s := range c.match {
			assert.True(t, p.Match(s), "CompilePattern(%q).Match(%q)", c.pattern, s)
		}
		for _, s := range c.mismatch {
			assert.False(t, p.Match(s), "CompilePattern(%q).Match(%q)", c.pattern, s)
		}
	}
	for _, bad := range []string{"[", "[a", "{a", `\`, "a/{b"} {
		_, err := vfs.CompilePattern(bad)
		assert.ErrorIs(t, err, vfs.ErrInvalidGlobPattern, "CompilePattern(%q)", bad)
		assert.EqualError(t, err, "invalid glob pattern: "+bad, "CompilePattern(%q)", bad)
	}
}

// TestGlobRandom compares vfs.Glob over temp trees with the brute-force
// reference for random trees, patterns and dirs.
func TestGlobRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	parts := []string{"a", "b", "*", "?", "**", "a*", "*b", "{a,b}", "[ab]", "a-b", "a.b", "{a-b,ab}", "[!a]*"}
	for i := range 60 {
		files := randomTree(r, 1+r.IntN(20))
		fsys, err := temp.New(files)
		require.NoError(t, err)
		ref := vfstest.NewReference(files)
		dirs := []string{"/", "/a", "/b", "/a/a", "/a-b", "/nope"}
		for range 15 {
			var segs []string
			for range 1 + r.IntN(3) {
				segs = append(segs, parts[r.IntN(len(parts))])
			}
			pattern := strings.Join(segs, "/")
			if r.IntN(8) == 0 {
				pattern = "/" + pattern
			}
			dir := dirs[r.IntN(len(dirs))]
			got := walkPaths(t, vfs.Glob(t.Context(), fsys, pattern, dir))
			want := walkPaths(t, ref.Glob(t.Context(), pattern, dir))
			require.Equal(t, want, got, "tree %d %q: Glob(%q, %q)", i, slices.Sorted(func(yield func(string) bool) {
				for k := range files {
					if !yield(k) {
						return
					}
				}
			}), pattern, dir)
		}
	}
}

func TestGrepFilter(t *testing.T) {
	for _, c := range []struct {
		glob, scope string
		match       []string
		mismatch    []string
	}{
		{"*.ts", "/", []string{"/a.ts", "/x/y/a.ts"}, []string{"/a.js", "/a.ts/b"}},
		{"*.ts", "/src", []string{"/src/a.ts", "/src/n/c.ts"}, []string{"/src/b.js"}},
		{"nested/*.ts", "/src", []string{"/src/nested/c.ts"}, []string{"/src/nested/deep/d.ts", "/nested/c.ts", "/src/a.ts"}},
		{"src/*.ts", "/", []string{"/src/a.ts"}, []string{"/src/n/a.ts"}},
		{"**/*.ts", "/src", []string{"/src/a.ts", "/src/n/a.ts"}, []string{"/other/a.ts"}},
		{"*.ts", "/src/a.ts", []string{"/src/a.ts"}, nil},
		{"a.ts", "/src/a.ts", []string{"/src/a.ts"}, nil},
	} {
		f, err := vfs.CompileGrepFilter(c.glob, c.scope)
		require.NoError(t, err, "CompileGrepFilter(%q, %q)", c.glob, c.scope)
		for _, p := range c.match {
			assert.True(t, f.Match(p), "CompileGrepFilter(%q, %q).Match(%q)", c.glob, c.scope, p)
		}
		for _, p := range c.mismatch {
			assert.False(t, f.Match(p), "CompileGrepFilter(%q, %q).Match(%q)", c.glob, c.scope, p)
		}
	}
	f, err := vfs.CompileGrepFilter("", "/")
	assert.NoError(t, err, "CompileGrepFilter(\"\")")
	assert.Nil(t, f, "CompileGrepFilter(\"\") wants a nil filter")
	assert.True(t, f.Match("/anything"), "CompileGrepFilter(\"\") does not match everything")
	_, err = vfs.CompileGrepFilter("[", "/")
	assert.ErrorIs(t, err, vfs.ErrInvalidGlobPattern, "CompileGrepFilter(\"[\")")
}

func FuzzCompilePattern(f *testing.F) {
	for _, s := range []string{"*.ts", "**/*.go", "src/**/*.go", "a/b/**/{x,y}.c", "**/a?", "**/**", "src/**", "{a,b}/[c-d]?", "[!a]", "/abs/x", "a/{b/c,d}", `\*`, "[", "{", "**/", "", "a//b"} {
		f.Add(s, "a/b.ts")
	}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		p, err := vfs.CompilePattern(pattern)
		if err != nil {
			require.ErrorIs(t, err, vfs.ErrInvalidGlobPattern, "CompilePattern(%q)", pattern)
			return
		}
		trimmed := strings.TrimLeft(pattern, "/")
		// Match (with its shortcut for "L/**/X") agrees with gobwas/glob.
		if g, err := (glob.Compiler{Separators: []rune{'/'}, Globstar: true}).Compile(trimmed); err == nil {
			require.Equal(t, g.Match(rel), p.Match(rel), "CompilePattern(%q).Match(%q) disagrees with gobwas/glob", pattern, rel)
		}
		require.True(t, strings.HasPrefix(trimmed, p.LiteralPrefix()), "CompilePattern(%q).LiteralPrefix() = %q, not a prefix", pattern, p.LiteralPrefix())
		require.GreaterOrEqual(t, p.MaxDepth(), 0, "CompilePattern(%q).MaxDepth()", pattern)
		if p.IsLiteral() && !strings.Contains(trimmed, "//") {
			require.True(t, p.Match(trimmed), "literal pattern %q does not match itself", pattern)
		}
		// A match never has more segments than MaxDepth allows.
		if d := p.MaxDepth(); d > 0 && p.Match(rel) {
			require.LessOrEqual(t, len(strings.Split(rel, "/")), d, "CompilePattern(%q) matches %q, deeper than MaxDepth", pattern, rel)
		}
	})
}

// TestPatternMatchAgreesWithGobwas checks Match, which matches "L/**/X"
// by its last segment, against gobwas/glob on the whole path.
func TestPatternMatchAgreesWithGobwas(t *testing.T) {
	patterns := []string{"**/*.go", "src/**/*.go", "a/b/**/{x,y}.c", "**/a?", "**/[!a]*", "**/", "src/**/", "**/*", "x/**/x"}
	rels := []string{"", "a.go", "x/a.go", "src/a.go", "src/x/y/a.go", "srcx/a.go", "src", "a/b/x.c", "a/b/c/d/y.c", "a/bx/y.c",
		"ab", "q/ab", "b", "x/b", "x/", "src/", "x/x", "x/y/x", "x", "a.go/b"}
	compiler := glob.Compiler{Separators: []rune{'/'}, Globstar: true}
	for _, pattern := range patterns {
		p, err := vfs.CompilePattern(pattern)
		require.NoError(t, err)
		g, err := compiler.Compile(pattern)
		require.NoError(t, err)
		for _, rel := range rels {
			assert.Equal(t, g.Match(rel), p.Match(rel), "CompilePattern(%q).Match(%q)", pattern, rel)
		}

	}
}
