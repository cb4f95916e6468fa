package vfstest

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/julyfs/julyfs/vfs"
)

// checkLinks checks how a tree with links (vfs.Symlinker) shows them to
// the walking verbs: List yields every link, as ls does, with
// DirEntry.Link set and Kind what the link leads to inside the tree
// (KindMissing when it dangles); Stat agrees and gives the link's own
// time where the tree can set it (vfs.LinkTimeSetter); Glob and Grep
// never descend into a link and keep only links to files; Delete removes
// a link itself whatever it leads to, and Rename (vfs.Renamer) moves a
// dangling one. A tree without links is left to checkMeta.
func checkLinks(t T, newFS NewFunc, opts Options) {
	if opts.readOnly() {
		return // checkMeta checks the refusal
	}
	fsys := newFS(t, fixture())
	ctx := t.Context()
	links := [][2]string{{"nested", "/src/dlink"}, {"a.ts", "/src/flink"}, {"nothing-here", "/src/gone"}, {"..", "/src/up"}}
	for _, l := range links {
		err := vfs.Symlink(ctx, fsys, l[0], l[1])
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return
		case err != nil:
			t.Errorf("Symlink(%q, %q) failed: %v", l[0], l[1], err)
			return
		}
	}
	f := func(p string) vfs.DirEntry { return vfs.DirEntry{Path: p, Kind: vfs.KindFile} }
	d := func(p string) vfs.DirEntry { return vfs.DirEntry{Path: p, Kind: vfs.KindDir} }
	link := func(e vfs.DirEntry) vfs.DirEntry { e.Link = true; return e }
	want := []vfs.DirEntry{f("/src/a.ts"), f("/src/b.js"), link(d("/src/dlink")), link(f("/src/flink")),
		link(vfs.DirEntry{Path: "/src/gone", Kind: vfs.KindMissing}), d("/src/nested"), link(d("/src/up"))}
	if got := mustEntries(t, listCall("/src"), fsys.List(ctx, "/src")); !slices.Equal(got, want) {
		t.Errorf("%s = %+v, want %+v: every link, with what it leads to", listCall("/src"), got, want)
	}
	for _, e := range want {
		if st := stat(t, fsys, e.Path); st.Link != e.Link || st.Kind != e.Kind {
			t.Errorf("Stat(%q) = %+v; want Kind %v, Link %v as List says", e.Path, st, e.Kind, e.Link)
		}
	}
	// A link's own time, where the tree sets one.
	when := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	switch err := vfs.SetLinkModTime(ctx, fsys, "/src/gone", when); {
	case errors.Is(err, errors.ErrUnsupported):
	case err != nil:
		t.Errorf(`SetLinkModTime("/src/gone") failed: %v`, err)
	default:
		if st := stat(t, fsys, "/src/gone"); !st.LinkModTime.Equal(when) {
			t.Errorf(`Stat("/src/gone").LinkModTime = %v after SetLinkModTime(%v)`, st.LinkModTime, when)
		}
		if err := vfs.SetLinkModTime(ctx, fsys, "/src/flink", when); err != nil {
			t.Errorf(`SetLinkModTime("/src/flink") failed: %v`, err)
		} else if st := stat(t, fsys, "/src/flink"); !st.LinkModTime.Equal(when) || st.ModTime.Equal(when) {
			t.Errorf(`Stat("/src/flink") = %+v after SetLinkModTime(%v): want the link's time in LinkModTime only`, st, when)
		}
	}
	// Walks: links to files only, never into a link.
	wantGlob := []string{"/src/a.ts", "/src/b.js", "/src/flink", "/src/nested", "/src/nested/c.ts", "/src/nested/deep", "/src/nested/deep/d.ts"}
	if got := pathsOf(mustEntries(t, globCall("**", "/src"), fsys.Glob(ctx, "**", "/src"))); !slices.Equal(got, wantGlob) {
		if len(got) > 12 { // a walk that follows links: say so briefly
			got = append(got[:12:12], fmt.Sprintf("... (%d in all)", len(got)))
		}
		t.Errorf("%s = %q, want %q: no walk into a link", globCall("**", "/src"), got, wantGlob)
	}
	q := vfs.GrepQuery{Pattern: "TODO", Path: "/src"}
	var grepped []string
	for _, h := range mustGrep(t, grepCall(q), fsys.Grep(ctx, q)) {
		if !slices.Contains(grepped, h.Path) {
			grepped = append(grepped, h.Path)
		}
	}
	if want := []string{"/src/a.ts", "/src/b.js", "/src/flink", "/src/nested/c.ts"}; !slices.Equal(grepped, want) {
		t.Errorf("%s hit %q, want %q", grepCall(q), grepped, want)
	}
	if opts.NoDelete {
		return
	}
	// Rename moves a dangling link itself.
	if _, ok := fsys.(vfs.Renamer); ok {
		if err := vfs.Rename(ctx, fsys, "/src/gone", "/src/moved"); err != nil {
			t.Errorf(`Rename("/src/gone", "/src/moved") of a dangling link failed: %v`, err)
		} else {
			if target, err := vfs.Readlink(ctx, fsys, "/src/moved"); err != nil || target != "nothing-here" {
				t.Errorf(`Readlink("/src/moved") = %q, %v after the rename; want "nothing-here"`, target, err)
			}
			if st := stat(t, fsys, "/src/gone"); st.Kind != vfs.KindMissing || st.Link {
				t.Errorf(`Stat("/src/gone") = %+v after the rename; want nothing`, st)
			}
			if err := vfs.Rename(ctx, fsys, "/src/moved", "/src/gone"); err != nil {
				t.Errorf(`Rename("/src/moved", "/src/gone") failed: %v`, err)
			}
		}
	}
	// Delete removes a link itself, whatever it leads to.
	for _, p := range []string{"/src/gone", "/src/dlink", "/src/up", "/src/flink"} {
		if err := fsys.Delete(ctx, p); err != nil {
			t.Errorf("Delete(%q) of a link failed: %v", p, err)
		}
	}
	want = []vfs.DirEntry{f("/src/a.ts"), f("/src/b.js"), d("/src/nested")}
	if got := mustEntries(t, listCall("/src"), fsys.List(ctx, "/src")); !slices.Equal(got, want) {
		t.Errorf("%s = %+v after deleting the links, want %+v", listCall("/src"), got, want)
	}
	wantContent(t, fsys, "/src/nested/c.ts", fixture()["/src/nested/c.ts"])
	if st := stat(t, fsys, "/src/a.ts"); st.Kind != vfs.KindFile {
		t.Errorf(`Stat("/src/a.ts") = %+v after deleting a link to it`, st)
	}
}
