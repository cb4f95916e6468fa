package checkpoint_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/local"
)

// TestShellWritesCheckpointed: what a shell does on a FUSE mount of the
// layer (rewrites, sed -i, rm -rf && mkdir) is in the next checkpoint,
// and a file still open for writing is not: a checkpoint holds committed
// files only.
func TestShellWritesCheckpointed(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if _, err := exec.LookPath("fusermount3"); err != nil && os.Geteuid() != 0 {
		t.Skip("not root and no fusermount3")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	baseDir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(baseDir, "d/sub"), 0o755))
	for p, s := range map[string]string{"a.txt": "one\ntwo\n", "d/x.txt": "x\n", "d/sub/y.txt": "y\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(baseDir, p), []byte(s), 0o644))
	}
	base, err := local.New(baseDir)
	require.NoError(t, err)
	defer base.Close()
	ses := t.TempDir()
	c, err := cow.Open(base, filepath.Join(ses, checkpoint.LayerDir))
	require.NoError(t, err)
	defer c.Close()
	mnt := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(mnt, 0o755))
	srv, err := fusemount.Mount(mnt, c.Tree(), fusemount.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		if srv.Unmount() != nil {
			srv.UnmountLazy()
		}
	})
	sh := func(script string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, "sh", "-c", script).CombinedOutput()
		require.NoError(t, err, "%s: %s", script, out)
		return string(out)
	}
	sh(`cd "` + mnt + `" && sed -i s/two/TWO/ a.txt && rm -rf d && mkdir d && echo new > d/n.txt && echo b > b.txt`)

	// A writer that has written but not closed.
	// (Not a shell: its redirections close a duplicate of the descriptor,
	// which flushes, and a flush commits.)
	half := exec.CommandContext(ctx, "python3", "-c", `import os, sys
fd = os.open(sys.argv[1] + "/half.txt", os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b"part")
print("ready", flush=True)
sys.stdin.read()`, mnt)
	stdin, err := half.StdinPipe()
	require.NoError(t, err)
	stdout, err := half.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, half.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "ready\n", line)

	_, es, err := checkpoint.Take(c, ses, 1, "t1", nil)
	require.NoError(t, err)
	stdin.Close()
	require.NoError(t, half.Wait())
	_, es2, err := checkpoint.Take(c, ses, 2, "t2", es)
	require.NoError(t, err)
	closed := false
	for _, e := range es2 {
		if e.Path == "/half.txt" {
			closed = e.Size == 4
		}
	}
	assert.True(t, closed, "the file, once closed, is in the next checkpoint whole")
	byPath := map[string]cow.Entry{}
	for _, e := range es {
		byPath[e.Path] = e
	}
	assert.Equal(t, cow.TypeFile, byPath["/a.txt"].Type)
	assert.Equal(t, cow.TypeFile, byPath["/b.txt"].Type)
	assert.Equal(t, cow.TypeFile, byPath["/d/n.txt"].Type)
	assert.True(t, byPath["/d"].Opaque, "/d is opaque: %+v", byPath["/d"])
	if e, ok := byPath["/half.txt"]; ok {
		assert.Zero(t, e.Size, "a checkpoint holds no part of a file being written: %+v", e)
	}
	data, err := c.Read(ctx, "/a.txt")
	require.NoError(t, err)
	assert.Equal(t, "one\nTWO\n", string(data))
	d, err := checkpoint.Diff(ctx, base, filepath.Join(ses, checkpoint.LayerDir), nil, es)
	require.NoError(t, err)
	var names []string
	for _, f := range d {
		names = append(names, f.Status+" "+f.Path)
	}
	assert.Subset(t, names, []string{"modified /a.txt", "added /b.txt", "added /d/n.txt", "deleted /d/sub/y.txt", "deleted /d/x.txt"})
}
