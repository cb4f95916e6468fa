package fusemount

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// The tests of existing files that hold no data written in place
// (passthrough.go, ptDatalessSetup): on a local: tree mounted alone, with
// passthrough or without, a writer opening a file that is empty or only
// reserved space (fio's layout) without O_TRUNC writes the host file
// itself (by the kernel, or by the daemon), as for a new file; a file
// with data is still staged.

// inPlaceModes are the mounts that write dataless files in place: the
// default, with passthrough (skipped where the kernel cannot), and
// without passthrough (the daemon writes them).
var inPlaceModes = map[string]Options{"default": {}, "no-passthrough": {NoPassthrough: true}}

// skipNoPassthrough skips the test when opts asks for passthrough and the
// mount s could not get it.
func skipNoPassthrough(t *testing.T, s *Server, opts Options) {
	t.Helper()
	if !opts.NoPassthrough && !s.m.pt.Load() {
		t.Skip("passthrough unavailable here: " + fuseReason())
	}
}

// layOut makes a file of size bytes at host path that holds no data: its
// space reserved with fallocate, as fio lays out its files. It skips the
// test where the host filesystem reports reserved space as data.
func layOut(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Fallocate(int(f.Fd()), 0, 0, size))
	if _, err := unix.Seek(int(f.Fd()), 0, unix.SEEK_DATA); err != unix.ENXIO {
		t.Skipf("the host filesystem reports space reserved with fallocate as data (SEEK_DATA: %v)", err)
	}
}

// writeAt writes data at off of the open file f, failing the test
// otherwise.
func writeAt(t *testing.T, f *os.File, data string, off int64) {
	t.Helper()
	k, err := f.WriteAt([]byte(data), off)
	require.NoError(t, err)
	require.Equal(t, len(data), k)
}

// hostRead is the content of a host file.
func hostRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// waitReleased waits until the daemon has released every handle of the
// file name in the mount's root directory: a program's close returns
// before the kernel's RELEASE reaches the daemon, and an open meanwhile
// shares what the open handle does (a file written in place, say).
func waitReleased(t *testing.T, s *Server, name string) {
	t.Helper()
	waitHandles(t, s, name, func(n *node) bool { return n.opens > 0 || n.ptLive > 0 })
}

// waitWritersReleased waits until the daemon has released every writer's
// handle of the file name in the mount's root directory (readers may
// stay): a writer's release publishes what was written in place since
// the last check, whoever wrote it.
func waitWritersReleased(t *testing.T, s *Server, name string) {
	t.Helper()
	waitHandles(t, s, name, func(n *node) bool { return n.writers > 0 })
}

// waitHandles waits until busy, asked under the node's lock, says false
// of the node of the file name in the mount's root directory.
func waitHandles(t *testing.T, s *Server, name string, busy func(*node) bool) {
	t.Helper()
	ch := s.inv.root.GetChild(name)
	require.NotNil(t, ch, "%s is not in the mount's root", name)
	n := ch.Operations().(*node)
	deadline := time.Now().Add(toolTimeout)
	for {
		n.mu.Lock()
		busy := busy(n)
		n.mu.Unlock()
		if !busy {
			return
		}
		require.False(t, time.Now().After(deadline), "%s: handles not released after %v", name, toolTimeout)
		time.Sleep(time.Millisecond)
	}
}

// TestDatalessWrittenInPlace: a file laid out with fallocate and then
// opened O_RDWR through a local: mount, with passthrough and without (fio's pattern)
// is written in place: the host sees the writes before the close, the
// host inode stays, the writes are reported at the close and read back
// byte-exact. A file with data opened the same way is still staged: the
// host keeps the old content until the close, which renames a new file
// into place. An empty file opened O_WRONLY|O_APPEND is written in place;
// once it holds data, the next append is staged.
func TestDatalessWrittenInPlace(t *testing.T) {
	requireFUSE(t)
	for mode, opts := range inPlaceModes {
		t.Run(mode, func(t *testing.T) { testDatalessWrittenInPlace(t, opts) })
	}
}

