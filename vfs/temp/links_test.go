package temp_test

import (
	"iter"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

func drain[T any](t *testing.T, seq iter.Seq2[T, error]) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

func entryPaths(es []vfs.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

// TestLinks: links live in memory and are followed inside the tree by
// the exact-path verbs, listed as files when they lead to one, replaced
// by Write and removed by Delete; following one never leaves the tree.
func TestLinks(t *testing.T) {
	ctx := t.Context()
	fsys := temp.MustNew(map[string]string{"/d/f.txt": "f\n", "/top.txt": "top\n"})
	for path, target := range map[string]string{
		"/rel": "d/f.txt", "/abs": "/d/f.txt", "/dlink": "d", "/d/up": "../top.txt",
		"/climb": "../../../../top.txt", "/dangling": "nothing", "/loop": "loop", "/etc": "/etc/passwd",
	} {
		require.NoError(t, fsys.Symlink(ctx, target, path), path)
	}
	read := func(p string) string {
		t.Helper()
		data, err := fsys.Read(ctx, p)
		require.NoError(t, err, p)
		return string(data)
	}
	assert.Equal(t, "f\n", read("/rel"))
	assert.Equal(t, "f\n", read("/abs"))
	assert.Equal(t, "f\n", read("/dlink/f.txt"))
	assert.Equal(t, "top\n", read("/d/up"))
	assert.Equal(t, "top\n", read("/climb"), ".. above the root stays at the root")
	for _, p := range []string{"/dangling", "/loop", "/etc"} {
		_, err := fsys.Read(ctx, p)
		assert.ErrorIs(t, err, vfs.ErrNotFound, p)
		st, err := fsys.Stat(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, vfs.KindMissing, st.Kind, p)
	}
	st, err := fsys.Stat(ctx, "/dlink")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindDir, st.Kind)
	// List shows every link with what it leads to; walks keep links to
	// files only and never descend into one.
	assert.Equal(t, []vfs.DirEntry{
		{Path: "/abs", Kind: vfs.KindFile, Link: true}, {Path: "/climb", Kind: vfs.KindFile, Link: true},
		{Path: "/d", Kind: vfs.KindDir}, {Path: "/dangling", Kind: vfs.KindMissing, Link: true},
		{Path: "/dlink", Kind: vfs.KindDir, Link: true}, {Path: "/etc", Kind: vfs.KindMissing, Link: true},
		{Path: "/loop", Kind: vfs.KindMissing, Link: true}, {Path: "/rel", Kind: vfs.KindFile, Link: true},
		{Path: "/top.txt", Kind: vfs.KindFile},
	}, drain(t, fsys.List(ctx, "/")))
	assert.Equal(t, []string{"/abs", "/climb", "/d", "/d/f.txt", "/d/up", "/rel", "/top.txt"}, entryPaths(drain(t, fsys.Glob(ctx, "**", "/"))))
	assert.Equal(t, []string{"/dlink/f.txt", "/dlink/up"}, entryPaths(drain(t, fsys.List(ctx, "/dlink"))))
	hits := drain(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "top"}))
	require.Len(t, hits, 3)
	assert.Equal(t, []string{"/climb", "/d/up", "/top.txt"}, []string{hits[0].Path, hits[1].Path, hits[2].Path})

	target, err := fsys.Readlink(ctx, "/dlink/up")
	require.NoError(t, err)
	assert.Equal(t, "../top.txt", target)
	_, err = fsys.Readlink(ctx, "/top.txt")
	assert.ErrorIs(t, err, syscall.EINVAL)
	assert.ErrorIs(t, fsys.Symlink(ctx, "x", "/top.txt"), syscall.EEXIST)

	// Writes go through a directory link; a link at the end is replaced.
	require.NoError(t, fsys.Write(ctx, "/dlink/new.txt", []byte("new")))
	assert.Equal(t, "new", read("/d/new.txt"))
	require.NoError(t, fsys.Write(ctx, "/rel", []byte("replaced")))
	assert.Equal(t, "f\n", read("/d/f.txt"), "a write at a link does not write through it")
	_, err = fsys.Readlink(ctx, "/rel")
	assert.ErrorIs(t, err, syscall.EINVAL, "the link is now a file")
	// Delete removes the link, not its target; through a directory link
	// it removes the file in the target directory.
	require.NoError(t, fsys.Delete(ctx, "/abs"))
	assert.Equal(t, "f\n", read("/d/f.txt"))
	require.NoError(t, fsys.Delete(ctx, "/dlink/new.txt"))
	st, err = fsys.Stat(ctx, "/d/new.txt")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindMissing, st.Kind)
	_, err = fsys.Readlink(ctx, "/dlink")
	assert.NoError(t, err, "the directory link survives deletes through it")
	// Rename moves a link itself, a dangling one too.
	require.NoError(t, fsys.Rename(ctx, "/d/up", "/moved-up"))
	target, err = fsys.Readlink(ctx, "/moved-up")
	require.NoError(t, err)
	assert.Equal(t, "../top.txt", target)
	assert.Equal(t, "top\n", read("/moved-up"), ".. from / is / again")
	require.NoError(t, fsys.Rename(ctx, "/dangling", "/d/still-dangling"))
	target, err = fsys.Readlink(ctx, "/d/still-dangling")
	require.NoError(t, err)
	assert.Equal(t, "nothing", target)
	_, err = fsys.Readlink(ctx, "/dangling")
	assert.ErrorIs(t, err, vfs.ErrNotFound)
	// Delete removes a link itself whatever it leads to, as unlink(2).
	require.NoError(t, fsys.Delete(ctx, "/d/still-dangling"))
	require.NoError(t, fsys.Delete(ctx, "/dlink"))
	st, err = fsys.Stat(ctx, "/d")
	require.NoError(t, err)
	assert.Equal(t, vfs.KindDir, st.Kind, "deleting a link to a directory keeps the directory")
	assert.Equal(t, []string{"/climb", "/d", "/etc", "/loop", "/moved-up", "/rel", "/top.txt"}, entryPaths(drain(t, fsys.List(ctx, "/"))))
}

