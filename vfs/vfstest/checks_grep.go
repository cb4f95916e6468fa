package vfstest

import (
	"fmt"
	"slices"

	"github.com/julyfs/julyfs/vfs"
)

func hit(p string, n int, line string) vfs.GrepResult {
	return vfs.GrepResult{Path: p, LineNumber: n, Line: line}
}

// todoHits is Grep "TODO" over the whole fixture: by path (so "/src-old"
// and "/src.bak" before "/src/..."), then line, every hit kept, including
// the same line text twice in one file.
var todoHits = []vfs.GrepResult{
	hit("/README.md", 2, "TODO: write the readme"),
	hit("/agent-tools/t.md", 1, "tool TODO"),
	hit("/docs/guide.md", 3, "TODO docs"),
	hit("/docs/with space.md", 1, "spaced TODO"),
	hit("/src-old/e.ts", 1, "TODO old"),
	hit("/src.bak", 1, "TODO bak"),
	hit("/src/a.ts", 2, "TODO: one"),
	hit("/src/a.ts", 4, "TODO: one"),
	hit("/src/b.js", 1, "// TODO js"),
	hit("/src/nested/c.ts", 2, "TODO upper"),
}

func grepCase(t T, fsys vfs.FileSystem, q vfs.GrepQuery, want []vfs.GrepResult) {
	t.Helper()
	call := grepCall(q)
	if got := mustGrep(t, call, fsys.Grep(t.Context(), q)); !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", call, got, want)
	}
}

func checkGrepOrder(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO"}, todoHits)
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "todo", CaseInsensitive: true},
		slices.Insert(slices.Clone(todoHits), 9, hit("/src/nested/c.ts", 1, "todo lower")))
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "todo"}, []vfs.GrepResult{hit("/src/nested/c.ts", 1, "todo lower")})
	// The last line without a newline, an empty line, anchors.
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "^end$", Path: "/docs"}, []vfs.GrepResult{hit("/docs/guide.md", 4, "end")})
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "^$", Path: "/docs"}, []vfs.GrepResult{hit("/docs/guide.md", 2, "")})
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO|skill", Path: "/agent"}, []vfs.GrepResult{hit("/agent/skills/s.md", 1, "skill")})
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "\u00fc", Path: "/docs"}, []vfs.GrepResult{hit("/docs/\u00fcn\u00ef.md", 1, "unicode \u00fc")})
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "no such text"}, nil)
}

func checkGrepScope(t T, newFS NewFunc, opts Options) {
	fsys := seeded(t, newFS)
	a := []vfs.GrepResult{hit("/src/a.ts", 2, "TODO: one"), hit("/src/a.ts", 4, "TODO: one")}
	// A directory scope is by segment: "/src" is not "/src-old".
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO", Path: "/src"}, append(slices.Clone(a), hit("/src/b.js", 1, "// TODO js"), hit("/src/nested/c.ts", 2, "TODO upper")))
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO", Path: "/agent"}, nil)
	// A file scope greps that file.
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO", Path: "/src/a.ts"}, a)
	// A missing scope yields nothing, or on a host tree fails.
	for _, p := range missingPaths {
		if !opts.HostGrepRoot {
			grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO", Path: p}, nil)
			continue
		}
		q := vfs.GrepQuery{Pattern: "TODO", Path: p}
		hits, err := grepHits(t, grepCall(q), fsys.Grep(t.Context(), q))
		if len(hits) != 0 {
			t.Errorf("%s = %v, want no hits", grepCall(q), hits)
		}
		wantError(t, grepCall(q), err, vfs.ErrNotFound, "not found: "+p)
	}
}

func checkGrepFilter(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	a := []vfs.GrepResult{hit("/src/a.ts", 2, "TODO: one"), hit("/src/a.ts", 4, "TODO: one")}
	c := hit("/src/nested/c.ts", 2, "TODO upper")
	for _, tc := range []struct {
		q    vfs.GrepQuery
		want []vfs.GrepResult
	}{
		// A slash-free glob matches the basename at any depth.
		{vfs.GrepQuery{Pattern: "TODO", Glob: "*.ts"}, append(append([]vfs.GrepResult{hit("/src-old/e.ts", 1, "TODO old")}, a...), c)},
		{vfs.GrepQuery{Pattern: "TODO", Glob: "c.ts"}, []vfs.GrepResult{c}},
		{vfs.GrepQuery{Pattern: "TODO", Glob: "*.{js,md}", Path: "/src"}, []vfs.GrepResult{hit("/src/b.js", 1, "// TODO js")}},
		// A glob with a slash is relative to Path.
		{vfs.GrepQuery{Pattern: "TODO", Glob: "nested/*.ts", Path: "/src"}, []vfs.GrepResult{c}},
		{vfs.GrepQuery{Pattern: "TODO", Glob: "src/*.ts"}, a},
		{vfs.GrepQuery{Pattern: "TODO", Glob: "src/*.ts", Path: "/src"}, nil},
		{vfs.GrepQuery{Pattern: "TODO", Glob: "**/*.ts", Path: "/src"}, append(slices.Clone(a), c)},
		// A file scope with a basename filter.
		{vfs.GrepQuery{Pattern: "TODO", Glob: "*.ts", Path: "/src/a.ts"}, a},
		{vfs.GrepQuery{Pattern: "TODO", Glob: "*.js", Path: "/src/a.ts"}, nil},
	} {
		grepCase(t, fsys, tc.q, tc.want)
	}
	q := vfs.GrepQuery{Pattern: "TODO", Glob: "[", Path: "/"}
	hits, err := grepHits(t, grepCall(q), fsys.Grep(t.Context(), q))
	if len(hits) != 0 {
		t.Errorf("%s yielded %v before failing", grepCall(q), hits)
	}
	wantError(t, grepCall(q), err, vfs.ErrInvalidGlobPattern, "invalid glob pattern: [")
}

