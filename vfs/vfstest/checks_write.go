package vfstest

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/julyfs/julyfs/vfs"
)

// pngHeader is the start of a PNG image: the bytes an image read must
// return unchanged.
var pngHeader = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// roundTrips are contents every writable tree must store byte for byte.
func roundTrips() map[string][]byte {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	return map[string][]byte{
		"/w/text.md":         []byte("# title\n\nbody line\n"),
		"/w/empty.txt":       {},
		"/w/nul.bin":         []byte("a\x00b\x00\x00c"),
		"/w/image.png":       pngHeader,
		"/w/bytes.bin":       all,
		"/w/crlf.txt":        []byte("one\r\ntwo\r\n"),
		"/w/no-eol.txt":      []byte("no newline"),
		"/w/utf8 \u00e9.txt": []byte("caf\u00e9 \u2603\n"),
		"/w/large.txt":       bytes.Repeat([]byte("0123456789abcdef\n"), 1<<16),
	}
}

func write(t T, fsys vfs.FileSystem, p string, data []byte) {
	t.Helper()
	if err := fsys.Write(t.Context(), p, data); err != nil {
		t.Fatalf("Write(%q, %s) failed: %v", p, short(data), err)
	}
}

func checkWriteRoundTrip(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	files := roundTrips()
	for _, p := range seedPaths(files) {
		write(t, fsys, p, files[p])
	}
	for _, p := range seedPaths(files) {
		wantContent(t, fsys, p, files[p])
		info := stat(t, fsys, p)
		if info.Kind != vfs.KindFile || info.Size != int64(len(files[p])) || info.Path != p || info.ETag == "" {
			t.Errorf("Stat(%q) = %+v, want a file of %d bytes with an etag", p, info, len(files[p]))
		}
	}
	var want []string
	for _, p := range seedPaths(files) {
		want = append(want, p)
	}
	if got := pathsOf(mustEntries(t, listCall("/w"), fsys.List(t.Context(), "/w"))); !slices.Equal(got, want) {
		t.Errorf("List(\"/w\") = %q, want %q", got, want)
	}
	// Seeded files are untouched.
	wantContent(t, fsys, "/src/a.ts", fixture()["/src/a.ts"])
}

func checkWriteOverwrite(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	long := bytes.Repeat([]byte("long line\n"), 100)
	write(t, fsys, "/src/a.ts", long)
	wantContent(t, fsys, "/src/a.ts", long)
	for _, data := range [][]byte{[]byte("short\n"), {}, []byte("x")} {
		write(t, fsys, "/src/a.ts", data)
		wantContent(t, fsys, "/src/a.ts", data)
		if info := stat(t, fsys, "/src/a.ts"); info.Size != int64(len(data)) {
			t.Errorf("Stat(\"/src/a.ts\").Size = %d after writing %d bytes", info.Size, len(data))
		}
	}
	want := []vfs.DirEntry{file("/src/a.ts"), file("/src/b.js"), dir("/src/nested")}
	if got := mustEntries(t, listCall("/src"), fsys.List(t.Context(), "/src")); !slices.Equal(got, want) {
		t.Errorf("List(\"/src\") = %v after overwriting, want %v", got, want)
	}
}

