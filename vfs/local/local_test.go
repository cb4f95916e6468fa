package local_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// seed writes files (posix paths to contents) under dir.
func seed(t testing.TB, dir string, files map[string][]byte) {
	t.Helper()
	for p, data := range files {
		host := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(p, "/")))
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(host, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newTree returns a local tree over a fresh directory seeded with files,
// and the directory.
func newTree(t testing.TB, files map[string][]byte) (*local.FS, string) {
	t.Helper()
	dir := t.TempDir()
	seed(t, dir, files)
	fsys, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
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
	if _, err := local.New(f); err == nil {
		t.Errorf("New(file) succeeded")
	}
	if _, err := local.New(filepath.Join(dir, "nope")); err == nil {
		t.Errorf("New(missing) succeeded")
	}
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
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	missing := []string{"/etc", "/passwd", "/etc/passwd", "/up/secret.txt", "/upfile", "/chain1", "/chain2",
		"/dangling", "/loop", "/outdir/secret.txt", "/outdir", "/outdir/sub/deep.txt", "/d/esc",
		"/../" + filepath.Base(outside) + "/secret.txt", outside + "/secret.txt"}
	for _, p := range missing {
		st, err := fsys.Stat(ctx, p)
		if err != nil || st.Kind != vfs.KindMissing {
			t.Errorf("Stat(%q) = %v, %v; want missing", p, st, err)
		}
		if data, err := fsys.Read(ctx, p); !errors.Is(err, vfs.ErrNotFound) {
			t.Errorf("Read(%q) = %q, %v; want not found", p, data, err)
		}
		if n, err := fsys.ReadAt(ctx, p, make([]byte, 4), 0); !errors.Is(err, vfs.ErrNotFound) {
			t.Errorf("ReadAt(%q) = %d, %v; want not found", p, n, err)
		}
		if es := collect(t, fsys.List(ctx, p)); len(es) != 0 {
			t.Errorf("List(%q) = %v; want nothing", p, es)
		}
	}
	// Links inside the root are followed by exact-path verbs.
	if data, err := fsys.Read(ctx, "/okfile"); err != nil || string(data) != "inside\n" {
		t.Errorf("Read(/okfile) = %q, %v", data, err)
	}
	if data, err := fsys.Read(ctx, "/d/back"); err != nil || string(data) != "inside\n" {
		t.Errorf("Read(/d/back) = %q, %v", data, err)
	}
	if st, _ := fsys.Stat(ctx, "/okdir"); st.Kind != vfs.KindDir {
		t.Errorf("Stat(/okdir) = %v, want a directory", st)
	}
	// List shows every link, as ls does, with what it leads to inside
	// the root: a link out of it is missing.
	if got := described(collect(t, fsys.List(ctx, "/okdir"))); !slices.Equal(got, []string{"/okdir/back file link", "/okdir/esc missing link", "/okdir/x.txt file"}) {
		t.Errorf("List(/okdir) = %v", got)
	}
	// Walks list file links inside the root, and nothing else of the links.
	wantAll := []string{"/d", "/d/back", "/d/x.txt", "/in.txt", "/okfile"}
	if got := paths(collect(t, fsys.Glob(ctx, "**", "/"))); !slices.Equal(got, wantAll) {
		t.Errorf("Glob(**) = %v, want %v", got, wantAll)
	}
	wantList := []string{"/chain1 missing link", "/chain2 missing link", "/d directory", "/dangling missing link",
		"/etc missing link", "/in.txt file", "/loop missing link", "/okdir directory link", "/okfile file link",
		"/outdir missing link", "/passwd missing link", "/up missing link", "/upfile missing link"}
	if got := described(collect(t, fsys.List(ctx, "/"))); !slices.Equal(got, wantList) {
		t.Errorf("List(/) = %v, want %v", got, wantList)
	}
	// Grep never sees outside content.
	hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "secret|inside"}))
	var got []string
	for _, h := range hits {
		got = append(got, h.Path+":"+h.Line)
	}
	want := []string{"/d/back:inside", "/d/x.txt:x secret", "/in.txt:inside", "/okfile:inside"}
	if !slices.Equal(got, want) {
		t.Errorf("Grep = %v, want %v", got, want)
	}
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
		if len(hits) != 0 || gerr == nil || gerr.Error() != "not found: "+p {
			t.Errorf("Grep(scope %s) = %v, %v; want not found: %s", p, hits, gerr, p)
		}
	}
	// Writes through links out of the root fail and change nothing outside.
	for _, p := range []string{"/outdir/new.txt", "/up/new.txt", "/etc/julyfs-test", "/d/esc/new"} {
		if err := fsys.Write(ctx, p, []byte("x")); !errors.Is(err, vfs.ErrWriteFailed) {
			t.Errorf("Write(%q) = %v, want write failed", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Errorf("a write reached outside the root")
	}
	// Writing at a link path replaces the link, never the target.
	if err := fsys.Write(ctx, "/upfile", []byte("replaced")); err != nil {
		t.Fatalf("Write(/upfile): %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(data) != "secret\n" {
		t.Errorf("the link's target outside changed to %q", data)
	}
	if data, err := fsys.Read(ctx, "/upfile"); err != nil || string(data) != "replaced" {
		t.Errorf("Read(/upfile) = %q, %v", data, err)
	}
	// Deleting a link removes the link itself, never its target, wherever
	// it points (so a link made through a mount can be removed through it).
	if err := fsys.Delete(ctx, "/passwd"); err != nil {
		t.Errorf("Delete(/passwd) = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "passwd")); !os.IsNotExist(err) {
		t.Errorf("the link /passwd is still there: %v", err)
	}
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Errorf("deleting a link out of the root touched its target: %v", err)
	}
	if err := fsys.Delete(ctx, "/passwd"); !errors.Is(err, vfs.ErrNotFound) {
		t.Errorf("Delete(/passwd) again = %v, want not found", err)
	}
	if err := fsys.Delete(ctx, "/okfile"); err != nil {
		t.Errorf("Delete(/okfile) = %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "in.txt")); err != nil || string(data) != "inside\n" {
		t.Errorf("deleting a link changed its target: %q, %v", data, err)
	}
}

// TestSymlinkSwappedAtWrite swaps a parent directory for a link out of the
// root between writes: the next write must fail and write nothing outside.
func TestSymlinkSwappedAtWrite(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	fsys, dir := newTree(t, map[string][]byte{"/sub/a.txt": []byte("a")})
	if err := fsys.Write(ctx, "/sub/b.txt", []byte("b")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "sub"))
	if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Write(ctx, "/sub/b.txt", []byte("evil")); !errors.Is(err, vfs.ErrWriteFailed) {
		t.Errorf("Write through swapped link = %v, want write failed", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("outside the root now holds %v", ents)
	}
}

func TestWriteAtomic(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/a/old.txt": []byte("old"), "/file": []byte("f")})
	if err := fsys.Write(ctx, "/a/old.txt", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Write(ctx, "/x/y/z.txt", []byte("deep")); err != nil {
		t.Fatal(err)
	}
	// A parent that is a file: the write fails with the OS cause.
	err := fsys.Write(ctx, "/file/child", []byte("no"))
	if !errors.Is(err, vfs.ErrWriteFailed) || !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Write(/file/child) = %v, want write failed caused by ENOTDIR", err)
	}
	if err == nil || err.Error() != "write failed: /file/child: not a directory" {
		t.Errorf("Write(/file/child) message = %v", err)
	}
	// The target is a directory.
	if err := fsys.Write(ctx, "/a", []byte("no")); !errors.Is(err, vfs.ErrIsDir) {
		t.Errorf("Write(/a) = %v, want is a directory", err)
	}
	// A read-only directory refuses the temporary file (unless root).
	if os.Geteuid() != 0 {
		os.Chmod(filepath.Join(dir, "a"), 0o555)
		err := fsys.Write(ctx, "/a/old.txt", []byte("lost"))
		os.Chmod(filepath.Join(dir, "a"), 0o755)
		if !errors.Is(err, vfs.ErrWriteFailed) {
			t.Errorf("Write into read-only dir = %v", err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a", "old.txt")); string(data) != "new" {
		t.Errorf("old.txt = %q, want new", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "file")); string(data) != "f" {
		t.Errorf("file = %q, want f", data)
	}
	// No temporaries are left anywhere.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(d.Name(), "julyfs-tmp") {
			t.Errorf("temporary left behind: %s", p)
		}
		return nil
	})
}

func TestWriteKeepsMode(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/run.sh": []byte("#!/bin/sh\n")})
	os.Chmod(filepath.Join(dir, "run.sh"), 0o750)
	if err := fsys.Write(ctx, "/run.sh", []byte("#!/bin/sh\necho\n")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "run.sh"))
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("mode after write = %v, want 0750", fi.Mode().Perm())
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	ctx := context.Background()
	fsys, _ := newTree(t, map[string][]byte{"/text.txt": []byte("needle\n")})
	bin := make([]byte, 70000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	copy(bin[100:], "needle\n")
	if err := fsys.Write(ctx, "/img.bin", bin); err != nil {
		t.Fatal(err)
	}
	got, err := fsys.Read(ctx, "/img.bin")
	if err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("Read(/img.bin) = %d bytes, %v; want the bytes written", len(got), err)
	}
	// Grep skips the binary file.
	hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "needle"}))
	if len(hits) != 1 || hits[0].Path != "/text.txt" {
		t.Errorf("Grep(needle) = %v, want only /text.txt", hits)
	}
	// ReadAt reads a range without the rest.
	p := make([]byte, 7)
	if n, err := fsys.ReadAt(ctx, "/img.bin", p, 100); n != 7 || err != nil || string(p) != "needle\n" {
		t.Errorf("ReadAt(100) = %d, %v, %q", n, err, p)
	}
	p = make([]byte, 10)
	if n, err := fsys.ReadAt(ctx, "/img.bin", p, int64(len(bin)-4)); n != 4 || err != io.EOF || !bytes.Equal(p[:4], bin[len(bin)-4:]) {
		t.Errorf("ReadAt(end-4) = %d, %v", n, err)
	}
	if n, err := fsys.ReadAt(ctx, "/img.bin", p, int64(len(bin)+10)); n != 0 || err != io.EOF {
		t.Errorf("ReadAt(past end) = %d, %v, want 0, EOF", n, err)
	}
	if _, err := fsys.ReadAt(ctx, "/", p, 0); !errors.Is(err, vfs.ErrIsDir) {
		t.Errorf("ReadAt(/) = %v, want is a directory", err)
	}
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/d/a.txt": []byte("a")})
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	if err := fsys.Delete(ctx, "/nope"); !errors.Is(err, vfs.ErrNotFound) || err.Error() != "not found: /nope" {
		t.Errorf("Delete(/nope) = %v", err)
	}
	for _, p := range []string{"/d", "/empty", "/"} {
		if err := fsys.Delete(ctx, p); !errors.Is(err, vfs.ErrIsDir) {
			t.Errorf("Delete(%s) = %v, want is a directory", p, err)
		}
	}
	if err := fsys.Delete(ctx, "/d/a.txt"); err != nil {
		t.Fatal(err)
	}
	// The emptied directory and the empty one stay, and list.
	if got := paths(collect(t, fsys.List(ctx, "/"))); !slices.Equal(got, []string{"/d", "/empty"}) {
		t.Errorf("List(/) = %v", got)
	}
}

