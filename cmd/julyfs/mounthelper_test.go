package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/internal/mountinfo"
)

// TestMountHelperFstab installs julyfs as mount(8)'s helper in /sbin (as
// root; removed afterwards), mounts a directory through an fstab line
// (mount --fstab FILE DIR, which reads the line as /etc/fstab's would be)
// and through mount -t fuse.julyfs, uses the mounts with shell tools, and
// takes them away with umount.
func TestMountHelperFstab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("installs into /sbin and mounts with mount(8): root only")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	for _, tool := range []string{"mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	helper := filepath.Join("/sbin", julyfscli.HelperName)
	if _, err := os.Lstat(helper); err == nil {
		t.Skipf("%s exists already: not replaced by a test", helper)
	}
	julyfs, julyfsd := built(t)
	// julyfs finds julyfsd beside itself; mount(8) gives the helper no
	// JULYFSD of ours to rely on.
	bin := t.TempDir()
	for _, p := range []string{julyfs, julyfsd} {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(bin, filepath.Base(p)), data, 0o755))
	}
	self := filepath.Join(bin, "julyfs")
	out, err := exec.Command(self, "install-helper", "--dir", "/sbin").CombinedOutput()
	require.NoError(t, err, "install-helper: %s", out)
	t.Cleanup(func() { os.Remove(helper) })
	assert.Equal(t, helper+" -> "+self+"\n", string(out))

	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "hello.txt"), []byte("hello from the host\n"), 0o644))
	logs := t.TempDir()

	run := func(name string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		return string(out), err
	}
	unmounted := func(dir string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for julyfscli.IsJulyfsMount(dir) {
			require.True(t, time.Now().Before(deadline), "%s still mounted 30s after umount", dir)
			time.Sleep(20 * time.Millisecond)
		}
	}
	cleanupMount := func(dir string) {
		t.Cleanup(func() {
			if julyfscli.IsJulyfsMount(dir) {
				syscall.Unmount(dir, syscall.MNT_DETACH)
			}
		})
	}

	// An fstab line, read-only, options as an administrator writes them.
	mnt := t.TempDir()
	cleanupMount(mnt)
	fstab := filepath.Join(t.TempDir(), "fstab")
	line := src + "  " + mnt + "  fuse.julyfs  ro,allow_other,_netdev,noauto,log=" + filepath.Join(logs, "ro.log") + "  0 0\n"
	require.NoError(t, os.WriteFile(fstab, []byte("# test fstab\n"+line), 0o644))
	out2, err := run("mount", "--fstab", fstab, mnt)
	require.NoError(t, err, "mount --fstab: %s", out2)
	m, ok, err := mountinfo.At(mnt)
	require.NoError(t, err)
	require.True(t, ok, "mounted")
	assert.Equal(t, "fuse.julyfs", m.Type)
	assert.Equal(t, src, m.Source, "the source column is the fstab's source")
	assert.True(t, strings.HasPrefix(m.Options, "ro"), "mounted read-only: %s", m.Options)
	data, err := os.ReadFile(filepath.Join(mnt, "hello.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello from the host\n", string(data))
	err = os.WriteFile(filepath.Join(mnt, "new.txt"), []byte("x"), 0o644)
	assert.ErrorIs(t, err, syscall.EROFS)
	out2, err = run("umount", mnt)
	require.NoError(t, err, "umount: %s", out2)
	unmounted(mnt)

	// mount -t with a tree named by options: the source is only a name.
	mnt2 := t.TempDir()
	cleanupMount(mnt2)
	out2, err = run("mount", "-t", "fuse.julyfs", "agent", mnt2, "-o",
		"mount=/=temp:,mount=/host=local:"+src+",log="+filepath.Join(logs, "rw.log"))
	require.NoError(t, err, "mount -t: %s", out2)
	m, _, _ = mountinfo.At(mnt2)
	assert.Equal(t, "agent", m.Source)
	require.NoError(t, os.WriteFile(filepath.Join(mnt2, "note.md"), []byte("in memory\n"), 0o644))
	data, err = os.ReadFile(filepath.Join(mnt2, "host", "hello.txt"))
	require.NoError(t, err)
	assert.Equal(t, "hello from the host\n", string(data))
	ls, err := run("ls", mnt2)
	require.NoError(t, err)
	assert.Equal(t, "host\nnote.md\n", ls)
	out2, err = run("umount", mnt2)
	require.NoError(t, err, "umount: %s", out2)
	unmounted(mnt2)

	// A bad option: mount fails at once, saying which, and nothing is
	// mounted.
	out2, err = run("mount", "-t", "fuse.julyfs", src, mnt2, "-o", "bogus")
	require.Error(t, err)
	assert.Contains(t, out2, `unknown option "bogus"`)
	assert.False(t, julyfscli.IsJulyfsMount(mnt2))
	// A tree that cannot be opened: the mount's own error comes back.
	out2, err = run("mount", "-t", "fuse.julyfs", "x", mnt2, "-o", "mount=/=local:/nonexistent/dir,log="+filepath.Join(logs, "bad.log"))
	require.Error(t, err)
	assert.Contains(t, out2, "julyfs mount failed")
	assert.Contains(t, out2, "/nonexistent/dir")
	assert.False(t, julyfscli.IsJulyfsMount(mnt2))
}
