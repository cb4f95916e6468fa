package fusemount

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/overlay"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// fixture is the tree the shell tests start from. It has names whose
// path order differs from depth-first order ("a-b.txt" sorts before "a/"),
// an empty file and a binary one.
func fixture() map[string][]byte {
	bin := make([]byte, 3<<20+17)
	for i := range bin {
		bin[i] = byte(i*7 + i>>11)
	}
	return map[string][]byte{
		"/README.md":          []byte("hello\nTODO: one\n"),
		"/empty.txt":          nil,
		"/bin.dat":            bin,
		"/src/a.go":           []byte("package a\n// TODO two\n"),
		"/src/a-b.txt":        []byte("dash\n"),
		"/src/a/x.txt":        []byte("nested\nTODO three\nlast line without newline"),
		"/src/sub/deep/f.txt": []byte("deep\n"),
		"/z/only.md":          []byte("TODO four\n"),
	}
}

// seed writes files into fsys through the API.
func seed(t testing.TB, fsys vfs.FileSystem, files map[string][]byte) {
	t.Helper()
	for p, data := range files {
		if err := fsys.Write(context.Background(), p, data); err != nil {
			t.Fatalf("Write(%q): %v", p, err)
		}
	}
}

// seedUnder writes the fixture under dir of fsys.
func seedUnder(t testing.TB, fsys vfs.FileSystem, dir string) {
	t.Helper()
	files := map[string][]byte{}
	for p, data := range fixture() {
		files[vfs.Join(dir, p)] = data
	}
	seed(t, fsys, files)
}

func TestShellTemp(t *testing.T) {
	fsys := temp.MustNew(nil)
	seedUnder(t, fsys, "/")
	testShellAgrees(t, fsys, "/", true, false)
}

func TestShellLocal(t *testing.T) {
	fsys := newLocal(t, t.TempDir())
	seedUnder(t, fsys, "/")
	testShellAgrees(t, fsys, "/", true, true)
}

func TestShellUnion(t *testing.T) {
	repo := newLocal(t, t.TempDir())
	seedUnder(t, repo, "/")
	notes := temp.MustNew(map[string]string{"/todo.md": "TODO five\n"})
	u, err := union.New([]union.Mount{{Prefix: "/repo", FS: repo}, {Prefix: "/notes", FS: notes}})
	if err != nil {
		t.Fatal(err)
	}
	testShellAgrees(t, u, "/repo", true, true)
}

func TestShellOverlay(t *testing.T) {
	upper := temp.MustNew(map[string]string{"/README.md": "upper wins\nTODO upper\n", "/extra/u.txt": "only upper\n"})
	lower := newLocal(t, t.TempDir())
	seedUnder(t, lower, "/")
	ov := overlay.New(upper, lower)
	testShellAgrees(t, ov, "/", false, false)

	// Without --read-only the mount learns the tree is read-only only
	// when it writes: creating fails at once, rewriting a file fails at
	// close (which cp reports).
	s := mountT(t, ov, Options{})
	env := []string{"D=" + s.Dir()}
	for _, script := range []string{`echo x > "$D/new.txt"`, `echo x | cp /dev/stdin "$D/README.md"`, `rm "$D/README.md"`, `mkdir "$D/newdir"`} {
		_, stderr, err := shErr(t, script, env...)
		if err == nil || !strings.Contains(stderr, "Read-only file system") {
			t.Errorf("%s on a read-only tree: %v, %q; want EROFS", script, err, stderr)
		}
	}
}

