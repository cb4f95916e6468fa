package vfstest

import (
	"errors"
	"fmt"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// checkMeta checks the link and metadata capabilities (vfs.Symlinker,
// vfs.ModeSetter, vfs.TimeSetter, vfs.OwnerSetter, vfs.Linker) through their helpers: a tree without
// one answers errors.ErrUnsupported (a read-only tree, read-only mount)
// and changes nothing; a tree with them sets a modification time Stat
// then reports, sets a mode without touching the content, makes links
// that Readlink reads back and that Read follows inside the tree only,
// and fails on a missing path with not found.
func checkMeta(t T, newFS NewFunc, opts Options) {
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
	missing := func(call string, err error) {
		t.Helper()
		wantError(t, call, err, vfs.ErrNotFound, "not found: /missing")
	}

	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	call := fmt.Sprintf("SetModTime(%q, %v)", "/src/a.ts", when)
	err := vfs.SetModTime(ctx, fsys, "/src/a.ts", when)
	switch {
	case opts.readOnly():
		refused(call, err)
	case unsupported(err):
	case err != nil:
		t.Errorf("%s failed: %v", call, err)
	default:
		if st := stat(t, fsys, "/src/a.ts"); !st.ModTime.Equal(when) {
			t.Errorf("Stat(%q).ModTime = %v after %s", "/src/a.ts", st.ModTime, call)
		}
		missing(`SetModTime("/nope/../missing")`, vfs.SetModTime(ctx, fsys, "/nope/../missing", when))
	}
	intact()

	call = `SetMode("/src/b.js", 0700)`
	err = vfs.SetMode(ctx, fsys, "/src/b.js", 0o700)
	switch {
	case opts.readOnly():
		refused(call, err)
	case unsupported(err):
	case err != nil:
		t.Errorf("%s failed: %v", call, err)
	default:
		missing(`SetMode("/nope/../missing")`, vfs.SetMode(ctx, fsys, "/nope/../missing", 0o700))
	}
	intact()

	// SetOwner (vfs.OwnerSetter) to the owner and group Stat shows is
	// allowed to anyone and changes nothing; a missing path is not found.
	cur := stat(t, fsys, "/src/b.js")
	call = fmt.Sprintf(`SetOwner("/src/b.js", -1, %d)`, cur.GID)
	err = vfs.SetOwner(ctx, fsys, "/src/b.js", -1, int(cur.GID))
	switch {
	case opts.readOnly():
		refused(call, err)
	case unsupported(err):
	case err != nil:
		t.Errorf("%s failed: %v", call, err)
	default:
		if st := stat(t, fsys, "/src/b.js"); st.UID != cur.UID || st.GID != cur.GID {
			t.Errorf("Stat(%q) owner = %d:%d after %s, want %d:%d", "/src/b.js", st.UID, st.GID, call, cur.UID, cur.GID)
		}
		missing(`SetOwner("/nope/../missing")`, vfs.SetOwner(ctx, fsys, "/nope/../missing", -1, -1))
	}
	intact()

	// Link (vfs.Linker): a second name with the same content; a taken
	// name is refused; a missing file is not found.
	call = `Link("/src/a.ts", "/src/hard.ts")`
	err = vfs.Link(ctx, fsys, "/src/a.ts", "/src/hard.ts")
	switch {
	case opts.readOnly():
		refused(call, err)
		wantKind(t, fsys, "/src/hard.ts", vfs.KindMissing)
	case unsupported(err):
		wantKind(t, fsys, "/src/hard.ts", vfs.KindMissing)
	case err != nil:
		t.Errorf("%s failed: %v", call, err)
	default:
		wantContent(t, fsys, "/src/hard.ts", files["/src/a.ts"])
		if st := stat(t, fsys, "/src/hard.ts"); st.Nlink != 0 && st.Nlink != 2 {
			t.Errorf("Stat(%q).Nlink = %d after %s, want 2", "/src/hard.ts", st.Nlink, call)
		}
		if err := vfs.Link(ctx, fsys, "/src/a.ts", "/src/b.js"); err == nil {
			t.Errorf(`Link("/src/a.ts", "/src/b.js") over a file = nil error, want EEXIST`)
		}
		missing(`Link("/nope/../missing")`, vfs.Link(ctx, fsys, "/nope/../missing", "/src/m"))
		if err := fsys.Delete(ctx, "/src/hard.ts"); err != nil {
			t.Errorf(`Delete("/src/hard.ts") failed: %v`, err)
		}
	}
	intact()

	call = `Symlink("a.ts", "/src/lnk")`
	err = vfs.Symlink(ctx, fsys, "a.ts", "/src/lnk")
	switch {
	case opts.readOnly():
		refused(call, err)
		wantKind(t, fsys, "/src/lnk", vfs.KindMissing)
	case unsupported(err):
		wantKind(t, fsys, "/src/lnk", vfs.KindMissing)
	case err != nil:
		t.Errorf("%s failed: %v", call, err)
	default:
		if target, err := vfs.Readlink(ctx, fsys, "/src//lnk"); err != nil || target != "a.ts" {
			t.Errorf(`Readlink("/src//lnk") = %q, %v; want "a.ts"`, target, err)
		}
		wantContent(t, fsys, "/src/lnk", files["/src/a.ts"]) // followed inside the tree
		// Stat follows a link and says it is one (FileInfo.Link).
		if fi, err := fsys.Stat(ctx, "/src/lnk"); err != nil || !fi.Link || fi.Kind != vfs.KindFile {
			t.Errorf(`Stat("/src/lnk") = %+v, %v; want a file with Link set`, fi, err)
		}
		if fi, err := fsys.Stat(ctx, "/src/a.ts"); err != nil || fi.Link {
			t.Errorf(`Stat("/src/a.ts") = %+v, %v; a file is not a link`, fi, err)
		}
		if target, err := vfs.Readlink(ctx, fsys, "/src/a.ts"); err == nil {
			t.Errorf(`Readlink("/src/a.ts") = %q, nil error; a file is not a link`, target)
		}
		_, err := vfs.Readlink(ctx, fsys, "/nope/../missing")
		missing(`Readlink("/nope/../missing")`, err)
		if err := vfs.Symlink(ctx, fsys, "b.js", "/src/a.ts"); err == nil {
			t.Errorf(`Symlink("b.js", "/src/a.ts") over a file = nil error`)
		}
		// A link may point anywhere; following it never leaves the tree.
		out := "../../../../../../../../../../etc/passwd"
		if err := vfs.Symlink(ctx, fsys, out, "/src/out"); err != nil {
			t.Errorf("Symlink(%q, \"/src/out\") failed: %v", out, err)
		} else if data, err := fsys.Read(ctx, "/src/out"); !errors.Is(err, vfs.ErrNotFound) {
			t.Errorf(`Read("/src/out") through a link out of the tree = %s, %v; want not found`, short(data), err)
		} else if fi, err := fsys.Stat(ctx, "/src/out"); err != nil || !fi.Link || fi.Kind != vfs.KindMissing {
			t.Errorf(`Stat("/src/out") = %+v, %v; want missing with Link set`, fi, err)
		}
		if !opts.NoDelete {
			del(t, fsys, "/src/lnk")
			if _, err := vfs.Readlink(ctx, fsys, "/src/lnk"); !errors.Is(err, vfs.ErrNotFound) {
				t.Errorf(`Readlink("/src/lnk") after Delete = %v, want not found`, err)
			}
		}
	}
	intact()
}
