package vfstest

import (
	"fmt"
	"slices"

	"github.com/julyfs/julyfs/vfs"
)

func file(p string) vfs.DirEntry { return vfs.DirEntry{Path: p, Kind: vfs.KindFile} }
func dir(p string) vfs.DirEntry  { return vfs.DirEntry{Path: p, Kind: vfs.KindDir} }

// fixtureDirs are the directories of the fixture, "/" included.
var fixtureDirs = []string{"/", "/agent", "/agent/skills", "/agent-tools", "/docs", "/src", "/src/nested", "/src/nested/deep", "/src-old"}

// missingPaths name nothing in the fixture; some share a prefix with a
// real name, some go below a file.
var missingPaths = []string{"/nope", "/sr", "/src/a", "/src/a.ts/x", "/agent-t", "/src/nested/deep/d.ts/e", "/README.md.bak"}

func checkListChildren(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, c := range []struct {
		dir  string
		want []vfs.DirEntry
	}{
		{"/", []vfs.DirEntry{file("/README.md"), dir("/agent"), dir("/agent-tools"), dir("/docs"), dir("/src"), dir("/src-old"), file("/src.bak")}},
		{"/src", []vfs.DirEntry{file("/src/a.ts"), file("/src/b.js"), dir("/src/nested")}},
		{"/docs", []vfs.DirEntry{file("/docs/guide.md"), file("/docs/with space.md"), file("/docs/\u00fcn\u00ef.md")}},
		{"/agent", []vfs.DirEntry{dir("/agent/skills")}},
		{"/src/nested/deep", []vfs.DirEntry{file("/src/nested/deep/d.ts")}},
	} {
		call := listCall(c.dir)
		if got := mustEntries(t, call, fsys.List(t.Context(), c.dir)); !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", call, got, c.want)
		}
	}
}

func checkListFileOrMissing(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, p := range append(seedPaths(fixture()), missingPaths...) {
		call := listCall(p)
		if got := mustEntries(t, call, fsys.List(t.Context(), p)); len(got) != 0 {
			t.Errorf("%s = %v, want nothing (a file is not under itself; a missing path is empty)", call, got)
		}
	}
}

func checkListReference(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	ref := NewReference(fixture())
	for _, d := range fixtureDirs {
		call := listCall(d)
		got := mustEntries(t, call, fsys.List(t.Context(), d))
		want := mustEntries(t, "reference "+call, ref.List(t.Context(), d))
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", call, got, want)
		}
	}
}

func checkStatFiles(t T, newFS NewFunc) {
	files := fixture()
	fsys := newFS(t, files)
	for _, p := range seedPaths(files) {
		info := stat(t, fsys, p)
		want := vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: int64(len(files[p]))}
		if got := (vfs.FileInfo{Path: info.Path, Kind: info.Kind, Size: info.Size}); got != want {
			t.Errorf("Stat(%q) = %+v, want %+v (ignoring ModTime and ETag)", p, got, want)
		}
		if info.ETag == "" {
			t.Errorf("Stat(%q).ETag is empty; a backend without etags serves a content hash", p)
		}
	}
}

func checkStatDirs(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, d := range fixtureDirs {
		wantKind(t, fsys, d, vfs.KindDir)
	}
	for _, p := range missingPaths {
		info := stat(t, fsys, p)
		if want := (vfs.FileInfo{Path: p, Kind: vfs.KindMissing}); info != want {
			t.Errorf("Stat(%q) = %+v, want %+v", p, info, want)
		}
	}
}

func checkStatRoot(t T, newFS NewFunc) {
	fsys := newFS(t, nil)
	for _, p := range []string{"/", "", ".", "/..", "//"} {
		wantKind(t, fsys, p, vfs.KindDir)
	}
}

