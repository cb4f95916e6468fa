package local_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// seed writes files (posix paths to contents) under dir.
func seed(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for p, data := range files {
		host := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "/")))
		require.NoError(t, os.MkdirAll(filepath.Dir(host), 0o755))
		require.NoError(t, os.WriteFile(host, data, 0o644))
	}
}

// newTree returns a local tree over a fresh directory seeded with files,
// and the directory.
func newTree(t testing.TB, files map[string][]byte) (*local.FS, string) {
	t.Helper()
	dir := t.TempDir()
	seed(t, dir, files)
	fsys, err := local.New(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	return fsys, dir
}

func TestConformance(t *testing.T) {
	vfstest.Run(t, func(t *testing.T, files map[string][]byte) vfs.FileSystem {
		fsys, _ := newTree(t, files)
		return fsys
	}, vfstest.Options{KeepsEmptyDirs: true, HostGrepRoot: true})
}

func collect[E any](t *testing.T, seq func(func(E, error) bool)) []E {
	t.Helper()
	var out []E
	for e, err := range seq {
		require.NoError(t, err, "stream error")
		out = append(out, e)
	}
	return out
}

// described is each entry's path, kind and "link" for a link.
func described(es []vfs.DirEntry) []string {
	var out []string
	for _, e := range es {
		d := e.Path + " " + e.Kind.String()
		if e.Link {
			d += " link"
		}
		out = append(out, d)
	}
	return out
}

func paths(es []vfs.DirEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

func TestNewNotADirectory(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	_, err := local.New(f)
	assert.Error(t, err, "New(file) succeeded")
	_, err = local.New(filepath.Join(dir, "nope"))
	assert.Error(t, err, "New(missing) succeeded")
}

// TestEscapes checks that no path reaches outside the root: by "..", an
// absolute path, or links of every shape.
func TestEscapes(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	seed(t, outside, map[string][]byte{"/secret.txt": []byte("secret\n"), "/sub/deep.txt": []byte("deep secret\n")})
	fsys, dir := newTree(t, map[string][]byte{"/in.txt": []byte("inside\n"), "/d/x.txt": []byte("x secret\n")})
	links := map[string]string{
		"etc":      "/etc",                                   // absolute, outside
		"passwd":   "/etc/passwd",                            // absolute file, outside
		"up":       "../" + filepath.Base(outside),           // relative, outside
		"upfile":   filepath.Join(outside, "secret.txt"),     // file outside
		"chain1":   "chain2",                                 // chain that ends outside
		"chain2":   "upfile",                                 //
		"dangling": "nothing-here",                           // dangling
		"loop":     "loop",                                   // loops
		"outdir":   outside,                                  // directory outside
		"okfile":   "in.txt",                                 // inside: followed
		"okdir":    "d",                                      // directory inside
		"d/back":   "../in.txt",                              // inside via ..
		"d/esc":    "../../" + filepath.Base(outside) + "/x", // outside via ..
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	missing := []string{"/etc", "/passwd", "/etc/passwd", "/up/secret.txt", "/upfile", "/chain1", "/chain2",
		"/dangling", "/loop", "/outdir/secret.txt", "/outdir", "/outdir/sub/deep.txt", "/d/esc",
		"/../" + filepath.Base(outside) + "/secret.txt", outside + "/secret.txt"}
	for _, p := range missing {
		st, err := fsys.Stat(ctx, p)
		assert.NoError(t, err, "Stat(%q)", p)
		assert.Equal(t, vfs.KindMissing, st.Kind, "Stat(%q), want missing", p)
		_, err = fsys.Read(ctx, p)
		assert.ErrorIs(t, err, vfs.ErrNotFound, "Read(%q)", p)
		_, err = fsys.ReadAt(ctx, p, make([]byte, 4), 0)
		assert.ErrorIs(t, err, vfs.ErrNotFound, "ReadAt(%q)", p)
		assert.Empty(t, collect(t, fsys.List(ctx, p)), "List(%q), want nothing", p)
	}
	// Links inside the root are followed by exact-path verbs.
	data, err := fsys.Read(ctx, "/okfile")
	assert.NoError(t, err, "Read(/okfile)")
	assert.Equal(t, "inside\n", string(data), "Read(/okfile)")
	data, err = fsys.Read(ctx, "/d/back")
	assert.NoError(t, err, "Read(/d/back)")
	assert.Equal(t, "inside\n", string(data), "Read(/d/back)")
	st, _ := fsys.Stat(ctx, "/okdir")
	assert.Equal(t, vfs.KindDir, st.Kind, "Stat(/okdir), want a directory")
	// List shows every link, as ls does, with what it leads to inside
	// the root: a link out of it is missing.
	assert.Equal(t, []string{"/okdir/back file link", "/okdir/esc missing link", "/okdir/x.txt file"}, described(collect(t, fsys.List(ctx, "/okdir"))), "List(/okdir)")
	// Walks list file links inside the root, and nothing else of the links.
	wantAll := []string{"/d", "/d/back", "/d/x.txt", "/in.txt", "/okfile"}
	assert.Equal(t, wantAll, paths(collect(t, fsys.Glob(ctx, "**", "/"))), "Glob(**)")
	wantList := []string{"/chain1 missing link", "/chain2 missing link", "/d directory", "/dangling missing link",
		"/etc missing link", "/in.txt file", "/loop missing link", "/okdir directory link", "/okfile file link",
		"/outdir missing link", "/passwd missing link", "/up missing link", "/upfile missing link"}
	assert.Equal(t, wantList, described(collect(t, fsys.List(ctx, "/"))), "List(/)")
	// Grep never sees outside content.
	hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "secret|inside"}))
	var got []string
	for _, h := range hits {
		got = append(got, h.Path+":"+h.Line)
	}
	assert.Equal(t, []string{"/d/back:inside", "/d/x.txt:x secret", "/in.txt:inside", "/okfile:inside"}, got, "Grep")
	// A scope out of the root is a missing search root: not found.
	for _, p := range []string{"/outdir", "/up", "/etc", "/dangling"} {
		var hits []vfs.GrepResult
		var gerr error
		for h, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "secret", Path: p}) {
			if err != nil {
				gerr = err
				break
			}
			hits = append(hits, h)
		}
		assert.Empty(t, hits, "Grep(scope %s)", p)
		assert.EqualError(t, gerr, "not found: "+p, "Grep(scope %s)", p)
	}
	// Writes through links out of the root fail and change nothing outside.
	for _, p := range []string{"/outdir/new.txt", "/up/new.txt", "/etc/julyfs-test", "/d/esc/new"} {
		assert.ErrorIs(t, fsys.Write(ctx, p, []byte("x")), vfs.ErrWriteFailed, "Write(%q)", p)
	}
	_, err = os.Stat(filepath.Join(outside, "new.txt"))
	assert.Error(t, err, "a write reached outside the root")
	// Writing at a link path replaces the link, never the target.
	require.NoError(t, fsys.Write(ctx, "/upfile", []byte("replaced")), "Write(/upfile)")
	data, _ = os.ReadFile(filepath.Join(outside, "secret.txt"))
	assert.Equal(t, "secret\n", string(data), "the link's target outside changed")
	data, err = fsys.Read(ctx, "/upfile")
	assert.NoError(t, err, "Read(/upfile)")
	assert.Equal(t, "replaced", string(data), "Read(/upfile)")
	// Deleting a link removes the link itself, never its target, wherever
	// it points (so a link made through a mount can be removed through it).
	assert.NoError(t, fsys.Delete(ctx, "/passwd"), "Delete(/passwd)")
	_, err = os.Lstat(filepath.Join(dir, "passwd"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the link /passwd is still there")
	_, err = os.Stat("/etc/passwd")
	assert.NoError(t, err, "deleting a link out of the root touched its target")
	assert.ErrorIs(t, fsys.Delete(ctx, "/passwd"), vfs.ErrNotFound, "Delete(/passwd) again")
	assert.NoError(t, fsys.Delete(ctx, "/okfile"), "Delete(/okfile)")
	data, err = os.ReadFile(filepath.Join(dir, "in.txt"))
	assert.NoError(t, err, "deleting a link changed its target")
	assert.Equal(t, "inside\n", string(data), "deleting a link changed its target")
}

// TestSymlinkSwappedAtWrite swaps a parent directory for a link out of the
// root between writes: the next write must fail and write nothing outside.
func TestSymlinkSwappedAtWrite(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	fsys, dir := newTree(t, map[string][]byte{"/sub/a.txt": []byte("a")})
	require.NoError(t, fsys.Write(ctx, "/sub/b.txt", []byte("b")))
	os.RemoveAll(filepath.Join(dir, "sub"))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "sub")))
	assert.ErrorIs(t, fsys.Write(ctx, "/sub/b.txt", []byte("evil")), vfs.ErrWriteFailed, "Write through swapped link")
	ents, _ := os.ReadDir(outside)
	assert.Empty(t, ents, "outside the root now holds entries")
}