func checkWriteNewDirs(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	write(t, fsys, "/new/a/b/c.txt", []byte("c\n"))
	for _, d := range []string{"/new", "/new/a", "/new/a/b"} {
		wantKind(t, fsys, d, vfs.KindDir)
	}
	for _, c := range []struct {
		dir  string
		want []vfs.DirEntry
	}{
		{"/", []vfs.DirEntry{file("/README.md"), dir("/agent"), dir("/agent-tools"), dir("/docs"), dir("/new"), dir("/src"), dir("/src-old"), file("/src.bak")}},
		{"/new", []vfs.DirEntry{dir("/new/a")}},
		{"/new/a/b", []vfs.DirEntry{file("/new/a/b/c.txt")}},
	} {
		if got := mustEntries(t, listCall(c.dir), fsys.List(t.Context(), c.dir)); !slices.Equal(got, c.want) {
			t.Errorf("List(%q) = %v, want %v", c.dir, got, c.want)
		}
	}
	want := []vfs.DirEntry{dir("/new/a"), dir("/new/a/b"), file("/new/a/b/c.txt")}
	if got := mustEntries(t, globCall("**", "/new"), fsys.Glob(t.Context(), "**", "/new")); !slices.Equal(got, want) {
		t.Errorf("Glob(\"**\", \"/new\") = %v, want %v", got, want)
	}
	// A new file beside existing ones.
	write(t, fsys, "/src/nested/c2.ts", []byte("c2\n"))
	want = []vfs.DirEntry{file("/src/nested/c.ts"), file("/src/nested/c2.ts"), dir("/src/nested/deep")}
	if got := mustEntries(t, listCall("/src/nested"), fsys.List(t.Context(), "/src/nested")); !slices.Equal(got, want) {
		t.Errorf("List(\"/src/nested\") = %v, want %v", got, want)
	}
}

func checkWriteOwnership(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	data := []byte("original")
	write(t, fsys, "/own.txt", data)
	copy(data, "MUTATED!")
	wantContent(t, fsys, "/own.txt", []byte("original"))
	got, err := fsys.Read(t.Context(), "/own.txt")
	if err != nil {
		t.Fatalf("Read(\"/own.txt\") failed: %v", err)
	}
	copy(got, "XXXXXXXX")
	wantContent(t, fsys, "/own.txt", []byte("original"))
}

func checkWriteETag(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	seen := map[string]string{}
	for i, data := range []string{"aaaa", "bbbb", "cccc", "aaaaa"} {
		write(t, fsys, "/etag.txt", []byte(data))
		info := stat(t, fsys, "/etag.txt")
		if info.ETag == "" {
			t.Errorf("Stat(\"/etag.txt\").ETag is empty after writing %q", data)
			continue
		}
		if prev, ok := seen[info.ETag]; ok {
			t.Errorf("Stat(\"/etag.txt\").ETag = %q for %q, the same as for %q; it must change with the contents", info.ETag, data, prev)
		}
		seen[info.ETag] = data
		if again := stat(t, fsys, "/etag.txt"); again.ETag != info.ETag {
			t.Errorf("Stat(\"/etag.txt\").ETag = %q then %q with no write between (write %d)", info.ETag, again.ETag, i)
		}
	}
}

func checkWriteInvalid(t T, newFS NewFunc) {
	files := fixture()
	fsys := newFS(t, files)
	for _, p := range []string{"/", "/src", "/src/nested", "/src/a.ts/x", "/src/nested/deep/d.ts/e/f"} {
		if err := fsys.Write(t.Context(), p, []byte("x")); err == nil {
			t.Errorf("Write(%q) = nil error; writing over a directory or below a file must fail", p)
		}
	}
	for _, d := range []string{"/src", "/src/nested"} {
		wantKind(t, fsys, d, vfs.KindDir)
	}
	wantContent(t, fsys, "/src/a.ts", files["/src/a.ts"])
	wantContent(t, fsys, "/src/nested/deep/d.ts", files["/src/nested/deep/d.ts"])
	wantKind(t, fsys, "/src/a.ts/x", vfs.KindMissing)
}

func checkWriteNormalize(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for i, p := range []string{"w/x.txt", "/w/./x.txt", "//w//x.txt", "/w/sub/../x.txt", "/../w/x.txt", "/w/x.txt/", "./w/x.txt"} {
		data := []byte(fmt.Sprintf("write %d\n", i))
		write(t, fsys, p, data)
		wantContent(t, fsys, "/w/x.txt", data)
		if got := pathsOf(mustEntries(t, listCall("/w"), fsys.List(t.Context(), "/w"))); !slices.Equal(got, []string{"/w/x.txt"}) {
			t.Errorf("List(\"/w\") = %q after Write(%q), want [\"/w/x.txt\"]", got, p)
		}
	}
	wantKind(t, fsys, "/w/sub", vfs.KindMissing)
}

