package rootspec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSeedAliasesBounded: a YAML alias used as seed contents is refused
// (one anchor referenced many times multiplied its size in memory), and
// seeds reached through an aliased mapping are capped in total.
func TestSeedAliasesBounded(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	var b strings.Builder
	fmt.Fprintf(&b, "mounts:\n  /:\n    temp:\n      /anchor.txt: &big %s\n", big)
	for i := range 400 {
		fmt.Fprintf(&b, "      /copy%d.txt: *big\n", i)
	}
	_, err := Parse([]byte(b.String()), "root.yaml", t.TempDir())
	require.Error(t, err)
	assert.Equal(t, "root.yaml:5: /: temp: /copy0.txt: a YAML alias (*big) is not allowed as seed contents; write the contents out", err.Error())

	// An anchored seed mapping of 1 MiB reused by 100 mounts: 100 MiB.
	b.Reset()
	fmt.Fprintf(&b, "mounts:\n  /m0:\n    temp: &seed\n      /a.txt: %s\n", big)
	for i := 1; i < 100; i++ {
		fmt.Fprintf(&b, "  /m%d:\n    temp: *seed\n", i)
	}
	_, err = Parse([]byte(b.String()), "root.yaml", t.TempDir())
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("temp: seed contents total more than %d bytes (at /a.txt): put large files in a local: tree", MaxSeedBytes))

	// Aliases elsewhere (a whole entry) and small reuse stay legal.
	tab, err := Parse([]byte("mounts:\n  /a:\n    temp: &s\n      /x.txt: hi\n  /b:\n    temp: *s\n"), "root.yaml", t.TempDir())
	require.NoError(t, err)
	require.Len(t, tab, 2)
	assert.Equal(t, "hi", string(tab[1].Spec.Files["/x.txt"]))
}