func TestWriteAtomic(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/a/old.txt": []byte("old"), "/file": []byte("f")})
	require.NoError(t, fsys.Write(ctx, "/a/old.txt", []byte("new")))
	require.NoError(t, fsys.Write(ctx, "/x/y/z.txt", []byte("deep")))
	// A parent that is a file: the write fails with the OS cause.
	err := fsys.Write(ctx, "/file/child", []byte("no"))
	assert.ErrorIs(t, err, vfs.ErrWriteFailed, "Write(/file/child)")
	assert.ErrorIs(t, err, syscall.ENOTDIR, "Write(/file/child), want it caused by ENOTDIR")
	assert.EqualError(t, err, "write failed: /file/child: not a directory", "Write(/file/child) message")
	// The target is a directory.
	assert.ErrorIs(t, fsys.Write(ctx, "/a", []byte("no")), vfs.ErrIsDir, "Write(/a)")
	// A read-only directory refuses the temporary file (unless root).
	if os.Geteuid() != 0 {
		os.Chmod(filepath.Join(dir, "a"), 0o555)
		err := fsys.Write(ctx, "/a/old.txt", []byte("lost"))
		os.Chmod(filepath.Join(dir, "a"), 0o755)
		assert.ErrorIs(t, err, vfs.ErrWriteFailed, "Write into read-only dir")
	}
	data, _ := os.ReadFile(filepath.Join(dir, "a", "old.txt"))
	assert.Equal(t, "new", string(data), "old.txt")
	data, _ = os.ReadFile(filepath.Join(dir, "file"))
	assert.Equal(t, "f", string(data), "file")
	// No temporaries are left anywhere.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		assert.NotContains(t, d.Name(), "julyfs-tmp", "temporary left behind: %s", p)
		return nil
	})
}