func checkGrepMax(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for n := 1; n <= len(todoHits)+1; n++ {
		want := todoHits[:min(n, len(todoHits))]
		grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO", MaxResults: n}, want)
	}
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO", MaxResults: 1, Path: "/src/a.ts"}, todoHits[6:7])
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO", MaxResults: 0}, todoHits)
}

// grepPatterns span literal, case-folded, anchored, alternated and
// literal-free patterns, including ones that match empty lines.
var grepPatterns = []string{"TODO", "todo", "^TODO", "one$", "T.DO", "TODO|deep", "(?i)todo", `\bone\b`, "^$", "x*", ".",
	"^", "e$", "[0-9]", `\s`, "TODO: (one|write)", "(?s)a.b", "a|b|c|d|e|f|g|h|i|j", "\u00fc", `\.`, "#"}

func checkGrepReference(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	ref := NewReference(fixture())
	for _, p := range grepPatterns {
		for _, fold := range []bool{false, true} {
			for _, scope := range []string{"/", "/src", "/docs/guide.md"} {
				q := vfs.GrepQuery{Pattern: p, CaseInsensitive: fold, Path: scope}
				want := mustGrep(t, "reference "+grepCall(q), ref.Grep(t.Context(), q))
				grepCase(t, fsys, q, want)
			}
		}
	}
}

func checkGrepInvalid(t T, newFS NewFunc) {
	fsys := newFS(t, nil)
	for _, p := range []string{"(", "a[", "*x", "(?<", `\`} {
		for _, fold := range []bool{false, true} {
			q := vfs.GrepQuery{Pattern: p, CaseInsensitive: fold}
			hits, err := grepHits(t, grepCall(q), fsys.Grep(t.Context(), q))
			if len(hits) != 0 {
				t.Errorf("%s yielded %v before failing", grepCall(q), hits)
			}
			wantError(t, grepCall(q), err, vfs.ErrInvalidGrepPattern, "invalid grep pattern: "+p)
		}
	}
}

func checkSearchEmpty(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, q := range []vfs.SearchQuery{{Query: "TODO"}, {Query: "TODO", Path: "/src"}, {Query: "readme", Path: "/nope", MaxResults: 3}, {}} {
		call := fmt.Sprintf("Search(%+v)", q)
		rs, err := searchHits(t, call, fsys.Search(t.Context(), q))
		if err != nil || len(rs) != 0 {
			t.Errorf("%s = %v, %v; want nothing and no error (no index)", call, rs, err)
		}
	}
}

func checkSearchIndexed(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	all, err := searchHits(t, `Search({Query:"TODO"})`, fsys.Search(t.Context(), vfs.SearchQuery{Query: "TODO"}))
	if err != nil {
		t.Errorf(`Search({Query:"TODO"}) failed: %v`, err)
	}
	for n := 1; n <= 3; n++ {
		q := vfs.SearchQuery{Query: "TODO", MaxResults: n}
		call := fmt.Sprintf("Search(%+v)", q)
		rs, err := searchHits(t, call, fsys.Search(t.Context(), q))
		if err != nil {
			t.Errorf("%s failed: %v", call, err)
		}
		if len(rs) > n {
			t.Errorf("%s yielded %d results, want at most %d", call, len(rs), n)
		}
		if len(all) >= n && len(rs) != n {
			t.Errorf("%s yielded %d results; the unlimited search has %d", call, len(rs), len(all))
		}
	}
	q := vfs.SearchQuery{Query: "TODO", Path: "/src"}
	call := fmt.Sprintf("Search(%+v)", q)
	rs, err := searchHits(t, call, fsys.Search(t.Context(), q))
	if err != nil {
		t.Errorf("%s failed: %v", call, err)
	}
	for _, r := range rs {
		if !vfs.HasPrefix(r.Path, "/src") {
			t.Errorf("%s yielded %+v, outside the scope", call, r)
		}
	}
	q = vfs.SearchQuery{Query: "TODO", Path: "/nope"}
	if rs, err := searchHits(t, call, fsys.Search(t.Context(), q)); err != nil || len(rs) != 0 {
		t.Errorf("Search(%+v) = %v, %v; want nothing for a missing scope", q, rs, err)
	}
}