// TestLinkOwnTime: Stat of a link gives the link's own time besides its
// target's; SetLinkModTime sets only the link's.
func TestLinkOwnTime(t *testing.T) {
	ctx := t.Context()
	fsys := temp.MustNew(map[string]string{"/f": "f"})
	require.NoError(t, fsys.Symlink(ctx, "f", "/l"))
	require.NoError(t, fsys.Symlink(ctx, "nothing", "/dangling"))
	target := time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)
	own := time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC)
	require.NoError(t, fsys.SetModTime(ctx, "/f", target))
	require.NoError(t, fsys.SetLinkModTime(ctx, "/l", own))
	require.NoError(t, fsys.SetLinkModTime(ctx, "/dangling", own))
	st, err := fsys.Stat(ctx, "/l")
	require.NoError(t, err)
	assert.True(t, st.ModTime.Equal(target), "ModTime is the target's: %v", st.ModTime)
	assert.True(t, st.LinkModTime.Equal(own), "LinkModTime is the link's own: %v", st.LinkModTime)
	st, err = fsys.Stat(ctx, "/dangling")
	require.NoError(t, err)
	assert.True(t, st.LinkModTime.Equal(own))
	st, err = fsys.Stat(ctx, "/f")
	require.NoError(t, err)
	assert.True(t, st.LinkModTime.IsZero(), "a file has no link time")
}

// TestModeAndTime: SetModTime shows in Stat (links followed); both fail on
// a missing path; a union routes them to the mount.
func TestModeAndTime(t *testing.T) {
	ctx := t.Context()
	fsys := temp.MustNew(map[string]string{"/d/f.txt": "f"})
	require.NoError(t, fsys.Symlink(ctx, "d/f.txt", "/l"))
	when := time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC)
	require.NoError(t, fsys.SetModTime(ctx, "/l", when))
	st, err := fsys.Stat(ctx, "/d/f.txt")
	require.NoError(t, err)
	assert.True(t, st.ModTime.Equal(when))
	require.NoError(t, fsys.SetModTime(ctx, "/d", when))
	st, err = fsys.Stat(ctx, "/d")
	require.NoError(t, err)
	assert.True(t, st.ModTime.Equal(when))
	require.NoError(t, fsys.SetMode(ctx, "/d/f.txt", 0o755))
	assert.ErrorIs(t, fsys.SetMode(ctx, "/nope", 0o755), vfs.ErrNotFound)
	assert.ErrorIs(t, fsys.SetModTime(ctx, "/nope", when), vfs.ErrNotFound)

	u, err := union.New([]union.Mount{{Prefix: "/m", FS: fsys}, {Prefix: "/other", FS: temp.MustNew(nil)}})
	require.NoError(t, err)
	require.NoError(t, vfs.Symlink(ctx, u, "f.txt", "/m/d/g"))
	data, err := u.Read(ctx, "/m/d/g")
	require.NoError(t, err)
	assert.Equal(t, "f", string(data))
	target, err := vfs.Readlink(ctx, u, "/m/d/g")
	require.NoError(t, err)
	assert.Equal(t, "f.txt", target)
	assert.ErrorIs(t, vfs.SetModTime(ctx, u, "/m/nope", when), vfs.ErrNotFound)
	assert.EqualError(t, vfs.SetModTime(ctx, u, "/m/nope", when), "not found: /m/nope")
	_, err = vfs.Readlink(ctx, u, "/m")
	assert.ErrorIs(t, err, syscall.EINVAL, "a mount point is not a link")
}
