package fusemount

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

// statCounter counts the Stat calls that reach the tree: every LOOKUP and
// GETATTR the kernel sends the mount is one.
type statCounter struct {
	vfs.FileSystem
	n atomic.Int64
}

func (c *statCounter) Stat(ctx context.Context, p string) (vfs.FileInfo, error) {
	c.n.Add(1)
	return c.FileSystem.Stat(ctx, p)
}

func (c *statCounter) Watch(fn func(vfs.Change)) func() {
	cancel, _ := vfs.Watch(c.FileSystem, fn)
	return cancel
}

// TestCachedStatStaysInKernel: within the entry and attribute timeouts,
// stat of names the kernel has looked up (a file from the tree, a file
// created and written through the mount, a directory) is answered from the
// kernel's caches, with no request reaching the daemon, as for go-fuse's
// loopback. The timeouts are an hour, so no timing matters.
func TestCachedStatStaysInKernel(t *testing.T) {
	fsys := &statCounter{FileSystem: temp.MustNew(map[string]string{"/d/a.txt": "one\n"})}
	hour := time.Hour
	s := mountT(t, fsys, Options{EntryTimeout: hour, AttrTimeout: hour})
	env := []string{"M=" + s.Dir()}
	// Look the names up, and write one file through the mount: the write
	// drops the kernel's attributes of that file, the stat after it asks
	// for them again.
	sh(t, `echo hi > "$M/d/new.txt"; echo more >> "$M/d/new.txt"; stat "$M/d/a.txt" "$M/d/new.txt" "$M/d" >/dev/null`, env...)
	before := fsys.n.Load()
	got := sh(t, `for i in $(seq 50); do stat -c '%n %s %h' "$M/d/a.txt" "$M/d/new.txt" "$M/d"; done`, env...)
	assert.Zero(t, fsys.n.Load()-before, "Stat calls that reached the tree for 150 cached stats")
	once := s.Dir() + "/d/a.txt 4 1\n" + s.Dir() + "/d/new.txt 8 1\n" + s.Dir() + "/d 4096 2\n"
	assert.Equal(t, strings.Repeat(once, 50), got, "stat output")
}

// TestNlinkAfterMkdirRmdir: a directory's link count follows mkdir, rmdir
// and rename of a subdirectory through the mount at once, although the
// count is cached for the attribute timeout (an hour here).
func TestNlinkAfterMkdirRmdir(t *testing.T) {
	fsys := temp.MustNew(map[string]string{"/d/s1/a.txt": "one\n", "/e/x.txt": "x\n"})
	hour := time.Hour
	s := mountT(t, fsys, Options{EntryTimeout: hour, AttrTimeout: hour})
	env := []string{"M=" + s.Dir()}
	got := sh(t, `stat -c %h "$M/d" "$M/e"; mkdir "$M/d/s2"; stat -c %h "$M/d"; mv "$M/d/s2" "$M/e/s2"; stat -c %h "$M/d" "$M/e"; rmdir "$M/e/s2"; stat -c %h "$M/e"`, env...)
	assert.Equal(t, "3\n2\n4\n3\n3\n2\n", got, "link counts (d, e; mkdir d/s2: d; mv to e: d, e; rmdir: e)")
}

