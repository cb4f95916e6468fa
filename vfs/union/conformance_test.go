package union_test

import (
	"testing"

	"github.com/stretchr/testify/require"

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
		return conformanceUnion(t, files, func(_ string, files map[string][]byte) vfs.FileSystem {
			return tempTree(t, files)
		})
	}, vfstest.Options{})
}

// TestConformanceMixed runs the suite on a union whose mounts at /src and
// /conc are vfstest's Reference, a tree without a single optional
// capability, and whose others are temp trees: the union must honour each
// capability at every path, through the helpers' fallbacks where the
// mount has none, and must not be a Notifier.
func TestConformanceMixed(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		u := conformanceUnion(t, files, func(prefix string, files map[string][]byte) vfs.FileSystem {
			if prefix == "/src" || prefix == "/conc" {
				return vfstest.NewReference(files)
			}
			return tempTree(t, files)
		})
		_, ok := u.(vfs.Notifier)
		require.False(t, ok && (files["/src/a.ts"] != nil || files["/conc/shared"] != nil), "a union with a mount that is no Notifier is one")
		return u
	}, vfstest.Options{})
}

func tempTree(t *testing.T, files map[string][]byte) vfs.FileSystem {
	fsys, err := temp.New(files)
	require.NoError(t, err)
	return fsys
}

// conformanceUnion spreads files over mounts at conformancePrefixes and
// "/", each mount's tree built by child.
func conformanceUnion(t *testing.T, files map[string][]byte, child func(prefix string, files map[string][]byte) vfs.FileSystem) vfs.FileSystem {
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
		ms = append(ms, union.Mount{Prefix: prefix, FS: child(prefix, fs)})
	}
	require.False(t, len(ms) < 2 && len(files) > 3, "the fixture no longer reaches a mount: %v", files)
	u, err := union.New(ms)
	require.NoError(t, err)
	return u
}
