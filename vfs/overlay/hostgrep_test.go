package overlay_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/overlay"
	"github.com/julyfs/julyfs/vfs/temp"
)

func localLayer(t *testing.T, files map[string]string) vfs.FileSystem {
	t.Helper()
	dir := t.TempDir()
	for p, data := range files {
		host := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(host), 0o755))
		require.NoError(t, os.WriteFile(host, []byte(data), 0o644))
	}
	fsys, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// A host layer without a grep's scope holds nothing there and is not a
// downed layer (no warning); when every layer is a host tree without it,
// the overlay's grep is "not found", as a host tree's own is; a virtual
// layer still makes a missing scope yield nothing.
func TestGrepMissingHostScope(t *testing.T) {
	ctx := t.Context()
	var logs bytes.Buffer
	opts := overlay.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	upper := localLayer(t, map[string]string{"/only/up.txt": "needle up\n"})
	lower := localLayer(t, map[string]string{"/other/low.txt": "needle low\n"})
	o := overlay.NewWithOptions(opts, upper, lower)

	hits, err := collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "needle", Path: "/only"}))
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "/only/up.txt", hits[0].Path)
	assert.Empty(t, logs.String(), "a layer without the scope was logged as down")

	_, err = collect(o.Grep(ctx, vfs.GrepQuery{Pattern: "needle", Path: "/nowhere"}))
	assert.EqualError(t, err, "not found: /nowhere")

	withVirtual := overlay.NewWithOptions(opts, upper, temp.MustNew(nil))
	hits, err = collect(withVirtual.Grep(ctx, vfs.GrepQuery{Pattern: "needle", Path: "/nowhere"}))
	assert.NoError(t, err)
	assert.Empty(t, hits)
	assert.Empty(t, logs.String())
}