func testDatalessWrittenInPlace(t *testing.T, opts Options) {
	root, s := localMount(t, map[string]string{"data.txt": "old\n", "empty": ""}, opts)
	skipNoPassthrough(t, s, opts)
	const size = 1 << 20
	laid := filepath.Join(root, "laid.dat")
	layOut(t, laid, size)
	var mu sync.Mutex
	var reported []string
	cancel, ok := vfs.Watch(s.m.fsys, func(c vfs.Change) {
		if c.Op == vfs.ChangeWrite {
			mu.Lock()
			reported = append(reported, c.Path)
			mu.Unlock()
		}
	})
	require.True(t, ok)
	t.Cleanup(cancel)
	reports := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), reported...)
	}

	// The laid-out file: in place.
	ino := hostIno(t, laid)
	f, err := os.OpenFile(filepath.Join(s.Dir(), "laid.dat"), os.O_RDWR, 0)
	require.NoError(t, err)
	writeAt(t, f, "hello", 0)
	writeAt(t, f, "middle", size/2)
	onHost := hostRead(t, laid)
	require.Len(t, onHost, size)
	assert.Equal(t, "hello", string(onHost[:5]), "the host sees the writes before the close")
	assert.Equal(t, "middle", string(onHost[size/2:size/2+6]))
	assert.Empty(t, reports(), "nothing reported before the close")
	require.NoError(t, f.Close())
	assert.Equal(t, []string{"/laid.dat"}, reports(), "the writes reported at the close")
	assert.Equal(t, ino, hostIno(t, laid), "written in place: the host inode stays")
	want := make([]byte, size)
	copy(want, "hello")
	copy(want[size/2:], "middle")
	got, err := os.ReadFile(filepath.Join(s.Dir(), "laid.dat"))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "read back through the mount: %d bytes", len(got))
	assert.True(t, bytes.Equal(want, hostRead(t, laid)), "the host file")
	assert.Equal(t, int64(1), s.m.ptDataless.Load(), "one file opened in place for holding no data")

	// A file with data: staged.
	data := filepath.Join(root, "data.txt")
	ino = hostIno(t, data)
	f, err = os.OpenFile(filepath.Join(s.Dir(), "data.txt"), os.O_RDWR, 0)
	require.NoError(t, err)
	writeAt(t, f, "NEW", 0)
	assert.Equal(t, "old\n", string(hostRead(t, data)), "a staged rewrite: the host keeps the old content until the close")
	require.NoError(t, f.Close())
	assert.Equal(t, "NEW\n", string(hostRead(t, data)))
	assert.NotEqual(t, ino, hostIno(t, data), "a staged rewrite renames a new file into place")

	// An empty file appended to: in place; then, with data, staged.
	empty := filepath.Join(root, "empty")
	ino = hostIno(t, empty)
	f, err = os.OpenFile(filepath.Join(s.Dir(), "empty"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("a\n")
	require.NoError(t, err)
	_, err = f.WriteString("b\n")
	require.NoError(t, err)
	assert.Equal(t, "a\nb\n", string(hostRead(t, empty)), "appended in place: seen before the close")
	require.NoError(t, f.Close())
	assert.Equal(t, ino, hostIno(t, empty), "appended in place: the host inode stays")
	waitReleased(t, s, "empty")
	f, err = os.OpenFile(filepath.Join(s.Dir(), "empty"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("c\n")
	require.NoError(t, err)
	assert.Equal(t, "a\nb\n", string(hostRead(t, empty)), "an append to a file with data is staged")
	require.NoError(t, f.Close())
	assert.Equal(t, "a\nb\nc\n", string(hostRead(t, empty)))
	assert.NotEqual(t, ino, hostIno(t, empty), "the staged append renamed into place")
	assert.Equal(t, "a\nb\nc\n", sh(t, `cat "$M/empty"`, "M="+s.Dir()))
	assert.Equal(t, int64(2), s.m.ptDataless.Load(), "two files opened in place for holding no data")
}

// TestDatalessReplacedFails: a file that held no data, written in place
// through the mount, then replaced on the host by another writer (a
// rename over it) before the close, keeps the other writer's version;
// the close fails with EIO, as a lost compare-and-swap does.
func TestDatalessReplacedFails(t *testing.T) {
	requireFUSE(t)
	for mode, opts := range inPlaceModes {
		t.Run(mode, func(t *testing.T) { testDatalessReplacedFails(t, opts) })
	}
}

func testDatalessReplacedFails(t *testing.T, opts Options) {
	root, s := localMount(t, map[string]string{"f": ""}, opts)
	skipNoPassthrough(t, s, opts)
	f, err := os.OpenFile(filepath.Join(s.Dir(), "f"), os.O_RDWR, 0)
	require.NoError(t, err)
	writeAt(t, f, "mine\n", 0)
	require.Equal(t, int64(1), s.m.ptDataless.Load(), "written in place")
	other := filepath.Join(root, "theirs")
	require.NoError(t, os.WriteFile(other, []byte("theirs\n"), 0o644))
	require.NoError(t, os.Rename(other, filepath.Join(root, "f")))
	err = f.Close()
	assert.ErrorIs(t, err, syscall.EIO, "the close of a writer whose file was replaced")
	assert.Equal(t, "theirs\n", string(hostRead(t, filepath.Join(root, "f"))), "the other writer's version stays")
}

// TestDatalessStagedElsewhere: on a union (even with passthrough), a
// laid-out file opened O_RDWR is staged: the host keeps the file as it was
// until the close, which renames a new file into place.
func TestDatalessStagedElsewhere(t *testing.T) {
	requireFUSE(t)
	mounts := map[string]func(t *testing.T, root string) *Server{
		"union": func(t *testing.T, root string) *Server {
			fsys, err := local.New(root)
			require.NoError(t, err)
			t.Cleanup(func() { fsys.Close() })
			u, err := union.New([]union.Mount{{Prefix: "/", FS: fsys}, {Prefix: "/notes", FS: temp.MustNew(nil)}})
			require.NoError(t, err)
			return mountT(t, u, Options{Passthrough: true})
		},
	}
	for name, mount := range mounts {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			laid := filepath.Join(root, "laid.dat")
			layOut(t, laid, 64<<10)
			s := mount(t, root)
			ino := hostIno(t, laid)
			f, err := os.OpenFile(filepath.Join(s.Dir(), "laid.dat"), os.O_RDWR, 0)
			require.NoError(t, err)
			writeAt(t, f, "hello", 0)
			assert.Equal(t, make([]byte, 64<<10), hostRead(t, laid), "staged: the host file unchanged before the close")
			require.NoError(t, f.Close())
			assert.NotEqual(t, ino, hostIno(t, laid), "staged: a new file renamed into place")
			want := make([]byte, 64<<10)
			copy(want, "hello")
			assert.Equal(t, want, hostRead(t, laid))
			assert.Zero(t, s.m.ptDataless.Load(), "no file opened in place")
		})
	}
}

// TestDatalessFioVerify: fio lays its file out (a create and a fallocate,
// both in place: one run with --create_only), then its job reopens the
// file O_RDWR, which holds no data, and writes it in place; it verifies
// what it wrote (crc32c), sequentially and at random.
func TestDatalessFioVerify(t *testing.T) {
	requireFUSE(t)
	requireTool(t, "fio")
	for mode, opts := range inPlaceModes {
		t.Run(mode, func(t *testing.T) { testDatalessFioVerify(t, opts) })
	}
}

func testDatalessFioVerify(t *testing.T, opts Options) {
	root, s := localMount(t, nil, opts)
	skipNoPassthrough(t, s, opts)
	layOut(t, filepath.Join(root, "probe"), 4096) // the host keeps reserved space as holes
	env := "M=" + s.Dir()
	for _, rw := range []string{"write", "randwrite"} {
		job := `fio --name=` + rw + ` --directory="$M" --rw=` + rw + ` --bs=64k --size=32M --fallocate=native --end_fsync=1 --verify=crc32c --do_verify=1 --output-format=terse --terse-version=3`
		sh(t, job+` --create_only=1`, env)
		waitReleased(t, s, rw+".0.0") // else the job's open shares the layout's (in place too)
		before := s.m.ptDataless.Load()
		out := sh(t, job, env)
		if f := strings.Split(strings.TrimSpace(out), ";"); len(f) < 5 || f[4] != "0" {
			assert.Failf(t, "fio failed", "fio %s: %s", rw, out)
		}
		assert.Greater(t, s.m.ptDataless.Load(), before, "fio %s: its job's open of the laid-out file was not written in place", rw)
		fi, err := os.Stat(filepath.Join(root, rw+".0.0"))
		if assert.NoError(t, err) {
			assert.Equal(t, int64(32<<20), fi.Size(), "fio's %s file on the host", rw)
		}
	}
}

// TestDatalessSurvivesKill: the server (with passthrough where the kernel
// has it; the daemon writes in place without it) is killed while
// one program writes an existing empty file (O_WRONLY, no O_TRUNC) and
// another an existing file with data the same way: the empty file holds
// what was written to it before the kill (written in place: it had no
// older contents), the file with data keeps its old content (its writes
// staged), and no temporary file is left.
func TestDatalessSurvivesKill(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "old.dat")
	require.NoError(t, os.WriteFile(old, oldContent(), 0o644))
	empty := filepath.Join(root, "empty.dat")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	s := startServer(t, root, "JULYFS_SERVE_PASSTHROUGH=on")
	// (Mode notrunc: the helper opens O_WRONLY, neither O_TRUNC nor O_CREAT.)
	_, stdinOld, outOld := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.dir, "old.dat"), "JULYFS_MODE=notrunc")
	require.Equal(t, "written", readLine(t, outOld))
	_, stdinEmpty, outEmpty := helper(t, "rewrite", "JULYFS_FILE="+filepath.Join(s.dir, "empty.dat"), "JULYFS_MODE=notrunc")
	require.Equal(t, "written", readLine(t, outEmpty))
	killServer(t, s)
	stdinOld.Close()
	stdinEmpty.Close()

	assert.True(t, bytes.Equal(hostRead(t, old), oldContent()), "the file with data after the kill: want the old 1 MiB")
	got := hostRead(t, empty)
	assert.True(t, bytes.Equal(got, bytes.Repeat([]byte("N"), 64<<10)), "the empty file after the kill: %d bytes, want the 64 KiB written in place", len(got))
	assert.Equal(t, []string{"empty.dat", "old.dat"}, namesIn(t, root), "no temporary file left")
}
