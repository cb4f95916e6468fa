package plugins_test

import (
	"bytes"
	"crypto/rand"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// TestFUSEMount mounts a plugin's tree through FUSE, beside a temp tree,
// and uses it with the os package: listing, reading (a file large
// enough to be read by range), writing, and a plugin crash that leaves
// the other mount serving.
func TestFUSEMount(t *testing.T) {
	_, err := os.Stat("/dev/fuse")
	require.NoError(t, err, "FUSE tests need /dev/fuse")

	big := make([]byte, 9<<20)
	_, err = rand.Read(big)
	require.NoError(t, err)
	pfs := open(t, plugins.Config{Args: map[string]string{"mode": "faults"}})
	require.NoError(t, pfs.Write(t.Context(), "/big.bin", big))
	notes, err := temp.New(map[string][]byte{"/n.md": []byte("note\n")})
	require.NoError(t, err)
	u, err := union.New([]union.Mount{{Prefix: "/p", FS: pfs}, {Prefix: "/notes", FS: notes}})
	require.NoError(t, err)

	dir := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	srv, err := fusemount.Mount(dir, u, fusemount.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		done := make(chan error, 1)
		go func() { done <- srv.Unmount() }()
		select {
		case err := <-done:
			if err != nil {
				srv.UnmountLazy()
			}
		case <-time.After(20 * time.Second):
			srv.UnmountLazy()
			assert.Fail(t, "unmount did not finish within 20s")
		}
	})

	names := func(p string) []string {
		es, err := os.ReadDir(p)
		require.NoError(t, err)
		var out []string
		for _, e := range es {
			out = append(out, e.Name())
		}
		return out
	}
	assert.Equal(t, []string{"notes", "p"}, names(dir))
	assert.Equal(t, []string{"a.txt", "big.bin"}, names(filepath.Join(dir, "p")))

	data, err := os.ReadFile(filepath.Join(dir, "p", "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "a\n", string(data))
	data, err = os.ReadFile(filepath.Join(dir, "p", "big.bin"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(big, data), "9 MiB through FUSE and the plugin differs")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "w.txt"), []byte("written\n"), 0o644))
	got, err := pfs.Read(t.Context(), "/w.txt")
	require.NoError(t, err)
	assert.Equal(t, "written\n", string(got))

	// Kill the plugin: its mount fails (EIO or similar), the other serves,
	// and the plugin comes back on the next call.
	require.NoError(t, syscall.Kill(pidOf(t, pfs), syscall.SIGKILL))
	data, err = os.ReadFile(filepath.Join(dir, "notes", "n.md"))
	require.NoError(t, err)
	assert.Equal(t, "note\n", string(data))
	require.Eventually(t, func() bool {
		_, err := os.ReadFile(filepath.Join(dir, "p", "a.txt"))
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "the plugin's mount serves again after a restart")
}
