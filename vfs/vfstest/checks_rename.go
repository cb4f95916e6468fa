package vfstest

import (
	"errors"
	"fmt"
	"slices"
	"syscall"

	"github.com/julyfs/julyfs/vfs"
)

// checkRename checks vfs.Rename (the tree's vfs.Renamer, or the helper's
// copy and delete): a file moves to a new directory and over a file, its
// content intact and the source gone; onto itself it stays; a missing
// source is "not found"; a file onto a directory, the root, and (for a
// Renamer) a directory into itself, onto a file or onto a directory that
// holds files fail and change nothing. A Renamer moves a directory with
// everything under it (or answers EXDEV); without one the helper refuses
// directories. A read-only tree refuses and changes nothing.
func checkRename(t T, newFS NewFunc, opts Options) {
	files := fixture()
	fsys := newFS(t, files)
	ctx := t.Context()
	_, native := fsys.(vfs.Renamer)
	call := func(from, to string) string { return fmt.Sprintf("Rename(%q, %q)", from, to) }
	rename := func(from, to string) error { return vfs.Rename(ctx, fsys, from, to) }
	intact := func(except ...string) {
		t.Helper()
		if opts.NoFiles {
			return
		}
		for _, p := range seedPaths(files) {
			if !slices.Contains(except, p) {
				wantContent(t, fsys, p, files[p])
			}
		}
	}

	if opts.readOnly() {
		err := rename("/src/a.ts", "/moved.ts")
		switch {
		case err == nil:
			t.Errorf("%s = nil error on a read-only tree", call("/src/a.ts", "/moved.ts"))
		case !errors.Is(err, vfs.ErrReadOnly) && !(opts.NoFiles && errors.Is(err, vfs.ErrNotFound)):
			t.Errorf("%s = %v on a read-only tree, want read-only mount", call("/src/a.ts", "/moved.ts"), err)
		}
		wantKind(t, fsys, "/moved.ts", vfs.KindMissing)
		intact()
		return
	}
	if opts.NoDelete {
		// The copy may land, but the source must not be lost.
		if err := rename("/src/a.ts", "/moved.ts"); err == nil {
			wantKind(t, fsys, "/src/a.ts", vfs.KindMissing)
			wantContent(t, fsys, "/moved.ts", files["/src/a.ts"])
		} else {
			wantContent(t, fsys, "/src/a.ts", files["/src/a.ts"])
		}
		return
	}

	// A file to a new directory, by unclean paths.
	if err := rename("/src//a.ts", "/moved/./a2.ts/"); err != nil {
		t.Fatalf("%s failed: %v", call("/src//a.ts", "/moved/./a2.ts/"), err)
	}
	wantKind(t, fsys, "/src/a.ts", vfs.KindMissing)
	wantContent(t, fsys, "/moved/a2.ts", files["/src/a.ts"])
	if got := pathsOf(mustEntries(t, listCall("/moved"), fsys.List(ctx, "/moved"))); !slices.Equal(got, []string{"/moved/a2.ts"}) {
		t.Errorf("List(\"/moved\") after the rename = %q, want [/moved/a2.ts]", got)
	}
	// Over an existing file.
	if err := rename("/src/b.js", "/src.bak"); err != nil {
		t.Errorf("%s failed: %v", call("/src/b.js", "/src.bak"), err)
	}
	wantKind(t, fsys, "/src/b.js", vfs.KindMissing)
	wantContent(t, fsys, "/src.bak", files["/src/b.js"])
	// Onto itself: nothing changes, nothing is lost.
	if err := rename("/README.md", "/README.md/"); err != nil {
		t.Errorf("%s = %v, want nil", call("/README.md", "/README.md/"), err)
	}
	moved := []string{"/src/a.ts", "/src/b.js", "/src.bak"}
	intact(moved...)
	// A missing source.
	wantError(t, call("/nope/../missing", "/x"), rename("/nope/../missing", "/x"), vfs.ErrNotFound, "not found: /missing")
	wantKind(t, fsys, "/x", vfs.KindMissing)
	// Refused: a file onto a directory, the root either way.
	for _, c := range [][2]string{{"/src.bak", "/docs"}, {"/", "/r"}, {"/README.md", "/"}} {
		if err := rename(c[0], c[1]); err == nil {
			t.Errorf("%s = nil error", call(c[0], c[1]))
		}
	}
	wantKind(t, fsys, "/r", vfs.KindMissing)
	wantContent(t, fsys, "/src.bak", files["/src/b.js"])
	intact(moved...)

	// A directory with everything under it.
	err := rename("/src/nested", "/lib")
	switch {
	case native && err == nil:
		wantKind(t, fsys, "/src/nested", vfs.KindMissing)
		wantKind(t, fsys, "/src/nested/c.ts", vfs.KindMissing)
		wantContent(t, fsys, "/lib/c.ts", files["/src/nested/c.ts"])
		wantContent(t, fsys, "/lib/deep/d.ts", files["/src/nested/deep/d.ts"])
		if got := pathsOf(mustEntries(t, globCall("**/*.ts", "/lib"), fsys.Glob(ctx, "**/*.ts", "/lib"))); !slices.Equal(got, []string{"/lib/c.ts", "/lib/deep/d.ts"}) {
			t.Errorf("Glob(\"**/*.ts\", \"/lib\") after the rename = %q", got)
		}
		moved = append(moved, "/src/nested/c.ts", "/src/nested/deep/d.ts")
		// Into itself, onto a file, onto a directory holding files.
		for _, c := range [][2]string{{"/lib", "/lib/deep/x"}, {"/lib", "/README.md"}, {"/lib", "/docs"}} {
			if err := rename(c[0], c[1]); err == nil {
				t.Errorf("%s = nil error", call(c[0], c[1]))
			}
		}
		wantContent(t, fsys, "/lib/c.ts", files["/src/nested/c.ts"])
		wantContent(t, fsys, "/lib/deep/d.ts", files["/src/nested/deep/d.ts"])
		wantKind(t, fsys, "/lib/deep/x", vfs.KindMissing)
	case err == nil:
		t.Errorf("%s without a Renamer = nil error, want the helper to refuse a directory", call("/src/nested", "/lib"))
	case native && !errors.Is(err, syscall.EXDEV):
		t.Errorf("%s failed: %v", call("/src/nested", "/lib"), err)
	default:
		wantKind(t, fsys, "/lib", vfs.KindMissing)
	}
	intact(moved...)
}
