package union_test

import (
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// conformancePrefixes are where the conformance union mounts children,
// besides "/": a prefix is mounted when a seeded file is under it, and
// that file goes to the mount's child instead of the root's.
var conformancePrefixes = []string{"/src", "/docs", "/big/d03", "/conc"}

// TestConformance runs the suite on a union of several temp trees, one at
// "/", with the seeded files spread across them by prefix.
func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		parts := map[string]map[string][]byte{"/": {}}
		for p, data := range files {
			prefix := "/"
			for _, c := range conformancePrefixes {
				if vfs.HasPrefix(vfs.Clean(p), c) {
					prefix = c
				}
			}
			if parts[prefix] == nil {
				parts[prefix] = map[string][]byte{}
			}
			rel, _ := vfs.Rel(vfs.Clean(p), prefix)
			parts[prefix]["/"+rel] = data
		}
		var ms []union.Mount
		for prefix, fs := range parts {
			child, err := temp.New(fs)
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, union.Mount{Prefix: prefix, FS: child})
		}
		if len(ms) < 2 && len(files) > 3 {
			t.Fatalf("the fixture no longer reaches a mount: %v", files)
		}
		u, err := union.New(ms)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}, vfstest.Options{})
}
