package vfstest_test

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// hostRoot is the reference with a host tree's Grep: a missing scope
// fails with not found.
type hostRoot struct{ *vfstest.Reference }

func (h hostRoot) Grep(ctx context.Context, q vfs.GrepQuery) iter.Seq2[vfs.GrepResult, error] {
	p := vfs.Clean(q.Path)
	if st, err := h.Stat(ctx, p); err == nil && st.Kind == vfs.KindMissing {
		return vfs.Fail[vfs.GrepResult](vfs.NotFound(p))
	}
	return h.Reference.Grep(ctx, q)
}

// The missing-scope rule follows Options.HostGrepRoot both ways: a host
// tree passes only when declared, the plain reference only when not.
func TestHostGrepRootChecked(t *testing.T) {
	host := func(files map[string][]byte) (vfs.FileSystem, error) {
		return hostRoot{vfstest.NewReference(files)}, nil
	}
	plainRef := func(files map[string][]byte) (vfs.FileSystem, error) { return vfstest.NewReference(files), nil }
	for _, check := range []string{"Grep/scope", "Normalize/walks"} {
		failures, found := runOne(t.Context(), check, host, vfstest.Options{HostGrepRoot: true})
		require.True(t, found, check)
		assert.Empty(t, failures, "%s on a declared host tree", check)
		failures, _ = runOne(t.Context(), check, host, vfstest.Options{})
		assert.NotEmpty(t, failures, "%s passed a host tree's failing grep where nothing is due", check)
		failures, _ = runOne(t.Context(), check, plainRef, vfstest.Options{HostGrepRoot: true})
		assert.NotEmpty(t, failures, "%s passed a tree declared a host tree whose grep yields nothing", check)
	}
}
