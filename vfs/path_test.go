package vfs_test

import (
	"path"
	"slices"
	"testing"

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
		if got := vfs.Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
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
		if got := vfs.HasPrefix(c.p, c.prefix); got != c.want {
			t.Errorf("HasPrefix(%q, %q) = %v, want %v", c.p, c.prefix, got, c.want)
		}
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
		if got, ok := vfs.Rel(c.p, c.dir); got != c.want || ok != c.ok {
			t.Errorf("Rel(%q, %q) = %q, %v, want %q, %v", c.p, c.dir, got, ok, c.want, c.ok)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, c := range []struct{ dir, child, want string }{
		{"/a", "b", "/a/b"}, {"/a", "/b", "/a/b"}, {"/", "b", "/b"}, {"/", "/b", "/b"}, {"/a", "", "/a"},
		{"/a", "/", "/a"}, {"/", "/", "/"}, {"/a", "../..", "/"}, {"/a", "b/../c", "/a/c"}, {"/a", "b/", "/a/b"},
		{"/a/b", "../c", "/a/c"}, {"/a", "./b//c", "/a/b/c"},
	} {
		if got := vfs.Join(c.dir, c.child); got != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.dir, c.child, got, c.want)
		}
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
		if got := vfs.Parent(c.p); got != c.parent {
			t.Errorf("Parent(%q) = %q, want %q", c.p, got, c.parent)
		}
		if got := vfs.Base(c.p); got != c.base {
			t.Errorf("Base(%q) = %q, want %q", c.p, got, c.base)
		}
		if got := vfs.Split(c.p); !slices.Equal(got, c.split) {
			t.Errorf("Split(%q) = %q, want %q", c.p, got, c.split)
		}
	}
}

// checkClean verifies the invariants of a normalized path.
func checkClean(t *testing.T, in, got string) {
	t.Helper()
	switch {
	case got == "" || got[0] != '/':
		t.Fatalf("Clean(%q) = %q, not absolute", in, got)
	case got != "/" && got[len(got)-1] == '/':
		t.Fatalf("Clean(%q) = %q, has a trailing slash", in, got)
	case vfs.Clean(got) != got:
		t.Fatalf("Clean(Clean(%q)) = %q, not idempotent (%q)", in, vfs.Clean(got), got)
	case got != path.Clean("/"+in):
		t.Fatalf("Clean(%q) = %q, want path.Clean's %q", in, got, path.Clean("/"+in))
	}
	for _, seg := range vfs.Split(got) {
		if seg == "" || seg == "." || seg == ".." {
			t.Fatalf("Clean(%q) = %q, holds segment %q (above / or unclean)", in, got, seg)
		}
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
		if ok != vfs.HasPrefix(p, dir) {
			t.Fatalf("Rel(%q, %q) ok = %v, HasPrefix = %v", p, dir, ok, !ok)
		}
		if ok {
			if got := vfs.Join(dir, rel); got != p {
				t.Fatalf("Join(%q, Rel(%q, %q) = %q) = %q", dir, p, dir, rel, got)
			}
			// A segment prefix is a string prefix ending at a separator.
			if dir != "/" && len(p) > len(dir) && p[len(dir)] != '/' {
				t.Fatalf("HasPrefix(%q, %q) across a segment", p, dir)
			}
		}
		if p != "/" {
			if !vfs.HasPrefix(p, vfs.Parent(p)) || vfs.Join(vfs.Parent(p), vfs.Base(p)) != p {
				t.Fatalf("Parent/Base of %q: %q, %q", p, vfs.Parent(p), vfs.Base(p))
			}
		}
		checkClean(t, a+"/"+b, vfs.Join(p, b))
	})
}