func checkGlobRelative(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, c := range []struct {
		pattern, dir string
		want         []vfs.DirEntry
	}{
		// The contract's example: relative to dir, not basename-anywhere.
		{"*.ts", "/src", []vfs.DirEntry{file("/src/a.ts")}},
		{"**/*.ts", "/src", []vfs.DirEntry{file("/src/a.ts"), file("/src/nested/c.ts"), file("/src/nested/deep/d.ts")}},
		{"*/*.ts", "/src", []vfs.DirEntry{file("/src/nested/c.ts")}},
		{"*", "/", []vfs.DirEntry{file("/README.md"), dir("/agent"), dir("/agent-tools"), dir("/docs"), dir("/src"), dir("/src-old"), file("/src.bak")}},
		{"*", "/agent", []vfs.DirEntry{dir("/agent/skills")}},
		{"**", "/src/nested", []vfs.DirEntry{file("/src/nested/c.ts"), dir("/src/nested/deep"), file("/src/nested/deep/d.ts")}},
		{"nested", "/src", []vfs.DirEntry{dir("/src/nested")}},
		{"nested/c.ts", "/src", []vfs.DirEntry{file("/src/nested/c.ts")}},
		{"**/*.ts", "/", []vfs.DirEntry{file("/src-old/e.ts"), file("/src/a.ts"), file("/src/nested/c.ts"), file("/src/nested/deep/d.ts")}},
		{"src*", "/", []vfs.DirEntry{dir("/src"), dir("/src-old"), file("/src.bak")}},
		// dir is a file, missing, or a name prefix: nothing.
		{"*", "/src/a.ts", nil},
		{"**", "/src/a.ts", nil},
		{"*", "/nope", nil},
		{"**", "/sr", nil},
		{"*.ts", "/", nil},
	} {
		call := globCall(c.pattern, c.dir)
		if got := mustEntries(t, call, fsys.Glob(t.Context(), c.pattern, c.dir)); !slices.Equal(got, c.want) {
			t.Errorf("%s = %v, want %v", call, got, c.want)
		}
	}
}

