package fusemount

import (
	"context"
	iofs "io/fs"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs/temp"
)

// duringSetMode is a temp: tree (every capability of *temp.FS, Watch
// included) that runs other, in another goroutine, while the mount's
// chmod of a path is in flight: another program (an agent tool) using
// the tree's API at that moment.
type duringSetMode struct {
	*temp.FS
	other atomic.Pointer[func()] // run once, by the next SetMode
}

func (d *duringSetMode) SetMode(ctx context.Context, p string, mode iofs.FileMode) error {
	if f := d.other.Swap(nil); f != nil {
		done := make(chan struct{})
		go func() { defer close(done); (*f)() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	}
	return d.FS.SetMode(ctx, p, mode)
}

// TestForeignChangeDuringOwnChmodReachesKernel: a change another program
// makes through the tree's API to a file while the mount's own chmod of
// that file is in flight is still sent to the kernel. Here the other
// program deletes the file; the chmod then fails, so no SETATTR reply
// carries anything, and the name must not stay in the kernel's caches
// for ObservedTimeout (an hour).
func TestForeignChangeDuringOwnChmodReachesKernel(t *testing.T) {
	requireFUSE(t)
	fsys := &duringSetMode{FS: temp.MustNew(map[string]string{"/f": "x\n", "/g": "g\n"})}
	s := mountT(t, fsys, Options{})
	env := "M=" + s.Dir()
	require.Equal(t, "f\ng\n", sh(t, `ls "$M"; stat "$M/f" >/dev/null`, env))
	s.Settle()

	del := func() { assert.NoError(t, fsys.FS.Delete(context.Background(), "/f")) }
	fsys.other.Store(&del)
	_, _, err := shErr(t, `chmod 600 "$M/f"`, env)
	assert.Error(t, err, "chmod of a file deleted meanwhile")
	s.Settle()

	assert.Eventually(t, func() bool {
		_, err := os.Lstat(s.Dir() + "/f")
		return os.IsNotExist(err)
	}, 3*time.Second, 50*time.Millisecond, "the deleted file still shows through the mount")
	assert.Equal(t, "g\n", sh(t, `ls "$M"`, env), "listing after the delete")
}

// TestForeignWriteDuringOwnChmodReachesReader: a rewrite another program
// makes through the tree's API while the mount's own chmod of the file
// is in flight reaches a reader that has the file open, as a rewrite at
// any other moment does (the kernel's pages of the old content dropped).
func TestForeignWriteDuringOwnChmodReachesReader(t *testing.T) {
	requireFUSE(t)
	fsys := &duringSetMode{FS: temp.MustNew(map[string]string{"/f": "old\n"})}
	s := mountT(t, fsys, Options{})
	env := "M=" + s.Dir()
	f, err := os.Open(s.Dir() + "/f")
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	buf := make([]byte, 4)
	_, err = f.ReadAt(buf, 0)
	require.NoError(t, err)
	require.Equal(t, "old\n", string(buf))
	s.Settle()

	write := func() { assert.NoError(t, fsys.FS.Write(context.Background(), "/f", []byte("new\n"))) }
	fsys.other.Store(&write)
	sh(t, `chmod 600 "$M/f"`, env)
	s.Settle()
	assert.Eventually(t, func() bool {
		_, err := f.ReadAt(buf, 0)
		return err == nil && string(buf) == "new\n"
	}, 3*time.Second, 50*time.Millisecond, "the open reader still reads the old content")
}
