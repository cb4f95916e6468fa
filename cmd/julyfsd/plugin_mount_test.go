package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/rootspec"
)

// TestMountBrokenPlugin: julyfs mount with a plugin mount whose binary
// does not exist mounts anyway and warns once; the other mount serves,
// and the broken mount answers EIO with the plugin's one line in the
// daemon's log.
func TestMountBrokenPlugin(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "a.txt"), []byte("served\n"), 0o644))
	nope := filepath.Join(t.TempDir(), "nope")
	dir := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	warnings := &lockedBuffer{}
	ctx := rootspec.WithWarn(context.Background(), func(msg string) { warnings.Write([]byte("warning: " + msg + "\n")) })
	r := startMountCtx(t, ctx, dir, "--mount", "/repo=local:"+src, "--mount", "/p=plugin:"+nope)

	line := "plugin nope: " + nope + " does not exist"
	assert.Equal(t, "warning: --mount /p=plugin:"+nope+": mount /p: "+line+" (the mount is bound; its calls answer this error until the plugin starts, which each call tries again after a backoff)\n", warnings.String())

	out, err := shell(t, `cat "$M/repo/a.txt"; if cat "$M/p/x.txt" 2>err; then echo read it; fi; cat err`, "M="+dir)
	require.NoError(t, err, out)
	assert.Equal(t, "served\ncat: "+dir+"/p/x.txt: Input/output error\n", out)
	log := r.stderr.String()
	assert.Contains(t, log, ": "+line+" (input/output error)", "the daemon's log names the plugin and the cause")
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		if strings.Contains(l, line) {
			assert.Contains(t, l, "/p", "the log line names the path: %q", l)
		}
	}
}
