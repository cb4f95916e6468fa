package plugins_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs/local"
)

// TestHostFileRead reads a host directory through a plugin whose tree
// hands out its open files (plugins.OSFile): a large file is read by the
// host from the plugin's descriptor, and every answer (contents and
// errors) is the one the same tree gives in process, whichever way the
// contents travel.
func TestHostFileRead(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 5<<20+17)
	_, err := rand.Read(big)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "edge.bin"), big[:256<<10], 0o644)) // the smallest handed over
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small.txt"), []byte("small\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub", "in.bin"), big[:1<<20], 0o644))
	require.NoError(t, os.Symlink("sub/in.bin", filepath.Join(dir, "link.bin")))
	outside := filepath.Join(t.TempDir(), "secret.bin")
	require.NoError(t, os.WriteFile(outside, big[:300<<10], 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "escape.bin")))

	in, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { in.Close() })
	paths := []string{"/big.bin", "/edge.bin", "/small.txt", "/sub/in.bin", "/link.bin", "/escape.bin", "/sub", "/missing.bin", "/sub/../big.bin"}

	for name, cfg := range map[string]plugins.Config{"HostFile": {}, "NoHostFile": {NoHostFile: true}} {
		t.Run(name, func(t *testing.T) {
			cfg.Args = map[string]string{"mode": "hostfiles", "dir": dir}
			fsys := open(t, cfg)
			for _, p := range paths {
				want, wantErr := in.Read(t.Context(), p)
				got, err := fsys.Read(t.Context(), p)
				if wantErr != nil {
					assert.EqualError(t, err, wantErr.Error(), p)
					continue
				}
				if assert.NoError(t, err, p) {
					assert.True(t, bytes.Equal(want, got), "%s: %d bytes, want %d", p, len(got), len(want))
				}
			}
			_, _, _, hostFile := plugins.Ways(fsys)
			if cfg.NoHostFile {
				assert.Zero(t, hostFile)
			} else {
				// big, edge, sub/in, link, sub/../big; not small, not escape.
				assert.Equal(t, int64(5), hostFile, "reads from the plugin's descriptor")
				assert.False(t, plugins.NoHostFile(fsys), "fell back from host files")
			}
		})
	}
}

// TestHostFileReplaced: a file replaced (renamed over) on the host
// between two reads is read anew: the host opens the plugin's descriptor
// of the file the plugin opened for this call.
func TestHostFileReplaced(t *testing.T) {
	dir := t.TempDir()
	fsys := open(t, plugins.Config{Args: map[string]string{"mode": "hostfiles", "dir": dir}})
	for i := range 3 {
		data := bytes.Repeat([]byte{byte('a' + i)}, 1<<20+i)
		tmp := filepath.Join(dir, ".tmp")
		require.NoError(t, os.WriteFile(tmp, data, 0o644))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "f.bin")))
		got, err := fsys.Read(t.Context(), "/f.bin")
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data, got), "version %d", i)
	}
	_, _, _, hostFile := plugins.Ways(fsys)
	assert.Equal(t, int64(3), hostFile)
}
