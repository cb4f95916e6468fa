package fusemount

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNegativeEntriesCached: on a watched local: mount with the default
// timeouts, a name looked up and not found is not asked of the tree again
// (the kernel caches its absence); a file another program then makes
// under that name on the host, and one made after the mount dropped
// everything it cached (lost host events), show through the mount at
// once.
func TestNegativeEntriesCached(t *testing.T) {
	root, fsys, s := hostWatchedMount(t, map[string]string{"d/keep.txt": "k\n"})
	env := "M=" + s.Dir()
	probe := `for i in 1 2 3; do test -e "$M/d/x" || echo missing; done`
	before := fsys.n.Load()
	assert.Equal(t, "missing\nmissing\nmissing\n", sh(t, probe, env))
	assert.LessOrEqual(t, fsys.n.Load()-before, int64(2), "Stats of a missing name looked up three times (and of d)")

	require.NoError(t, os.WriteFile(filepath.Join(root, "d/x"), []byte("theirs\n"), 0o644))
	eventually(t, "a file made on the host under a name cached as missing", `cat "$M/d/x" 2>&1 || true`, "theirs\n", env)

	// Everything cached dropped (as after an inotify overflow): the
	// negative entries of every directory go with it.
	assert.Equal(t, "missing\n", sh(t, `test -e "$M/d/y" || echo missing`, env))
	d := s.inv.root.GetChild("d")
	require.NotNil(t, d)
	dn := d.Operations().(*node)
	negs := func() int {
		dn.mu.Lock()
		defer dn.mu.Unlock()
		_, ok := dn.negs["y"]
		return map[bool]int{true: 1}[ok] + 10*len(dn.negs)
	}
	require.Equal(t, 11, negs(), "y, and y alone (x exists now), remembered as cached missing")
	s.inv.invalidateTree(d)
	assert.Zero(t, negs(), "negative entries remembered after the mount dropped what the kernel caches")
	assert.Equal(t, "missing\n", sh(t, `test -e "$M/d/y" || echo missing`, env))
}