func TestWriteKeepsMode(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/run.sh": []byte("#!/bin/sh\n")})
	os.Chmod(filepath.Join(dir, "run.sh"), 0o750)
	require.NoError(t, fsys.Write(ctx, "/run.sh", []byte("#!/bin/sh\necho\n")))
	fi, _ := os.Stat(filepath.Join(dir, "run.sh"))
	assert.Equal(t, os.FileMode(0o750), fi.Mode().Perm(), "mode after write")

}

func TestBinaryRoundTrip(t *testing.T) {
	ctx := context.Background()
	fsys, _ := newTree(t, map[string][]byte{"/text.txt": []byte("needle\n")})
	bin := make([]byte, 70000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	copy(bin[100:], "needle\n")
	require.NoError(t, fsys.Write(ctx, "/img.bin", bin))
	got, err := fsys.Read(ctx, "/img.bin")
	require.NoError(t, err, "Read(/img.bin)")
	// bytes.Equal keeps a failure to a length, not a dump of 70000 bytes.
	require.True(t, bytes.Equal(got, bin), "Read(/img.bin) = %d bytes; want the bytes written", len(got))
	// Grep skips the binary file.
	hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "needle"}))
	if assert.Len(t, hits, 1, "Grep(needle), want only /text.txt") {
		assert.Equal(t, "/text.txt", hits[0].Path, "Grep(needle), want only /text.txt")
	}
	// ReadAt reads a range without the rest.
	p := make([]byte, 7)
	n, err := fsys.ReadAt(ctx, "/img.bin", p, 100)
	assert.NoError(t, err, "ReadAt(100)")
	assert.Equal(t, 7, n, "ReadAt(100)")
	assert.Equal(t, "needle\n", string(p), "ReadAt(100)")
	p = make([]byte, 10)
	n, err = fsys.ReadAt(ctx, "/img.bin", p, int64(len(bin)-4))
	assert.Same(t, io.EOF, err, "ReadAt(end-4) = %v, want io.EOF", err)
	assert.Equal(t, 4, n, "ReadAt(end-4)")
	assert.Equal(t, bin[len(bin)-4:], p[:4], "ReadAt(end-4)")
	n, err = fsys.ReadAt(ctx, "/img.bin", p, int64(len(bin)+10))
	assert.Same(t, io.EOF, err, "ReadAt(past end) = %v, want io.EOF", err)
	assert.Equal(t, 0, n, "ReadAt(past end)")
	_, err = fsys.ReadAt(ctx, "/", p, 0)
	assert.ErrorIs(t, err, vfs.ErrIsDir, "ReadAt(/)")
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/d/a.txt": []byte("a")})
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	err := fsys.Delete(ctx, "/nope")
	assert.ErrorIs(t, err, vfs.ErrNotFound, "Delete(/nope)")
	assert.EqualError(t, err, "not found: /nope", "Delete(/nope)")
	for _, p := range []string{"/d", "/empty", "/"} {
		assert.ErrorIs(t, fsys.Delete(ctx, p), vfs.ErrIsDir, "Delete(%s)", p)
	}
	require.NoError(t, fsys.Delete(ctx, "/d/a.txt"))
	// The emptied directory and the empty one stay, and list.
	assert.Equal(t, []string{"/d", "/empty"}, paths(collect(t, fsys.List(ctx, "/"))), "List(/)")
}

