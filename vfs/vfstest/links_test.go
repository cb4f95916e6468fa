package vfstest_test

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// linksLeftOut lists only links to files, as List did before it listed
// every link.
type linksLeftOut struct{ *temp.FS }

func (l linksLeftOut) List(ctx context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
	return filtered(l.FS.List(ctx, p), func(e vfs.DirEntry) (vfs.DirEntry, bool) { return e, !e.SkipInWalk() })
}

// unmarkedLinks lists links without saying they are links.
type unmarkedLinks struct{ *temp.FS }

func (u unmarkedLinks) List(ctx context.Context, p string) iter.Seq2[vfs.DirEntry, error] {
	return filtered(u.FS.List(ctx, p), func(e vfs.DirEntry) (vfs.DirEntry, bool) {
		if e.Kind == vfs.KindMissing {
			return e, false
		}
		e.Link = false
		return e, true
	})
}

// globIntoLinks globs over a listing that hides links, so the walk
// descends into links to directories.
type globIntoLinks struct{ *temp.FS }

func (g globIntoLinks) Glob(ctx context.Context, pattern, dir string) iter.Seq2[vfs.DirEntry, error] {
	return vfs.Glob(ctx, unmarkedLinks(g), pattern, dir)
}

// noLinkTime sets a link's time but Stat never tells it.
type noLinkTime struct{ *temp.FS }

func (n noLinkTime) Stat(ctx context.Context, p string) (vfs.FileInfo, error) {
	fi, err := n.FS.Stat(ctx, p)
	fi.LinkModTime = fi.ModTime
	return fi, err
}

// danglingUndeletable refuses to delete a link that leads nowhere, as
// temp did before.
type danglingUndeletable struct{ *temp.FS }

func (d danglingUndeletable) Delete(ctx context.Context, p string) error {
	if fi, err := d.FS.Stat(ctx, p); err == nil && fi.Link && fi.Kind == vfs.KindMissing {
		return vfs.NotFound(vfs.Clean(p))
	}
	return d.FS.Delete(ctx, p)
}

// danglingUnmovable refuses to rename a link that leads nowhere, as temp
// did before.
type danglingUnmovable struct{ *temp.FS }

func (d danglingUnmovable) Rename(ctx context.Context, from, to string) error {
	if fi, err := d.FS.Stat(ctx, from); err == nil && fi.Link && fi.Kind == vfs.KindMissing {
		return vfs.NotFound(vfs.Clean(from))
	}
	return d.FS.Rename(ctx, from, to)
}

func filtered(seq iter.Seq2[vfs.DirEntry, error], keep func(vfs.DirEntry) (vfs.DirEntry, bool)) iter.Seq2[vfs.DirEntry, error] {
	return func(yield func(vfs.DirEntry, error) bool) {
		for e, err := range seq {
			if err != nil {
				yield(e, err)
				return
			}
			if e, ok := keep(e); ok && !yield(e, nil) {
				return
			}
		}
	}
}

// The links check passes on temp (every link listed) and on the reference
// (no links: nothing to check), and fails on each broken tree.
func TestLinksCheckCatches(t *testing.T) {
	for name, newFS := range map[string]func(map[string][]byte) (vfs.FileSystem, error){
		"reference": func(files map[string][]byte) (vfs.FileSystem, error) { return vfstest.NewReference(files), nil },
		"temp":      func(files map[string][]byte) (vfs.FileSystem, error) { return temp.New(files) },
	} {
		failures, found := runOne(t.Context(), "Capability/links", newFS, vfstest.Options{})
		require.True(t, found)
		assert.Empty(t, failures, name)
	}
	for name, wrap := range map[string]func(*temp.FS) vfs.FileSystem{
		"List leaves out links to directories and dangling ones": func(f *temp.FS) vfs.FileSystem { return linksLeftOut{f} },
		"List does not mark links":                               func(f *temp.FS) vfs.FileSystem { return unmarkedLinks{f} },
		"Glob descends into links":                               func(f *temp.FS) vfs.FileSystem { return globIntoLinks{f} },
		"Stat gives the target's time as the link's":             func(f *temp.FS) vfs.FileSystem { return noLinkTime{f} },
		"Delete refuses a dangling link":                         func(f *temp.FS) vfs.FileSystem { return danglingUndeletable{f} },
		"Rename refuses a dangling link":                         func(f *temp.FS) vfs.FileSystem { return danglingUnmovable{f} },
	} {
		t.Run(name, func(t *testing.T) {
			failures, _ := runOne(t.Context(), "Capability/links", func(files map[string][]byte) (vfs.FileSystem, error) {
				fsys, err := temp.New(files)
				return wrap(fsys), err
			}, vfstest.Options{})
			require.NotEmpty(t, failures, "check Capability/links passed on a tree that breaks it")
			t.Log(failures[0])
		})
	}
}
