package vfs_test

import (
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
)

func TestClean(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "/"}, {"/", "/"}, {".", "/"}, {"..", "/"}, {"/..", "/"}, {"/../..", "/"}, {"//", "/"}, {"/./", "/"},
		{"a", "/a"}, {"./a", "/a"}, {"a/..", "/"}, {"a/b/", "/a/b"}, {"/a//b", "/a/b"}, {"/a/./b", "/a/b"},
		{"/a/b/..", "/a"}, {"/a/../../b", "/b"}, {"/a/b/../../..", "/"}, {"../../etc/passwd", "/etc/passwd"},
		{"/...", "/..."}, {"/a/.../b", "/a/.../b"}, {"/a/.b", "/a/.b"}, {"/a/..b", "/a/..b"}, {"/a/b.", "/a/b."},
		{"/a b/c", "/a b/c"}, {`\a`, `/\a`}, {"/a/b", "/a/b"}, {"/agent-tools/", "/agent-tools"},
	} {
		assert.Equal(t, c.want, vfs.Clean(c.in), "Clean(%q)", c.in)
	}
}

func TestHasPrefix(t *testing.T) {
	for _, c := range []struct {
		p, prefix string
		want      bool
	}{
		{"/agent/skills", "/agent", true}, {"/agent", "/agent", true}, {"/agent-tools", "/agent", false},
		{"/agent-tools/x", "/agent", false}, {"/agentx", "/agent", false}, {"/x", "/", true}, {"/", "/", true},
		{"/", "/a", false}, {"/a/b/c", "/a/b", true}, {"/a/bc", "/a/b", false}, {"/b", "/a", false},
	} {
		assert.Equal(t, c.want, vfs.HasPrefix(c.p, c.prefix), "HasPrefix(%q, %q)", c.p, c.prefix)
	}
}

func TestRel(t *testing.T) {
	for _, c := range []struct {
		p, dir, want string
		ok           bool
	}{
		{"/a/b", "/a", "b", true}, {"/a/b/c", "/a", "b/c", true}, {"/a", "/a", "", true}, {"/a", "/", "a", true},
		{"/", "/", "", true}, {"/ab", "/a", "", false}, {"/b", "/a", "", false}, {"/", "/a", "", false},
	} {
		got, ok := vfs.Rel(c.p, c.dir)
		assert.Equal(t, c.want, got, "Rel(%q, %q)", c.p, c.dir)
		assert.Equal(t, c.ok, ok, "Rel(%q, %q) ok", c.p, c.dir)
	}
}

func TestJoin(t *testing.T) {
	for _, c := range []struct{ dir, child, want string }{
		{"/a", "b", "/a/b"}, {"/a", "/b", "/a/b"}, {"/", "b", "/b"}, {"/", "/b", "/b"}, {"/a", "", "/a"},
		{"/a", "/", "/a"}, {"/", "/", "/"}, {"/a", "../..", "/"}, {"/a", "b/../c", "/a/c"}, {"/a", "b/", "/a/b"},
		{"/a/b", "../c", "/a/c"}, {"/a", "./b//c", "/a/b/c"},
	} {
		assert.Equal(t, c.want, vfs.Join(c.dir, c.child), "Join(%q, %q)", c.dir, c.child)
	}
}

func TestParentBaseSplit(t *testing.T) {
	for _, c := range []struct {
		p, parent, base string
		split           []string
	}{
		{"/", "/", "", nil},
		{"/a", "/", "a", []string{"a"}},
		{"/a/b", "/a", "b", []string{"a", "b"}},
		{"/a b/c.d/e", "/a b/c.d", "e", []string{"a b", "c.d", "e"}},
	} {
		assert.Equal(t, c.parent, vfs.Parent(c.p), "Parent(%q)", c.p)
		assert.Equal(t, c.base, vfs.Base(c.p), "Base(%q)", c.p)
		assert.Equal(t, c.split, vfs.Split(c.p), "Split(%q)", c.p)
	}
}

// checkClean verifies the invariants of a normalized path.
func checkClean(t *testing.T, in, got string) {
	t.Helper()
	require.True(t, got != "" && got[0] == '/', "Clean(%q) = %q, not absolute", in, got)
	require.False(t, got != "/" && got[len(got)-1] == '/', "Clean(%q) = %q, has a trailing slash", in, got)
	require.Equal(t, got, vfs.Clean(got), "Clean(Clean(%q)) not idempotent", in)
	require.Equal(t, path.Clean("/"+in), got, "Clean(%q), want path.Clean's", in)
	for _, seg := range vfs.Split(got) {
		require.NotContains(t, []string{"", ".", ".."}, seg, "Clean(%q) = %q, holds a segment above / or unclean", in, got)
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "/", "..", "/a/../..", "a//b/./c/", "/agent-tools", "/.../..", "../../etc/passwd", "//x//", "\x00/..", "a/b/c/../../../../d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		checkClean(t, in, vfs.Clean(in))
	})
}

// FuzzPathAlgebra checks HasPrefix, Rel, Join and Parent against each
// other on any two normalized paths.
func FuzzPathAlgebra(f *testing.F) {
	f.Add("/agent/skills", "/agent")
	f.Add("/agent-tools", "/agent")
	f.Add("/a", "/")
	f.Add("/", "/a")
	f.Add("a/b/../c", "a")
	f.Fuzz(func(t *testing.T, a, b string) {
		p, dir := vfs.Clean(a), vfs.Clean(b)
		rel, ok := vfs.Rel(p, dir)
		require.Equal(t, vfs.HasPrefix(p, dir), ok, "Rel(%q, %q) ok disagrees with HasPrefix", p, dir)
		if ok {
			require.Equal(t, p, vfs.Join(dir, rel), "Join(%q, Rel(%q, %q) = %q)", dir, p, dir, rel)
			// A segment prefix is a string prefix ending at a separator.
			if dir != "/" && len(p) > len(dir) {
				require.Equal(t, byte('/'), p[len(dir)], "HasPrefix(%q, %q) across a segment", p, dir)
			}
		}
		if p != "/" {
			require.True(t, vfs.HasPrefix(p, vfs.Parent(p)), "Parent of %q: %q, not a prefix", p, vfs.Parent(p))
			require.Equal(t, p, vfs.Join(vfs.Parent(p), vfs.Base(p)), "Parent/Base of %q: %q, %q", p, vfs.Parent(p), vfs.Base(p))
		}

		checkClean(t, a+"/"+b, vfs.Join(p, b))
	})
}