func TestSpecialFilesMissing(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/a.txt": []byte("fifo\n")})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	st, _ := fsys.Stat(ctx, "/pipe")
	assert.Equal(t, vfs.KindMissing, st.Kind, "Stat(/pipe), want missing")
	_, err := fsys.Read(ctx, "/pipe")
	assert.ErrorIs(t, err, vfs.ErrNotFound, "Read(/pipe), want not found (and no hang)")
	assert.Equal(t, []string{"/a.txt"}, paths(collect(t, fsys.List(ctx, "/"))), "List(/)")
	assert.Len(t, collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "fifo"})), 1, "Grep")
}

func TestWatchAndWriteIf(t *testing.T) {
	ctx := context.Background()
	fsys, _ := newTree(t, nil)
	var changes []vfs.Change
	cancel := fsys.Watch(func(c vfs.Change) { changes = append(changes, c) })
	tag, err := fsys.WriteIf(ctx, "/a", []byte("1"), vfs.Precondition{IfNoneMatch: true})
	require.NoError(t, err)
	_, err = fsys.WriteIf(ctx, "/a", []byte("2"), vfs.Precondition{IfNoneMatch: true})
	assert.ErrorIs(t, err, vfs.ErrConflict, "create-only over a file")
	st, _ := fsys.Stat(ctx, "/a")
	assert.Equal(t, tag, st.ETag, "Stat etag, want the one WriteIf returned")
	tag2, err := fsys.WriteIf(ctx, "/a", []byte("3"), vfs.Precondition{IfMatch: tag})
	assert.NoError(t, err, "WriteIf(IfMatch)")
	assert.NotEqual(t, tag, tag2, "WriteIf(IfMatch) returned the old etag")
	_, err = fsys.WriteIf(ctx, "/a", []byte("4"), vfs.Precondition{IfMatch: tag})
	assert.ErrorIs(t, err, vfs.ErrConflict, "WriteIf(stale etag)")
	data, _ := fsys.Read(ctx, "/a")
	assert.Equal(t, "3", string(data), "Read(/a)")
	require.NoError(t, fsys.Delete(ctx, "/a"))
	cancel()
	fsys.Write(ctx, "/b", nil)
	assert.Equal(t, []vfs.Change{{Path: "/a", Op: vfs.ChangeWrite}, {Path: "/a", Op: vfs.ChangeWrite}, {Path: "/a", Op: vfs.ChangeDelete}}, changes, "changes")
}

