package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMountNotifiesSystemd runs julyfs mount as a Type=notify unit would
// (NOTIFY_SOCKET names a datagram socket): READY=1 arrives once the mount
// answers, STOPPING=1 when it is stopped.
func TestMountNotifiesSystemd(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", sock)
	recv := func(what string) string {
		t.Helper()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second)))
		buf := make([]byte, 256)
		n, err := conn.Read(buf)
		require.NoError(t, err, "waiting for %s", what)
		return string(buf[:n])
	}

	src, dir := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644))
	r := startMount(t, dir, "--foreground", "--mount", "/=local:"+src)
	assert.Equal(t, "READY=1", recv("READY=1"))
	data, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "a\n", string(data))
	r.cancel()
	assert.Equal(t, "STOPPING=1", recv("STOPPING=1"))
	assert.Equal(t, 0, r.wait(t, "cancel"), "stderr: %s", r.stderr.String())
}