// TestHostChangesBehindLocalMount edits the host directory of a local:
// mount behind the daemon's back: once the (short) timeouts pass, the
// mount shows the new listing and contents, although the kernel caches
// listings (FOPEN_CACHE_DIR) and pages (FOPEN_KEEP_CACHE).
func TestHostChangesBehindLocalMount(t *testing.T) {
	const timeout = 200 * time.Millisecond
	root, s := localMount(t, map[string]string{"d/a.txt": "one\n", "d/b.txt": "bee\n"},
		Options{EntryTimeout: timeout, AttrTimeout: timeout})
	env := "M=" + s.Dir()
	require.Equal(t, "a.txt\nb.txt\none\n", sh(t, `ls "$M/d"; cat "$M/d/a.txt"; cat "$M/d/a.txt" >/dev/null`, env))

	require.NoError(t, os.WriteFile(filepath.Join(root, "d", "new.txt"), []byte("new\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "d", "a.txt"), []byte("two, longer\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(root, "d", "b.txt")))
	time.Sleep(3 * timeout)
	assert.Equal(t, "a.txt\nnew.txt\ntwo, longer\n", sh(t, `ls "$M/d"; cat "$M/d/a.txt"`, env))
}

// TestAPIWriteSeenAtOnceLocal: a write through the API of a local: tree is
// seen through the mount at once (after Settle), with hour-long caches.
func TestAPIWriteSeenAtOnceLocal(t *testing.T) {
	_, s := localMount(t, map[string]string{"d/a.txt": "one\n"}, Options{EntryTimeout: time.Hour, AttrTimeout: time.Hour})
	env := "M=" + s.Dir()
	require.Equal(t, "a.txt\none\n", sh(t, `ls "$M/d"; cat "$M/d/a.txt"`, env))
	tree := s.m.fsys
	require.NoError(t, tree.Write(context.Background(), "/d/a.txt", []byte("two, longer\n")))
	require.NoError(t, tree.Write(context.Background(), "/d/c.txt", []byte("see\n")))
	s.Settle()
	assert.Equal(t, "a.txt\nc.txt\ntwo, longer\n", sh(t, `ls "$M/d"; cat "$M/d/a.txt"`, env))
}

// readCounter counts the reads that reach the tree.
type readCounter struct {
	vfs.FileSystem
	n atomic.Int64
}

func (c *readCounter) Read(ctx context.Context, p string) ([]byte, error) {
	c.n.Add(1)
	return c.FileSystem.Read(ctx, p)
}

func (c *readCounter) Watch(fn func(vfs.Change)) func() {
	cancel, _ := vfs.Watch(c.FileSystem, fn)
	return cancel
}

func (c *readCounter) OpenFile(ctx context.Context, p string) (vfs.FileReader, error) {
	c.n.Add(1)
	return vfs.OpenFile(ctx, c.FileSystem, p)
}

// TestReadOnlyNoOpen: a read-only mount answers OPEN with ENOSYS, so the
// kernel keeps a file's pages across opens (a second cat reads nothing
// from the tree) and still drops them when the tree reports a change.
func TestReadOnlyNoOpen(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<17) // 2 MiB: read by range
	inner := temp.MustNew(map[string]string{"/a.txt": "one\n", "/big": big})
	fsys := &readCounter{FileSystem: inner}
	s := mountT(t, fsys, Options{ReadOnly: true, EntryTimeout: time.Hour, AttrTimeout: time.Hour})
	env := "M=" + s.Dir()
	require.Equal(t, "one\n", sh(t, `cat "$M/a.txt"`, env))
	require.Equal(t, big, sh(t, `cat "$M/big"`, env))
	// The kernel may reclaim cached pages under memory pressure (a
	// loaded CI machine), which sends their reads to the tree again: up
	// to three tries, one of which must read nothing from the tree. A
	// mount that does not keep its pages reads on every try.
	var reads []int64
	for range 3 {
		before := fsys.n.Load()
		assert.Equal(t, "one\n"+big, sh(t, `cat "$M/a.txt" "$M/big"`, env))
		if reads = append(reads, fsys.n.Load()-before); reads[len(reads)-1] == 0 {
			break
		}
	}
	assert.Contains(t, reads, int64(0), "reads that reached the tree on each cat after the first")

	require.NoError(t, inner.Write(context.Background(), "/a.txt", []byte("two, longer\n")))
	s.Settle()
	assert.Equal(t, "two, longer\n", sh(t, `cat "$M/a.txt"`, env))
}

// TestObservedEntriesCachedLong: with the default timeouts, entries of a
// tree that reports every change (temp:) stay in the kernel's caches past
// the one-second default, and an API change still shows at once; a host
// file of a local: tree is asked for again after the second.
func TestObservedEntriesCachedLong(t *testing.T) {
	inner := temp.MustNew(map[string]string{"/d/a.txt": "one\n"})
	fsys := &statCounter{FileSystem: inner}
	s := mountT(t, fsys, Options{})
	env := "M=" + s.Dir()
	sh(t, `stat "$M/d/a.txt" >/dev/null`, env)
	time.Sleep(1300 * time.Millisecond) // past DefaultAttrTimeout
	before := fsys.n.Load()
	assert.Equal(t, "4\n", sh(t, `stat -c %s "$M/d/a.txt"`, env))
	assert.Equal(t, int64(0), fsys.n.Load()-before, "Stat calls for a cached temp: entry after 1.3 s")
	require.NoError(t, inner.Write(context.Background(), "/d/a.txt", []byte("two, longer\n")))
	s.Settle()
	assert.Equal(t, "12\n", sh(t, `stat -c %s "$M/d/a.txt"`, env))

	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644))
	lfs, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { lfs.Close() })
	lc := &statCounter{FileSystem: lfs}
	ls := mountT(t, lc, Options{})
	sh(t, `stat "$M/a.txt" >/dev/null`, "M="+ls.Dir())
	time.Sleep(1300 * time.Millisecond)
	before = lc.n.Load()
	sh(t, `stat "$M/a.txt" >/dev/null`, "M="+ls.Dir())
	assert.NotZero(t, lc.n.Load()-before, "a host file is asked for again after the default timeout")
}

// TestKeptPagesNotReadAgain: a small file opened again at the same
// version is served from the kernel's pages (FOPEN_KEEP_CACHE); the mount
// does not read it from the tree at open just in case.
func TestKeptPagesNotReadAgain(t *testing.T) {
	inner := temp.MustNew(map[string]string{"/a.txt": "one\n"})
	fsys := &readCounter{FileSystem: inner}
	s := mountT(t, fsys, Options{EntryTimeout: time.Hour, AttrTimeout: time.Hour})
	env := "M=" + s.Dir()
	require.Equal(t, "one\n", sh(t, `cat "$M/a.txt"`, env))
	before := fsys.n.Load()
	assert.Equal(t, "one\none\n", sh(t, `cat "$M/a.txt"; cat "$M/a.txt"`, env))
	assert.Equal(t, int64(0), fsys.n.Load()-before, "tree reads for two more cats of an unchanged file")
	require.NoError(t, inner.Write(context.Background(), "/a.txt", []byte("two, longer\n")))
	s.Settle()
	assert.Equal(t, "two, longer\n", sh(t, `cat "$M/a.txt"`, env))
}