func newLocal(t testing.TB, dir string) *local.FS {
	t.Helper()
	fsys, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// testShellAgrees mounts fsys and checks that shell tools, run as separate
// processes, see what the API answers, for a tree holding the fixture under
// dir. When writable, it also checks that the tools' changes under dir
// reach the API at once and the API's reach the tools; otherwise that
// changes fail with EROFS. realDirs says the tree makes and removes
// directories of its own (vfs.DirMaker and DirRemover) under dir.
func testShellAgrees(t *testing.T, fsys vfs.FileSystem, dir string, writable, realDirs bool) {
	ctx := context.Background()
	s := mountT(t, fsys, Options{ReadOnly: !writable})
	mnt := s.Dir()
	env := []string{"MNT=" + mnt, "D=" + filepath.Join(mnt, dir)}

	// Every directory reads back in List order, after . and ..
	// (ls -f does not sort).
	dirs := []string{"/"}
	for e, err := range vfs.Walk(ctx, fsys.List, "/", 0) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == vfs.KindDir {
			dirs = append(dirs, e.Path)
		}
	}
	for _, d := range dirs {
		want := []string{".", ".."}
		for e, err := range fsys.List(ctx, d) {
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, vfs.Base(e.Path))
		}
		got := lines(sh(t, `ls -f "$MNT$P"`, append(env, "P="+d)...))
		if !slices.Equal(got, want) {
			t.Errorf("ls -f %s = %q, want %q", d, got, want)
		}
	}

	// find walks in readdir order, pre-order.
	var want []string
	var pre func(d string)
	pre = func(d string) {
		for e, err := range fsys.List(ctx, d) {
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, e.Path)
			if e.Kind == vfs.KindDir {
				pre(e.Path)
			}
		}
	}
	pre("/")
	got := lines(sh(t, `cd "$MNT" && find . -mindepth 1 | sed 's/^\.//'`, env...))
	if !slices.Equal(got, want) {
		t.Errorf("find = %q\nwant %q", got, want)
	}

	// ls -R in the C locale sorts each directory as List does.
	var b strings.Builder
	for i, d := range dirs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s:\n", strings.TrimSuffix(mnt+d, "/"))
		for e, err := range fsys.List(ctx, d) {
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString(vfs.Base(e.Path) + "\n")
		}
	}
	// ls -R lists subdirectories depth-first, not in path order.
	if got := sh(t, `ls -R "$MNT"`, env...); !sameBlocks(got, b.String()) {
		t.Errorf("ls -R =\n%s\nwant (as blocks)\n%s", got, b.String())
	}

	// Sizes, link counts, inode numbers.
	var files []string
	for p, err := range vfs.WalkFiles(ctx, fsys, "/") {
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	for _, p := range files {
		fi, err := fsys.Stat(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSpace(sh(t, `stat -c '%s %h %Y %F' "$MNT$P"`, append(env, "P="+p)...))
		want := fmt.Sprintf("%d 1 %d regular", fi.Size, fi.ModTime.Unix())
		if fi.Size == 0 {
			want = fmt.Sprintf("%d 1 %d regular empty file", fi.Size, fi.ModTime.Unix())
		} else {
			want += " file"
		}
		if got != want {
			t.Errorf("stat %s = %q, want %q", p, got, want)
		}
	}
	ino1 := sh(t, `stat -c %i "$D/src/a.go" "$D/src" "$D/z"`, env...)
	ino2 := sh(t, `stat -c %i "$D/src/a.go" "$D/src" "$D/z"`, env...)
	if ino1 != ino2 || len(slices.Compact(slices.Sorted(slices.Values(lines(ino1))))) != 3 {
		t.Errorf("inode numbers %q then %q: want stable and distinct", ino1, ino2)
	}
	if got := strings.TrimSpace(sh(t, `stat -c %h "$D/src"`, env...)); got != "4" {
		t.Errorf("Nlink of /src (2 subdirectories) = %s, want 4", got)
	}
	if got := strings.Fields(sh(t, `stat -f -c '%S %b %a' "$MNT"`, env...)); len(got) != 3 || slices.Contains(got, "0") {
		t.Errorf("statfs = %q, want non-zero block size, blocks, free", got)
	}

	// cat and cp -r copy the bytes Read returns.
	for _, p := range files {
		data, err := fsys.Read(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSpace(sh(t, `cat "$MNT$P" | sha256sum | cut -d' ' -f1`, append(env, "P="+p)...))
		if want := fmt.Sprintf("%x", sha256.Sum256(data)); got != want {
			t.Errorf("cat %s: sha256 %s, want %s", p, got, want)
		}
	}
	out := t.TempDir()
	sh(t, `cp -r "$MNT/." "$OUT/"`, append(env, "OUT="+out)...)
	for _, p := range files {
		data, _ := fsys.Read(ctx, p)
		got, err := os.ReadFile(filepath.Join(out, p))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("cp -r: %s = %d bytes, %v; want %d bytes", p, len(got), err, len(data))
		}
	}

	// grep -r finds the lines Grep finds.
	var wantGrep []string
	for r, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "TODO"}) {
		if err != nil {
			t.Fatal(err)
		}
		wantGrep = append(wantGrep, fmt.Sprintf("%s:%d:%s", r.Path, r.LineNumber, r.Line))
	}
	gotGrep := lines(sh(t, `cd "$MNT" && grep -rn TODO . | sed 's/^\.//' | sort`, env...))
	slices.Sort(wantGrep)
	if !slices.Equal(gotGrep, wantGrep) {
		t.Errorf("grep -rn = %q\nwant %q", gotGrep, wantGrep)
	}

	if !writable {
		for _, script := range []string{
			`echo x > "$D/new.txt"`, `echo x >> "$D/README.md"`, `rm "$D/README.md"`,
			`mkdir "$D/newdir"`, `mv "$D/README.md" "$D/moved.md"`, `touch "$D/README.md"`,
		} {
			_, stderr, err := shErr(t, script, env...)
			if err == nil || !strings.Contains(stderr, "Read-only file system") {
				t.Errorf("%s on a read-only tree: %v, %q; want EROFS", script, err, stderr)
			}
		}
		return
	}

	// Changes through the shell reach the API at once.
	read := func(p string) string {
		t.Helper()
		data, err := fsys.Read(ctx, p)
		if err != nil {
			t.Fatalf("Read(%q): %v", p, err)
		}
		return string(data)
	}
	kind := func(p string) vfs.EntryKind {
		t.Helper()
		fi, err := fsys.Stat(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Kind
	}
	j := func(p string) string { return vfs.Join(dir, p) }
	// gone reports whether nothing is left at p: missing, or (on a tree
	// with real directories, which the contract cannot delete) a directory
	// with no file under it.
	gone := func(p string) bool {
		t.Helper()
		for range vfs.WalkFiles(ctx, fsys, p) {
			return false
		}
		return true
	}

	sh(t, `echo more >> "$D/README.md"`, env...)
	if got := read(j("/README.md")); got != "hello\nTODO: one\nmore\n" {
		t.Errorf(">> : Read = %q", got)
	}
	sh(t, `mkdir "$D/notes" && echo hi > "$D/notes/a.md" && echo more >> "$D/notes/a.md"`, env...)
	if got := read(j("/notes/a.md")); got != "hi\nmore\n" {
		t.Errorf("> then >>: Read = %q", got)
	}
	sh(t, `mv "$D/notes/a.md" "$D/notes/b.md"`, env...)
	if kind(j("/notes/a.md")) != vfs.KindMissing || read(j("/notes/b.md")) != "hi\nmore\n" {
		t.Errorf("mv file: a.md %v, b.md %q", kind(j("/notes/a.md")), read(j("/notes/b.md")))
	}
	sh(t, `mv "$D/src/sub" "$D/moved"`, env...)
	if !gone(j("/src/sub")) || read(j("/moved/deep/f.txt")) != "deep\n" {
		t.Errorf("mv dir: /src/sub %v, /moved/deep/f.txt %q", kind(j("/src/sub")), read(j("/moved/deep/f.txt")))
	}
	sh(t, `rm "$D/src/a.go" && test ! -e "$D/src/a.go"`, env...)
	if kind(j("/src/a.go")) != vfs.KindMissing {
		t.Errorf("rm: /src/a.go still there")
	}
	sh(t, `rm -r "$D/moved" && test ! -e "$D/moved"`, env...)
	if !gone(j("/moved")) {
		t.Errorf("rm -r: /moved still there")
	}

	// mkdir makes a real directory in a tree with directories of its own
	// (local:); elsewhere the mount holds it until something is written
	// under it.
	sh(t, `mkdir "$D/held" && test -d "$D/held" && ls -f "$D" | grep -qx held`, env...)
	wantHeld := vfs.KindMissing
	if realDirs {
		wantHeld = vfs.KindDir
	}
	if got := kind(j("/held")); got != wantHeld {
		t.Errorf("mkdir: the tree has /held as %v, want %v", got, wantHeld)
	}
	sh(t, `echo x > "$D/held/f" && rm "$D/held/f" && test -d "$D/held" && rmdir "$D/held" && test ! -e "$D/held"`, env...)
	if got := kind(j("/held")); got != vfs.KindMissing {
		t.Errorf("rmdir: the tree still has /held as %v", got)
	}
	sh(t, `mkdir -p "$D/p/q" && rmdir "$D/p/q" "$D/p" && test ! -e "$D/p"`, env...)
	if got := kind(j("/p")); got != vfs.KindMissing {
		t.Errorf("mkdir -p; rmdir: the tree still has /p as %v", got)
	}
	if _, _, err := shErr(t, `rmdir "$D/src"`, env...); err == nil {
		t.Errorf("rmdir of a non-empty directory succeeded")
	}

	// Changes through the API reach the shell at once.
	sh(t, `cat "$D/README.md" >/dev/null`, env...)
	if err := fsys.Write(ctx, j("/README.md"), []byte("from the API\n")); err != nil {
		t.Fatal(err)
	}
	s.Settle()
	if got := sh(t, `cat "$D/README.md"`, env...); got != "from the API\n" {
		t.Errorf("after API Write, cat = %q", got)
	}
}

// lines splits output into lines, without a trailing empty one.
func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// sameBlocks compares ls -R outputs as sets of directory blocks.
func sameBlocks(a, b string) bool {
	split := func(s string) []string {
		bl := strings.Split(strings.TrimSpace(s), "\n\n")
		slices.Sort(bl)
		return bl
	}
	return slices.Equal(split(a), split(b))
}
