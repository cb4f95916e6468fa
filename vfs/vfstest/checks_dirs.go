package vfstest

import (
	"errors"
	"fmt"
	"slices"

	"github.com/julyfs/julyfs/vfs"
)

// checkDirs checks the directory capabilities (vfs.DirMaker and
// vfs.DirRemover) through their helpers: a tree without them answers
// errors.ErrUnsupported (or, read-only, read-only mount) and changes
// nothing; a tree with them makes real, listed directories, removes only
// empty ones, and never touches a file.
func checkDirs(t T, newFS NewFunc, opts Options) {
	files := fixture()
	fsys := newFS(t, files)
	ctx := t.Context()
	unsupported := func(err error) bool { return errors.Is(err, errors.ErrUnsupported) }
	refused := func(call string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s = nil error on a read-only tree", call)
		} else if !unsupported(err) && !errors.Is(err, vfs.ErrReadOnly) {
			t.Errorf("%s = %v on a read-only tree, want read-only mount or errors.ErrUnsupported", call, err)
		}
	}
	intact := func() {
		t.Helper()
		if !opts.NoFiles {
			for _, p := range seedPaths(files) {
				wantContent(t, fsys, p, files[p])
			}
		}
	}

	err := vfs.MakeDir(ctx, fsys, "/made//deep/")
	switch {
	case opts.readOnly():
		refused(`MakeDir("/made//deep/")`, err)
		wantKind(t, fsys, "/made", vfs.KindMissing)
	case unsupported(err):
		wantKind(t, fsys, "/made", vfs.KindMissing)
	case err != nil:
		t.Errorf(`MakeDir("/made//deep/") failed: %v`, err)
	default:
		wantKind(t, fsys, "/made", vfs.KindDir)
		wantKind(t, fsys, "/made/deep", vfs.KindDir)
		if got := pathsOf(mustEntries(t, listCall("/made"), fsys.List(ctx, "/made"))); !slices.Equal(got, []string{"/made/deep"}) {
			t.Errorf("List(\"/made\") = %q, want [/made/deep]", got)
		}
		if got := pathsOf(mustEntries(t, listCall("/"), fsys.List(ctx, "/"))); !slices.Contains(got, "/made") {
			t.Errorf("List(\"/\") = %q, want it to hold /made", got)
		}
		if err := vfs.MakeDir(ctx, fsys, "/made/deep"); err != nil {
			t.Errorf(`MakeDir("/made/deep") again = %v, want nil`, err)
		}
		if err := vfs.MakeDir(ctx, fsys, "/"); err != nil {
			t.Errorf(`MakeDir("/") = %v, want nil`, err)
		}
		for _, p := range []string{"/src/a.ts", "/src/a.ts/x"} {
			if err := vfs.MakeDir(ctx, fsys, p); err == nil {
				t.Errorf("MakeDir(%q) over a file = nil error", p)
			}
		}
		// A file written into a made directory is an ordinary file.
		if !opts.NoDelete {
			write(t, fsys, "/made/deep/f.txt", []byte("f"))
			wantContent(t, fsys, "/made/deep/f.txt", []byte("f"))
			del(t, fsys, "/made/deep/f.txt")
		}
	}
	intact()

	err = vfs.RemoveDir(ctx, fsys, "/src/nope/../missing")
	switch {
	case opts.readOnly():
		refused(`RemoveDir("/src/nope/../missing")`, err)
	case unsupported(err):
	default:
		wantError(t, `RemoveDir("/src/nope/../missing")`, err, vfs.ErrNotFound, "not found: /src/missing")
		for _, p := range []string{"/src", "/src/a.ts", "/"} {
			if err := vfs.RemoveDir(ctx, fsys, p); err == nil {
				t.Errorf("RemoveDir(%q) = nil error", p)
			}
		}
		wantKind(t, fsys, "/src", vfs.KindDir)
		if stat(t, fsys, "/made/deep").Kind == vfs.KindDir { // made above
			if err := vfs.RemoveDir(ctx, fsys, "/made"); err == nil {
				t.Errorf(`RemoveDir("/made") = nil error, but /made holds /made/deep`)
			}
			for _, p := range []string{"/made/deep/", "/made"} {
				if err := vfs.RemoveDir(ctx, fsys, p); err != nil {
					t.Errorf("RemoveDir(%q) failed: %v", p, err)
				}
				wantKind(t, fsys, p, vfs.KindMissing)
			}
			err := vfs.RemoveDir(ctx, fsys, "/made")
			wantError(t, fmt.Sprintf("RemoveDir(%q) again", "/made"), err, vfs.ErrNotFound, "not found: /made")
		}
	}
	intact()
}