// TestWalkOrder checks that the handle-based walk yields exactly what
// vfs.Walk over List does, on names that reorder a depth-first walk.
func TestWalkOrder(t *testing.T) {
	ctx := context.Background()
	files := map[string][]byte{}
	for _, p := range []string{"/a/x", "/a-b/y", "/a.b", "/a b/z", "/a/b/c", "/a!/q", "/a/b-c/d", "/a/b.c", "/b", "/a\tt/w", "/Z/u"} {
		files[p] = []byte(p + "\n")
	}
	fsys, dir := newTree(t, files)
	os.Mkdir(filepath.Join(dir, "emptydir"), 0o755)
	want := paths(collect(t, vfs.Walk(ctx, fsys.List, "/", 0)))
	got := paths(collect(t, fsys.Glob(ctx, "**", "/")))
	assert.Equal(t, want, got, "Glob(**) vs vfs.Walk")
	assert.IsNonDecreasing(t, got, "Glob(**) not sorted")
	var gp []string
	for _, h := range collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "/"})) {
		gp = append(gp, h.Path)
	}
	assert.IsNonDecreasing(t, gp, "Grep paths not sorted")
	assert.Len(t, gp, len(files), "Grep paths")
}

// TestPermissionDenied runs as a user other than root: root reads anything.
func TestPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root bypasses permission bits; TestPermissionDeniedAsNobody covers this")
	}
	checkPermissionDenied(t)
}

func checkPermissionDenied(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/open.txt": []byte("needle\n"), "/closed.txt": []byte("needle\n"), "/cdir/f.txt": []byte("needle\n")})
	os.Chmod(filepath.Join(dir, "closed.txt"), 0)
	os.Chmod(filepath.Join(dir, "cdir"), 0)
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "cdir"), 0o755) })
	_, err := fsys.Read(ctx, "/closed.txt")
	assert.ErrorIs(t, err, os.ErrPermission, "Read(/closed.txt)")
	assert.EqualError(t, err, "/closed.txt: permission denied", "Read(/closed.txt)")
	hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "needle"}))
	if assert.Len(t, hits, 1, "Grep, want only /open.txt (unreadable files skipped)") {
		assert.Equal(t, "/open.txt", hits[0].Path, "Grep, want only /open.txt (unreadable files skipped)")
	}
	assert.Equal(t, []string{"/cdir", "/closed.txt", "/open.txt"}, paths(collect(t, fsys.Glob(ctx, "**", "/"))), "Glob(**)")
}

// TestPermissionDeniedAsNobody reruns TestPermissionDenied in a copy of
// the test binary as the user nobody, when the tests run as root.
func TestPermissionDeniedAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestPermissionDenied runs directly")
	}
	runAsNobody(t, "TestPermissionDenied")
}

// runAsNobody runs test name in a copy of the test binary as the user
// nobody (the caller is root), and requires that it passes.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	// A directory nobody may enter, holding a copy of this binary and a
	// scratch TMPDIR.
	base, err := os.MkdirTemp("", "julyfs-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	tmp := filepath.Join(base, "tmp")
	os.Mkdir(tmp, 0o777)
	os.Chmod(tmp, 0o1777)
	bin := filepath.Join(base, "local.test")
	data, err := os.ReadFile(exe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp, "GOCOVERDIR="+tmp)
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Skipf("cannot run the test binary as nobody here (%v)", err) // e.g. a noexec /tmp
	}
	require.NoError(t, err, "as nobody:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+name+" ", name+" did not pass as nobody")
}

// TestWroteInPlaceWriteOnlyDir: a file written in place in a directory
// its writer may enter and write but not read (mode 0333, where the
// directory's lock cannot be had: opening it needs read permission) is
// checked all the same and reported kept. As root it runs as nobody, as
// root reads any directory.
func TestWroteInPlaceWriteOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsNobody(t, "TestWroteInPlaceWriteOnlyDir")
		return
	}
	ctx := context.Background()
	root := t.TempDir()
	fsys, err := local.New(root)
	require.NoError(t, err)
	t.Cleanup(func() { fsys.Close() })
	d := filepath.Join(root, "d")
	require.NoError(t, os.Mkdir(d, 0o755))
	f, _, err := fsys.CreateInPlace(ctx, "/d/f", 0o644)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	_, err = f.WriteString("kept\n")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(d, 0o333))
	t.Cleanup(func() { os.Chmod(d, 0o755) })
	_, wrote, err := fsys.WroteInPlace(ctx, "/d/f", f, vfs.FileInfo{})
	require.NoError(t, err, "the check of a file in a write-only directory")
	assert.True(t, wrote)
}

