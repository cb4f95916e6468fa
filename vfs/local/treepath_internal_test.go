package local

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTreePath: the host watch maps host paths under its root to tree
// paths, including for a root of "/" (whose paths do not continue it
// with another "/"), and refuses paths beside the root.
func TestTreePath(t *testing.T) {
	for _, c := range []struct {
		root, host, want string
		ok               bool
	}{
		{"/srv/x", "/srv/x", "/", true},
		{"/srv/x", "/srv/x/a", "/a", true},
		{"/srv/x", "/srv/x/a/b.go", "/a/b.go", true},
		{"/srv/x", "/srv/xy", "", false},
		{"/srv/x", "/srv", "", false},
		{"/srv/x", "/other/a", "", false},
		{"/", "/", "/", true},
		{"/", "/a", "/a", true},
		{"/", "/a/b.go", "/a/b.go", true},
	} {
		hw := &HostWatch{root: c.root}
		got, ok := hw.treePath(c.host)
		assert.Equal(t, c.ok, ok, "%s under %s", c.host, c.root)
		assert.Equal(t, c.want, got, "%s under %s", c.host, c.root)
	}
}
