package vfs_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gobwas/glob"

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
		if err != nil {
			t.Errorf("CompilePattern(%q): %v", c.pattern, err)
			continue
		}
		if p.String() != c.pattern || p.LiteralPrefix() != c.lit || p.MaxDepth() != c.depth || p.IsLiteral() != c.literal {
			t.Errorf("CompilePattern(%q) = {String %q, LiteralPrefix %q, MaxDepth %d, IsLiteral %v}, want {%q, %q, %d, %v}",
				c.pattern, p.String(), p.LiteralPrefix(), p.MaxDepth(), p.IsLiteral(), c.pattern, c.lit, c.depth, c.literal)
		}
		for _, s := range c.match {
			if !p.Match(s) {
				t.Errorf("CompilePattern(%q).Match(%q) = false, want true", c.pattern, s)
			}
		}
		for _, s := range c.mismatch {
			if p.Match(s) {
				t.Errorf("CompilePattern(%q).Match(%q) = true, want false", c.pattern, s)
			}
		}
	}
	for _, bad := range []string{"[", "[a", "{a", `\`, "a/{b"} {
		_, err := vfs.CompilePattern(bad)
		if !errors.Is(err, vfs.ErrInvalidGlobPattern) || err.Error() != "invalid glob pattern: "+bad {
			t.Errorf("CompilePattern(%q) = %v, want \"invalid glob pattern: %s\"", bad, err, bad)
		}
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
		if err != nil {
			t.Fatal(err)
		}
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
			if !slices.Equal(got, want) {
				t.Fatalf("tree %d %q: Glob(%q, %q) = %q, want %q", i, slices.Sorted(func(yield func(string) bool) {
					for k := range files {
						if !yield(k) {
							return
						}
					}
				}), pattern, dir, got, want)
			}
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
		if err != nil {
			t.Fatalf("CompileGrepFilter(%q, %q): %v", c.glob, c.scope, err)
		}
		for _, p := range c.match {
			if !f.Match(p) {
				t.Errorf("CompileGrepFilter(%q, %q).Match(%q) = false, want true", c.glob, c.scope, p)
			}
		}
		for _, p := range c.mismatch {
			if f.Match(p) {
				t.Errorf("CompileGrepFilter(%q, %q).Match(%q) = true, want false", c.glob, c.scope, p)
			}
		}
	}
	f, err := vfs.CompileGrepFilter("", "/")
	if err != nil || f != nil || !f.Match("/anything") {
		t.Errorf("CompileGrepFilter(\"\") = %v, %v; want a nil filter that matches everything", f, err)
	}
	if _, err := vfs.CompileGrepFilter("[", "/"); !errors.Is(err, vfs.ErrInvalidGlobPattern) {
		t.Errorf("CompileGrepFilter(\"[\") = %v, want invalid glob pattern", err)
	}
}

func FuzzCompilePattern(f *testing.F) {
	for _, s := range []string{"*.ts", "**/*.go", "src/**/*.go", "a/b/**/{x,y}.c", "**/a?", "**/**", "src/**", "{a,b}/[c-d]?", "[!a]", "/abs/x", "a/{b/c,d}", `\*`, "[", "{", "**/", "", "a//b"} {
		f.Add(s, "a/b.ts")
	}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		p, err := vfs.CompilePattern(pattern)
		if err != nil {
			if !errors.Is(err, vfs.ErrInvalidGlobPattern) {
				t.Fatalf("CompilePattern(%q) = %v, want an invalid glob pattern error", pattern, err)
			}
			return
		}
		trimmed := strings.TrimLeft(pattern, "/")
		// Match (with its shortcut for "L/**/X") agrees with gobwas/glob.
		if g, err := (glob.Compiler{Separators: []rune{'/'}, Globstar: true}).Compile(trimmed); err == nil && g.Match(rel) != p.Match(rel) {
			t.Fatalf("CompilePattern(%q).Match(%q) = %v, gobwas/glob says %v", pattern, rel, p.Match(rel), g.Match(rel))
		}
		if !strings.HasPrefix(trimmed, p.LiteralPrefix()) {
			t.Fatalf("CompilePattern(%q).LiteralPrefix() = %q, not a prefix", pattern, p.LiteralPrefix())
		}
		if p.MaxDepth() < 0 {
			t.Fatalf("CompilePattern(%q).MaxDepth() = %d", pattern, p.MaxDepth())
		}
		if p.IsLiteral() && !p.Match(trimmed) && !strings.Contains(trimmed, "//") {
			t.Fatalf("literal pattern %q does not match itself", pattern)
		}
		// A match never has more segments than MaxDepth allows.
		if d := p.MaxDepth(); d > 0 && p.Match(rel) && len(strings.Split(rel, "/")) > d {
			t.Fatalf("CompilePattern(%q) matches %q, deeper than MaxDepth %d", pattern, rel, d)
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
		if err != nil {
			t.Fatal(err)
		}
		g, err := compiler.Compile(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range rels {
			if got, want := p.Match(rel), g.Match(rel); got != want {
				t.Errorf("CompilePattern(%q).Match(%q) = %v, want %v", pattern, rel, got, want)
			}
		}
	}
}