// TestTempFilesHidden checks that a write's temporary file, which lives
// beside its target until the rename, never shows in the walking verbs.
func TestTempFilesHidden(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/a.txt": []byte("needle\n")})
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".julyfs-tmp-0123456789abcdef"), []byte("needle\n"), 0o644))
	assert.Equal(t, []string{"/a.txt"}, paths(collect(t, fsys.List(ctx, "/"))), "List(/)")
	assert.Equal(t, []string{"/a.txt"}, paths(collect(t, fsys.Glob(ctx, "**", "/"))), "Glob(**)")
	assert.Len(t, collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "needle"})), 1, "Grep")
}

// TestAbsoluteLinksInside checks that links whose target is an absolute
// host path inside the root are followed like relative ones (os.Root
// refuses them; the tree resolves them by hand), through a link to the
// root's own directory too, and that such a resolution never leaves the
// root.
func TestAbsoluteLinksInside(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/in.txt": []byte("inside\n"), "/d/x.txt": []byte("x\n"), "/d/e/y.txt": []byte("y\n")})
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	outside := t.TempDir()
	seed(t, outside, map[string][]byte{"/secret.txt": []byte("secret\n")})
	links := map[string]string{
		"absfile":  filepath.Join(real, "in.txt"),               // file inside
		"absdir":   filepath.Join(real, "d"),                    // directory inside
		"self":     real,                                        // the root itself
		"d/chain":  filepath.Join(real, "absdir", "e"),          // absolute, through another absolute link
		"d/mixed":  "../absdir/e/y.txt",                         // relative, through an absolute link
		"dotdot":   filepath.Join(real, "d", "..", "..", "etc"), // cleans to outside the root
		"absout":   filepath.Join(outside, "secret.txt"),        // outside
		"viaself":  filepath.Join(real, "self", "absout"),       // inside, then outside
		"absloop1": filepath.Join(real, "absloop2"),             // a loop of absolute links
		"absloop2": filepath.Join(real, "absloop1"),             //
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))
	}
	reads := map[string]string{
		"/absfile": "inside\n", "/absdir/x.txt": "x\n", "/self/in.txt": "inside\n", "/self/self/d/x.txt": "x\n",
		"/d/chain/y.txt": "y\n", "/d/mixed": "y\n", "/self/absfile": "inside\n",
	}
	for p, want := range reads {
		data, err := fsys.Read(ctx, p)
		assert.NoError(t, err, "Read(%q)", p)
		assert.Equal(t, want, string(data), "Read(%q)", p)
		st, err := fsys.Stat(ctx, p)
		assert.NoError(t, err, "Stat(%q)", p)
		assert.Equal(t, vfs.KindFile, st.Kind, "Stat(%q), want a file", p)
	}
	assert.Equal(t, []string{"/absdir/chain", "/absdir/e", "/absdir/mixed", "/absdir/x.txt"}, paths(collect(t, fsys.List(ctx, "/absdir"))), "List(/absdir)")
	// A link to a file inside lists, globs and greps as a file.
	assert.Equal(t, []string{"/absfile"}, paths(collect(t, fsys.Glob(ctx, "abs*", "/"))), "Glob(abs*)")
	hits := 0
	for h, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "inside", Path: "/"}) {
		require.NoError(t, err)
		if h.Path == "/absfile" {
			hits++
		}
	}
	assert.Equal(t, 1, hits, "Grep found /absfile other than once")
	for _, p := range []string{"/dotdot", "/absout", "/viaself", "/self/absout", "/absloop1", "/absdir/../absout"} {
		st, err := fsys.Stat(ctx, p)
		assert.NoError(t, err, "Stat(%q)", p)
		assert.Equal(t, vfs.KindMissing, st.Kind, "Stat(%q), want missing", p)
		_, err = fsys.Read(ctx, p)
		assert.ErrorIs(t, err, vfs.ErrNotFound, "Read(%q)", p)
	}

}