func checkWriteVisible(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	ctx := t.Context()
	// Warm any cache first, then change the tree.
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO", Path: "/src/b.js"}, []vfs.GrepResult{hit("/src/b.js", 1, "// TODO js")})
	mustEntries(t, globCall("**/*.ts", "/"), fsys.Glob(ctx, "**/*.ts", "/"))
	write(t, fsys, "/src/b.js", []byte("done\nFIXME later\n"))
	write(t, fsys, "/src/z.ts", []byte("TODO new\n"))
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "TODO|FIXME", Path: "/src", Glob: "*.{js,ts}"}, []vfs.GrepResult{
		hit("/src/a.ts", 2, "TODO: one"), hit("/src/a.ts", 4, "TODO: one"), hit("/src/b.js", 2, "FIXME later"),
		hit("/src/nested/c.ts", 2, "TODO upper"), hit("/src/z.ts", 1, "TODO new"),
	})
	want := []string{"/src-old/e.ts", "/src/a.ts", "/src/nested/c.ts", "/src/nested/deep/d.ts", "/src/z.ts"}
	if got := pathsOf(mustEntries(t, globCall("**/*.ts", "/"), fsys.Glob(ctx, "**/*.ts", "/"))); !slices.Equal(got, want) {
		t.Errorf("Glob(\"**/*.ts\", \"/\") = %q after writing /src/z.ts, want %q", got, want)
	}
}

func checkWriteReadOnly(t T, newFS NewFunc) {
	files := fixture()
	fsys := newFS(t, files)
	for _, c := range []struct{ path, clean string }{
		{"/src/a.ts", "/src/a.ts"}, {"/new.txt", "/new.txt"}, {"new/../x.txt", "/x.txt"}, {"/src//nested/n.ts/", "/src/nested/n.ts"},
	} {
		err := fsys.Write(t.Context(), c.path, []byte("x"))
		wantError(t, fmt.Sprintf("Write(%q)", c.path), err, vfs.ErrReadOnly, "read-only mount: "+c.clean)
	}
	if err := fsys.Write(t.Context(), "/", []byte("x")); err == nil {
		t.Errorf("Write(\"/\") = nil error on a read-only tree")
	}
	checkUnchanged(t, fsys)
}

func checkDeleteReadOnly(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, c := range []struct{ path, clean string }{{"/src/a.ts", "/src/a.ts"}, {"src/nested/../b.js", "/src/b.js"}} {
		err := fsys.Delete(t.Context(), c.path)
		wantError(t, fmt.Sprintf("Delete(%q)", c.path), err, vfs.ErrReadOnly, "read-only mount: "+c.clean)
	}
	// A missing path may fail either way, but must fail.
	if err := fsys.Delete(t.Context(), "/nope"); vfs.KindOf(err) != vfs.KindReadOnly && vfs.KindOf(err) != vfs.KindNotFound {
		t.Errorf("Delete(\"/nope\") = %v, want \"read-only mount: /nope\" or \"not found: /nope\"", err)
	}
	checkUnchanged(t, fsys)
}

// checkUnchanged verifies fsys still holds exactly the fixture (or nothing,
// for a tree declared NoFiles: then every fixture path is missing).
func checkUnchanged(t T, fsys vfs.FileSystem) {
	t.Helper()
	files := fixture()
	got := mustEntries(t, globCall("**", "/"), fsys.Glob(t.Context(), "**", "/"))
	want := mustEntries(t, "reference", NewReference(files).Glob(t.Context(), "**", "/"))
	if len(got) == 0 {
		want = nil // an empty tree stays empty
	}
	if !slices.Equal(got, want) {
		t.Errorf("Glob(\"**\", \"/\") = %v after refused writes, want %v", got, want)
	}
	for _, e := range got {
		if e.Kind == vfs.KindFile {
			wantContent(t, fsys, e.Path, files[e.Path])
		}
	}
	wantKind(t, fsys, "/new.txt", vfs.KindMissing)
	wantKind(t, fsys, "/x.txt", vfs.KindMissing)
}
