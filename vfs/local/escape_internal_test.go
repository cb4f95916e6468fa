package local

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEscapeErrorKnown pins how os.Root reports a name that leaves the
// root: an error value isEscape recognizes by identity. If a Go release
// changes that, links with an absolute target inside the root stop being
// followed and escapes stop reading as missing; this test says so first.
func TestEscapeErrorKnown(t *testing.T) {
	require.NotNil(t, rootEscapeErr(), "os.Root gave no error for a name that leaves the root")
	r, err := os.OpenRoot(t.TempDir())
	require.NoError(t, err)
	defer r.Close()
	for _, name := range []string{"..", "../x", "../../x"} {
		_, err := r.Stat(name)
		assert.True(t, isEscape(err), "os.Root.Stat(%q) = %v: not recognized as an escape", name, err)
		assert.True(t, isMissing(err), "an escape reads as missing")
	}
	_, err = r.Stat("nope")
	assert.False(t, isEscape(err), "a missing name is no escape")
	assert.False(t, isEscape(nil))
}