func checkGlobDialect(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, c := range []struct {
		pattern, dir string
		want         []string
	}{
		{"*.{ts,js}", "/src", []string{"/src/a.ts", "/src/b.js"}},
		{"{nested,b.js}", "/src", []string{"/src/b.js", "/src/nested"}},
		{"[ab].*", "/src", []string{"/src/a.ts", "/src/b.js"}},
		{"[!a]*", "/src", []string{"/src/b.js", "/src/nested"}},
		{"?.ts", "/src", []string{"/src/a.ts"}},
		{"**/deep", "/", []string{"/src/nested/deep"}},
		{"**/*.md", "/docs", []string{"/docs/guide.md", "/docs/with space.md", "/docs/\u00fcn\u00ef.md"}},
		{"with space.md", "/docs", []string{"/docs/with space.md"}},
		{"agent*/*", "/", []string{"/agent-tools/t.md", "/agent/skills"}},
		{"src/**/d.ts", "/", []string{"/src/nested/deep/d.ts"}},
	} {
		call := globCall(c.pattern, c.dir)
		got := pathsOf(mustEntries(t, call, fsys.Glob(t.Context(), c.pattern, c.dir)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s = %q, want %q", call, got, c.want)
		}
	}
	// Every yielded kind is what Stat says.
	for e := range fsys.Glob(t.Context(), "**", "/") {
		if info := stat(t, fsys, e.Path); info.Kind != e.Kind {
			t.Errorf("Glob(\"**\", \"/\") yielded %v, but Stat(%q).Kind = %v", e, e.Path, info.Kind)
		}
	}
}

// globPatterns and globDirs span the dialect; the suite compares every
// combination with the reference.
var (
	globPatterns = []string{"*", "**", "*.ts", "**/*.ts", "*/*.ts", "**/*.md", "*.{ts,js}", "[ab].*", "?.ts",
		"nested", "nested/**", "**/deep", "src*", "s*/**/*.ts", "{src,docs}/*", "agent*", "**/c.ts", "*.md", "**/*", "*/*", "*/**"}
	globDirs = []string{"/", "/src", "/src/nested", "/docs", "/agent", "/src/a.ts", "/nope"}
)

func checkGlobReference(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	ref := NewReference(fixture())
	for _, d := range globDirs {
		for _, p := range globPatterns {
			call := globCall(p, d)
			got := mustEntries(t, call, fsys.Glob(t.Context(), p, d))
			want := mustEntries(t, "reference "+call, ref.Glob(t.Context(), p, d))
			if !slices.Equal(got, want) {
				t.Errorf("%s = %v, want %v", call, got, want)
			}
		}
	}
}

func checkGlobInvalid(t T, newFS NewFunc) {
	fsys := newFS(t, nil)
	for _, p := range []string{"[", "{a", "[a", "\\"} {
		call := globCall(p, "/")
		got, err := entries(t, call, fsys.Glob(t.Context(), p, "/"))
		if len(got) != 0 {
			t.Errorf("%s yielded %v before failing", call, got)
		}
		wantError(t, call, err, vfs.ErrInvalidGlobPattern, "invalid glob pattern: "+p)
	}
}

func checkReadFiles(t T, newFS NewFunc) {
	files := fixture()
	fsys := newFS(t, files)
	for _, p := range seedPaths(files) {
		wantContent(t, fsys, p, files[p])
	}
}

func checkReadMissing(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, p := range missingPaths {
		_, err := fsys.Read(t.Context(), p)
		wantError(t, fmt.Sprintf("Read(%q)", p), err, vfs.ErrNotFound, "not found: "+p)
	}
	for _, d := range fixtureDirs {
		if data, err := fsys.Read(t.Context(), d); err == nil {
			t.Errorf("Read(%q) = %s, nil error; reading a directory must fail", d, short(data))
		}
	}
}

// Path spellings that normalize to a file, a directory and a missing path.
var (
	fileSpellings = []string{"/src/a.ts", "src/a.ts", "./src/a.ts", "/src/./a.ts", "/src//a.ts", "//src/a.ts",
		"/src/nested/../a.ts", "/../src/a.ts", "/../../src/a.ts", "/src/a.ts/", "src/nested/deep/../../a.ts"}
	dirSpellings     = []string{"/src", "src", "/src/", "src/", "/src/.", "//src//", "/src/nested/..", "/docs/../src", "/../src", "./src/./"}
	rootSpellings    = []string{"/", "", ".", "..", "/..", "/../..", "//", "/./", "src/..", "/src/../../.."}
	missingSpellings = []string{"/nope", "nope", "/src/../nope", "/../nope", "//nope/", "./nope/."}
)

func checkNormalizeWalks(t T, newFS NewFunc, opts Options) {
	fsys := seeded(t, newFS)
	ctx := t.Context()
	for _, set := range [][]string{dirSpellings, rootSpellings, fileSpellings, missingSpellings} {
		clean := set[0]
		wantList := mustEntries(t, listCall(clean), fsys.List(ctx, clean))
		wantGlob := mustEntries(t, globCall("**", clean), fsys.Glob(ctx, "**", clean))
		hostMissing := opts.HostGrepRoot && clean == missingSpellings[0]
		var wantGrep []vfs.GrepResult
		if !hostMissing {
			wantGrep = mustGrep(t, grepCall(vfs.GrepQuery{Pattern: "TODO", Path: clean}), fsys.Grep(ctx, vfs.GrepQuery{Pattern: "TODO", Path: clean}))
		}
		for _, p := range set {
			if got := mustEntries(t, listCall(p), fsys.List(ctx, p)); !slices.Equal(got, wantList) {
				t.Errorf("%s = %v, want %v (as %s)", listCall(p), got, wantList, listCall(clean))
			}
			if got := mustEntries(t, globCall("**", p), fsys.Glob(ctx, "**", p)); !slices.Equal(got, wantGlob) {
				t.Errorf("%s = %v, want %v (as %s)", globCall("**", p), got, wantGlob, globCall("**", clean))
			}
			q := vfs.GrepQuery{Pattern: "TODO", Path: p}
			if hostMissing {
				_, err := grepHits(t, grepCall(q), fsys.Grep(ctx, q))
				wantError(t, grepCall(q), err, vfs.ErrNotFound, "not found: "+clean)
			} else if got := mustGrep(t, grepCall(q), fsys.Grep(ctx, q)); !slices.Equal(got, wantGrep) {
				t.Errorf("%s = %v, want %v (as Path %q)", grepCall(q), got, wantGrep, clean)
			}
			sq := vfs.SearchQuery{Query: "TODO", Path: p}
			if _, err := searchHits(t, fmt.Sprintf("Search(%+v)", sq), fsys.Search(ctx, sq)); err != nil {
				t.Errorf("Search(%+v) failed: %v", sq, err)
			}
		}
	}
	// The non-empty answers above are not vacuous.
	if len(mustEntries(t, listCall("/src"), fsys.List(ctx, "/src"))) == 0 {
		t.Errorf("List(\"/src\") is empty")
	}
}

func checkNormalizeReads(t T, newFS NewFunc) {
	files := fixture()
	fsys := newFS(t, files)
	ctx := t.Context()
	for _, p := range fileSpellings {
		wantKind(t, fsys, p, vfs.KindFile)
		wantContent(t, fsys, p, files["/src/a.ts"])
	}
	for _, p := range dirSpellings {
		wantKind(t, fsys, p, vfs.KindDir)
	}
	for _, p := range rootSpellings {
		wantKind(t, fsys, p, vfs.KindDir)
	}
	for _, p := range missingSpellings {
		wantKind(t, fsys, p, vfs.KindMissing)
		_, err := fsys.Read(ctx, p)
		wantError(t, fmt.Sprintf("Read(%q)", p), err, vfs.ErrNotFound, "not found: /nope")
	}
}
