package vfstest

import (
	"fmt"
	"slices"

	"github.com/julyfs/julyfs/vfs"
)

func del(t T, fsys vfs.FileSystem, p string) {
	t.Helper()
	if err := fsys.Delete(t.Context(), p); err != nil {
		t.Fatalf("Delete(%q) failed: %v", p, err)
	}
}

func checkDeleteFile(t T, newFS NewFunc, keepsEmptyDirs bool) {
	files := fixture()
	fsys := newFS(t, files)
	ctx := t.Context()
	del(t, fsys, "/src/nested/deep/d.ts")
	wantKind(t, fsys, "/src/nested/deep/d.ts", vfs.KindMissing)
	_, err := fsys.Read(ctx, "/src/nested/deep/d.ts")
	wantError(t, `Read("/src/nested/deep/d.ts")`, err, vfs.ErrNotFound, "not found: /src/nested/deep/d.ts")
	if got := mustEntries(t, listCall("/src/nested/deep"), fsys.List(ctx, "/src/nested/deep")); len(got) != 0 {
		t.Errorf("List(\"/src/nested/deep\") = %v after deleting its only file, want nothing", got)
	}
	grepCase(t, fsys, vfs.GrepQuery{Pattern: "deep"}, nil)
	nested := []vfs.DirEntry{file("/src/nested/c.ts")}
	if keepsEmptyDirs {
		wantKind(t, fsys, "/src/nested/deep", vfs.KindDir)
		nested = append(nested, dir("/src/nested/deep"))
	} else {
		wantKind(t, fsys, "/src/nested/deep", vfs.KindMissing)
	}
	if got := mustEntries(t, listCall("/src/nested"), fsys.List(ctx, "/src/nested")); !slices.Equal(got, nested) {
		t.Errorf("List(\"/src/nested\") = %v after deleting /src/nested/deep/d.ts, want %v", got, nested)
	}
	wantKind(t, fsys, "/src/nested", vfs.KindDir)
	// Deleting the last file of a chain of directories.
	del(t, fsys, "/agent/skills/s.md")
	top := []vfs.DirEntry{file("/README.md"), dir("/agent-tools"), dir("/docs"), dir("/src"), dir("/src-old"), file("/src.bak")}
	if keepsEmptyDirs {
		top = slices.Insert(top, 1, dir("/agent"))
	}
	if got := mustEntries(t, listCall("/"), fsys.List(ctx, "/")); !slices.Equal(got, top) {
		t.Errorf("List(\"/\") = %v after deleting /agent/skills/s.md, want %v", got, top)
	}
	// Writing again recreates the file; the rest is untouched.
	write(t, fsys, "/src/nested/deep/d.ts", []byte("again\n"))
	wantContent(t, fsys, "/src/nested/deep/d.ts", []byte("again\n"))
	wantContent(t, fsys, "/src/nested/c.ts", files["/src/nested/c.ts"])
	// Deleting a top-level file.
	del(t, fsys, "/src.bak")
	wantKind(t, fsys, "/src.bak", vfs.KindMissing)
	wantKind(t, fsys, "/src", vfs.KindDir)
}

func checkDeleteMissing(t T, newFS NewFunc) {
	files := fixture()
	fsys := newFS(t, files)
	for _, p := range missingPaths {
		err := fsys.Delete(t.Context(), p)
		wantError(t, fmt.Sprintf("Delete(%q)", p), err, vfs.ErrNotFound, "not found: "+p)
	}
	for _, d := range fixtureDirs {
		if err := fsys.Delete(t.Context(), d); err == nil {
			t.Errorf("Delete(%q) = nil error; deleting a directory must fail", d)
		}
	}
	// A second delete of the same file misses.
	del(t, fsys, "/src/b.js")
	err := fsys.Delete(t.Context(), "/src/b.js")
	wantError(t, `Delete("/src/b.js") twice`, err, vfs.ErrNotFound, "not found: /src/b.js")
	for _, p := range seedPaths(files) {
		if p != "/src/b.js" {
			wantContent(t, fsys, p, files[p])
		}
	}
}

func checkDeleteNormalize(t T, newFS NewFunc) {
	fsys := seeded(t, newFS)
	for _, p := range fileSpellings {
		write(t, fsys, "/src/a.ts", []byte("x"))
		if err := fsys.Delete(t.Context(), p); err != nil {
			t.Errorf("Delete(%q) failed: %v", p, err)
		}
		wantKind(t, fsys, "/src/a.ts", vfs.KindMissing)
	}
	for _, p := range missingSpellings {
		err := fsys.Delete(t.Context(), p)
		wantError(t, fmt.Sprintf("Delete(%q)", p), err, vfs.ErrNotFound, "not found: /nope")
	}
}

func checkDeleteNotSupported(t T, newFS NewFunc) {
	files := fixture()
	fsys := newFS(t, files)
	for _, c := range []struct{ path, clean string }{{"/src/a.ts", "/src/a.ts"}, {"src//nested/../b.js/", "/src/b.js"}} {
		err := fsys.Delete(t.Context(), c.path)
		wantError(t, fmt.Sprintf("Delete(%q)", c.path), err, vfs.ErrDeleteNotSupported, "delete not supported: "+c.clean)
	}
	if err := fsys.Delete(t.Context(), "/nope"); vfs.KindOf(err) != vfs.KindDeleteNotSupported && vfs.KindOf(err) != vfs.KindNotFound {
		t.Errorf("Delete(\"/nope\") = %v, want \"delete not supported: /nope\" or \"not found: /nope\"", err)
	}
	wantContent(t, fsys, "/src/a.ts", files["/src/a.ts"])
	wantContent(t, fsys, "/src/b.js", files["/src/b.js"])
}
