package full

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/vfs/index"
)

// TestDefaults checks that the defaults julyfs's help shows for the heavy
// commands' flags are the ones fusemount and vfs/index use.
func TestDefaults(t *testing.T) {
	assert.Equal(t, fusemount.DefaultEntryTimeout, julyfscli.DefaultEntryTimeout, "julyfscli.DefaultEntryTimeout vs fusemount's")
	assert.Equal(t, fusemount.DefaultAttrTimeout, julyfscli.DefaultAttrTimeout, "julyfscli.DefaultAttrTimeout vs fusemount's")
	assert.Equal(t, index.DefaultMaxFileSize, julyfscli.DefaultMaxFileSize, "julyfscli.DefaultMaxFileSize vs index's")
}

// TestHeavy checks that every heavy command has an implementation, so
// julyfsd never hands one on.
func TestHeavy(t *testing.T) {
	h := Heavy()
	assert.NotNil(t, h.Mount, "full.Heavy().Mount")
	assert.NotNil(t, h.Unmount, "full.Heavy().Unmount")
	assert.NotNil(t, h.IndexBuild, "full.Heavy().IndexBuild")
	assert.NotNil(t, h.IndexFollow, "full.Heavy().IndexFollow")
	assert.NotNil(t, h.OpenIndex, "full.Heavy().OpenIndex")
}

// run runs julyfs with the heavy commands built in, as julyfsd does.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = julyfscli.Run(t.Context(), append([]string{"julyfsd"}, args...), nil, &out, &errb, Heavy())
	return code, out.String(), errb.String()
}

// TestIndexSyncAndTree: search --index takes --sync=auto|always|never (a
// bad value is a usage error) and refuses an index built for other
// mounts, naming both.
func TestIndexSyncAndTree(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(a, "x.go"), []byte("func Alpha() {}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(b, "y.go"), []byte("func Bravo() {}\n"), 0o644))
	idx := filepath.Join(t.TempDir(), "idx")

	code, out, errOut := run(t, "index", "build", "--mount", "/repo=local:"+a, "--index", idx)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1 files: 1 indexed")

	for _, mode := range []string{"auto", "always", "never"} {
		code, out, errOut = run(t, "search", "--mount", "/repo=local:"+a, "--index", idx, "--sync="+mode, "alpha")
		assert.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "/repo/x.go", mode)
	}
	code, _, errOut = run(t, "search", "--mount", "/repo=local:"+a, "--index", idx, "--sync=sometimes", "alpha")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `sync mode "sometimes": want auto, always or never`)

	code, _, errOut = run(t, "search", "--mount", "/repo=local:"+b, "--index", idx, "bravo")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, `was built for the tree "/repo=local:`+a+`", not for "/repo=local:`+b+`"`)
	assert.Contains(t, errOut, "--rebuild")

	code, out, errOut = run(t, "search", "--mount", "/repo=local:"+b, "--index", idx, "--rebuild", "bravo")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "/repo/y.go")
}
