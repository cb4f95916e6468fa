package fusemount

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/julyfs/julyfs/vfs"
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
	if n := fsys.n.Load() - before; n != 0 {
		t.Errorf("150 cached stats made %d Stat calls reach the tree, want 0", n)
	}
	once := s.Dir() + "/d/a.txt 4 1\n" + s.Dir() + "/d/new.txt 8 1\n" + s.Dir() + "/d 4096 2\n"
	if want := strings.Repeat(once, 50); got != want {
		t.Errorf("stat output:\n%s\nwant 50 times:\n%s", got, once)
	}
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
	if want := "3\n2\n4\n3\n3\n2\n"; got != want {
		t.Errorf("link counts (d, e; mkdir d/s2: d; mv to e: d, e; rmdir: e) = %q, want %q", got, want)
	}
}
