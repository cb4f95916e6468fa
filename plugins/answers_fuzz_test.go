package plugins

import (
	"path"
	"strings"
	"testing"

	"github.com/julyfs/julyfs/vfs"
)

// FuzzPluginAnswers checks the host's check of a plugin's List, Glob and
// Stat answers against an oracle built on package path: a listing passes
// exactly when every entry is a clean absolute path, a child of the
// prefix (List) or under the dir (Glob), in strictly increasing order;
// a Stat passes exactly when it names the path asked for with a size not
// below 0.
func FuzzPluginAnswers(f *testing.F) {
	f.Add("/d", "/d/a\n/d/b", int64(0))
	f.Add("/d", "/d/b\n/d/a", int64(1))
	f.Add("/d", "/d/a\n/d/a", int64(-1))
	f.Add("/", "/../../etc/passwd", int64(5))
	f.Add("/d", "/d/./a\n/d//b\n/d/a/", int64(3))
	f.Add("/d", "/d/a/b\n/dd/a\n/d", int64(2))
	f.Add("/", "/a\n/a-b\n/a/b", int64(7))
	f.Fuzz(func(t *testing.T, prefix, answer string, size int64) {
		prefix = vfs.Clean(prefix)
		clean := func(p string) bool { return strings.HasPrefix(p, "/") && path.Clean(p) == p }
		lines := strings.Split(answer, "\n")
		for _, children := range []bool{true, false} {
			k := newGlobCheck(prefix)
			if children {
				k = newListCheck(prefix)
			}
			want, last := -1, ""
			for i, p := range lines {
				ok := clean(p) && (i == 0 || p > last)
				if children {
					ok = ok && p != "/" && path.Dir(p) == prefix
				} else {
					ok = ok && p != prefix && (prefix == "/" || strings.HasPrefix(p, prefix+"/"))
				}
				if !ok {
					want = i
					break
				}
				last = p
			}
			got := -1
			for i, p := range lines {
				if err := k.check(vfs.DirEntry{Path: p, Kind: vfs.KindFile}); err != nil {
					got = i
					break
				}
			}
			if got != want {
				t.Fatalf("check (children %v) of %q under %q first refused entry %d, want %d", children, lines, prefix, got, want)
			}
		}
		asked := lines[0]
		if !clean(asked) {
			asked = prefix
		}
		for _, p := range []string{asked, lines[len(lines)-1]} {
			err := checkStat(asked, vfs.FileInfo{Path: p, Kind: vfs.KindFile, Size: size})
			if want := p == asked && size >= 0; (err == nil) != want {
				t.Fatalf("checkStat(%q, {Path: %q, Size: %d}) = %v, want ok %v", asked, p, size, err, want)
			}
		}
	})
}
