package vfstest

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/julyfs/julyfs/vfs"
)

// checkEveryPath checks vfs's rule for capabilities (the vfs package doc,
// "Capabilities of wrappers"): a tree offers a capability exactly when it
// honours it for every path it serves. It calls each method directly, not
// through its helper, at every seeded path and at a missing path beside
// each, so a union or an overlay is checked on every tree it is built
// from:
//
//   - ReadAt, OpenFile, Stage, WriteIf and Rename, whose helpers fall back
//     on the eight verbs for a tree without them, never answer
//     errors.ErrUnsupported: the helper would pass that on instead of
//     falling back;
//   - a Notifier reports a Write, and a Delete, of every path, not only of
//     the paths Capability/watch writes.
func checkEveryPath(t T, newFS NewFunc, opts Options) {
	files := fixture()
	fsys := newFS(t, files)
	ctx := t.Context()
	var targets []string
	if !opts.NoFiles {
		for _, p := range seedPaths(files) {
			targets = append(targets, p, vfs.Join(vfs.Parent(p), "vfstest-missing"))
		}
	}
	targets = append(targets, "/vfstest-missing")
	fellBack := func(helper, call string, err error) {
		t.Helper()
		if errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s = %v: the tree offers the method, so vfs.%s passes that on instead of falling back; "+
				"a wrapper calls vfs.%s on the tree that holds the path instead", call, err, helper, helper)
		}
	}
	for _, p := range targets {
		if rr, ok := fsys.(vfs.RangeReader); ok {
			_, err := rr.ReadAt(ctx, p, make([]byte, 4), 0)
			fellBack("ReadAt", fmt.Sprintf("ReadAt(%q)", p), err)
		}
		if fo, ok := fsys.(vfs.FileOpener); ok {
			r, err := fo.OpenFile(ctx, p)
			if err == nil {
				r.Close()
			}
			fellBack("OpenFile", fmt.Sprintf("OpenFile(%q)", p), err)
		}
		if st, ok := fsys.(vfs.Stager); ok {
			s, err := st.Stage(ctx, p, true)
			if err == nil {
				s.Abort()
			}
			fellBack("Stage", fmt.Sprintf("Stage(%q, keep)", p), err)
		}
		if cw, ok := fsys.(vfs.ConditionalWriter); ok {
			cond := vfs.Precondition{IfMatch: "vfstest: no such etag"}
			_, err := cw.WriteIf(ctx, p, []byte("x"), cond)
			call := fmt.Sprintf("WriteIf(%q, %+v)", p, cond)
			fellBack("WriteIf", call, err)
			if err == nil {
				t.Errorf("%s = nil error: a precondition no file meets wrote", call)
			}
		}
		if rn, ok := fsys.(vfs.Renamer); ok && vfs.Base(p) == "vfstest-missing" {
			to := vfs.Join(vfs.Parent(p), "vfstest-moved")
			fellBack("Rename", fmt.Sprintf("Rename(%q, %q)", p, to), rn.Rename(ctx, p, to))
		}
	}
	if opts.NoFiles {
		return
	}
	for _, p := range seedPaths(files) {
		wantContent(t, fsys, p, files[p]) // nothing above changed a file
	}

	n, ok := fsys.(vfs.Notifier)
	if !ok || opts.readOnly() {
		return
	}
	var mu sync.Mutex
	var got []vfs.Change
	cancel := n.Watch(func(c vfs.Change) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	})
	defer cancel()
	var want []vfs.Change
	for _, p := range seedPaths(files) {
		write(t, fsys, p, files[p])
		want = append(want, vfs.Change{Path: p, Op: vfs.ChangeWrite})
	}
	if !opts.NoDelete {
		for _, p := range seedPaths(files) {
			del(t, fsys, p)
			want = append(want, vfs.Change{Path: p, Op: vfs.ChangeDelete})
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var missed []vfs.Change
	for _, c := range want {
		if !slices.Contains(got, c) {
			missed = append(missed, c)
		}
	}
	if len(missed) > 0 {
		t.Errorf("Watch missed %+v: a Notifier reports the changes of every path it serves "+
			"(a wrapper is one only when every tree under it is)", missed)
	}
}