func TestSpecialFilesMissing(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/a.txt": []byte("fifo\n")})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if st, _ := fsys.Stat(ctx, "/pipe"); st.Kind != vfs.KindMissing {
		t.Errorf("Stat(/pipe) = %v, want missing", st)
	}
	if _, err := fsys.Read(ctx, "/pipe"); !errors.Is(err, vfs.ErrNotFound) {
		t.Errorf("Read(/pipe) = %v, want not found (and no hang)", err)
	}
	if got := paths(collect(t, fsys.List(ctx, "/"))); !slices.Equal(got, []string{"/a.txt"}) {
		t.Errorf("List(/) = %v", got)
	}
	if hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "fifo"})); len(hits) != 1 {
		t.Errorf("Grep = %v", hits)
	}
}

func TestWatchAndWriteIf(t *testing.T) {
	ctx := context.Background()
	fsys, _ := newTree(t, nil)
	var changes []vfs.Change
	cancel := fsys.Watch(func(c vfs.Change) { changes = append(changes, c) })
	tag, err := fsys.WriteIf(ctx, "/a", []byte("1"), vfs.Precondition{IfNoneMatch: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.WriteIf(ctx, "/a", []byte("2"), vfs.Precondition{IfNoneMatch: true}); !errors.Is(err, vfs.ErrConflict) {
		t.Errorf("create-only over a file = %v, want conflict", err)
	}
	if st, _ := fsys.Stat(ctx, "/a"); st.ETag != tag {
		t.Errorf("Stat etag %q, WriteIf returned %q", st.ETag, tag)
	}
	tag2, err := fsys.WriteIf(ctx, "/a", []byte("3"), vfs.Precondition{IfMatch: tag})
	if err != nil || tag2 == tag {
		t.Errorf("WriteIf(IfMatch) = %q, %v", tag2, err)
	}
	if _, err := fsys.WriteIf(ctx, "/a", []byte("4"), vfs.Precondition{IfMatch: tag}); !errors.Is(err, vfs.ErrConflict) {
		t.Errorf("WriteIf(stale etag) = %v, want conflict", err)
	}
	if data, _ := fsys.Read(ctx, "/a"); string(data) != "3" {
		t.Errorf("Read(/a) = %q, want 3", data)
	}
	if err := fsys.Delete(ctx, "/a"); err != nil {
		t.Fatal(err)
	}
	cancel()
	fsys.Write(ctx, "/b", nil)
	want := []vfs.Change{{Path: "/a", Op: vfs.ChangeWrite}, {Path: "/a", Op: vfs.ChangeWrite}, {Path: "/a", Op: vfs.ChangeDelete}}
	if !slices.Equal(changes, want) {
		t.Errorf("changes = %v, want %v", changes, want)
	}
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
	if !slices.Equal(got, want) {
		t.Errorf("Glob(**) = %v\nvfs.Walk = %v", got, want)
	}
	if !slices.IsSorted(got) {
		t.Errorf("Glob(**) not sorted: %v", got)
	}
	var gp []string
	for _, h := range collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "/"})) {
		gp = append(gp, h.Path)
	}
	if !slices.IsSorted(gp) || len(gp) != len(files) {
		t.Errorf("Grep paths = %v", gp)
	}
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
	if !errors.Is(err, os.ErrPermission) || err.Error() != "/closed.txt: permission denied" {
		t.Errorf("Read(/closed.txt) = %v, want /closed.txt: permission denied", err)
	}
	hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "needle"}))
	if len(hits) != 1 || hits[0].Path != "/open.txt" {
		t.Errorf("Grep = %v, want only /open.txt (unreadable files skipped)", hits)
	}
	if got := paths(collect(t, fsys.Glob(ctx, "**", "/"))); !slices.Equal(got, []string{"/cdir", "/closed.txt", "/open.txt"}) {
		t.Errorf("Glob(**) = %v", got)
	}
}

// TestPermissionDeniedAsNobody reruns TestPermissionDenied in a copy of
// the test binary as the user nobody, when the tests run as root.
func TestPermissionDeniedAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestPermissionDenied runs directly")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A directory nobody may enter, holding a copy of this binary and a
	// scratch TMPDIR.
	base, err := os.MkdirTemp("", "julyfs-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	tmp := filepath.Join(base, "tmp")
	os.Mkdir(tmp, 0o777)
	os.Chmod(tmp, 0o1777)
	bin := filepath.Join(base, "local.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestPermissionDenied$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp, "GOCOVERDIR="+tmp)
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Skipf("cannot run the test binary as nobody here (%v)", err) // e.g. a noexec /tmp
	}
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestPermissionDenied ") {
		t.Fatalf("TestPermissionDenied did not pass as nobody:\n%s", out)
	}
}

// TestTempFilesHidden checks that a write's temporary file, which lives
// beside its target until the rename, never shows in the walking verbs.
func TestTempFilesHidden(t *testing.T) {
	ctx := context.Background()
	fsys, dir := newTree(t, map[string][]byte{"/a.txt": []byte("needle\n")})
	if err := os.WriteFile(filepath.Join(dir, ".julyfs-tmp-0123456789abcdef"), []byte("needle\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := paths(collect(t, fsys.List(ctx, "/"))); !slices.Equal(got, []string{"/a.txt"}) {
		t.Errorf("List(/) = %v", got)
	}
	if got := paths(collect(t, fsys.Glob(ctx, "**", "/"))); !slices.Equal(got, []string{"/a.txt"}) {
		t.Errorf("Glob(**) = %v", got)
	}
	if hits := collect(t, fsys.Grep(ctx, vfs.GrepQuery{Pattern: "needle"})); len(hits) != 1 {
		t.Errorf("Grep = %v", hits)
	}
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
	if err != nil {
		t.Fatal(err)
	}
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
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	reads := map[string]string{
		"/absfile": "inside\n", "/absdir/x.txt": "x\n", "/self/in.txt": "inside\n", "/self/self/d/x.txt": "x\n",
		"/d/chain/y.txt": "y\n", "/d/mixed": "y\n", "/self/absfile": "inside\n",
	}
	for p, want := range reads {
		if data, err := fsys.Read(ctx, p); err != nil || string(data) != want {
			t.Errorf("Read(%q) = %q, %v; want %q", p, data, err, want)
		}
		if st, err := fsys.Stat(ctx, p); err != nil || st.Kind != vfs.KindFile {
			t.Errorf("Stat(%q) = %v, %v; want a file", p, st, err)
		}
	}
	if got := paths(collect(t, fsys.List(ctx, "/absdir"))); !slices.Equal(got, []string{"/absdir/chain", "/absdir/e", "/absdir/mixed", "/absdir/x.txt"}) {
		t.Errorf("List(/absdir) = %q", got)
	}
	// A link to a file inside lists, globs and greps as a file.
	if got := paths(collect(t, fsys.Glob(ctx, "abs*", "/"))); !slices.Equal(got, []string{"/absfile"}) {
		t.Errorf("Glob(abs*) = %q, want [/absfile]", got)
	}
	hits := 0
	for h, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "inside", Path: "/"}) {
		if err != nil {
			t.Fatal(err)
		}
		if h.Path == "/absfile" {
			hits++
		}
	}
	if hits != 1 {
		t.Errorf("Grep found /absfile %d times, want 1", hits)
	}
	for _, p := range []string{"/dotdot", "/absout", "/viaself", "/self/absout", "/absloop1", "/absdir/../absout"} {
		if st, err := fsys.Stat(ctx, p); err != nil || st.Kind != vfs.KindMissing {
			t.Errorf("Stat(%q) = %v, %v; want missing", p, st, err)
		}
		if data, err := fsys.Read(ctx, p); !errors.Is(err, vfs.ErrNotFound) {
			t.Errorf("Read(%q) = %q, %v; want not found", p, data, err)
		}
	}
}
