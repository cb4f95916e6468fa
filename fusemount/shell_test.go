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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.NoError(t, fsys.Write(context.Background(), p, data), "Write(%q)", p)
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
	require.NoError(t, err)
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
		assert.Error(t, err, "%s on a read-only tree, want EROFS", script)
		assert.Contains(t, stderr, "Read-only file system", "%s on a read-only tree: %v, want EROFS", script, err)
	}
}

func newLocal(t testing.TB, dir string) *local.FS {
	t.Helper()
	fsys, err := local.New(dir)
	require.NoError(t, err)
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
		require.NoError(t, err)
		if e.Kind == vfs.KindDir {
			dirs = append(dirs, e.Path)
		}
	}
	for _, d := range dirs {
		want := []string{".", ".."}
		for e, err := range fsys.List(ctx, d) {
			require.NoError(t, err)
			want = append(want, vfs.Base(e.Path))
		}
		got := lines(sh(t, `ls -f "$MNT$P"`, append(env, "P="+d)...))
		assert.Equal(t, want, got, "ls -f %s", d)
	}

	// find walks in readdir order, pre-order.
	var want []string
	var pre func(d string)
	pre = func(d string) {
		for e, err := range fsys.List(ctx, d) {
			require.NoError(t, err)
			want = append(want, e.Path)
			if e.Kind == vfs.KindDir {
				pre(e.Path)
			}
		}
	}
	pre("/")
	got := lines(sh(t, `cd "$MNT" && find . -mindepth 1 | sed 's/^\.//'`, env...))
	assert.Equal(t, want, got, "find")

	// ls -R in the C locale sorts each directory as List does.
	var b strings.Builder
	for i, d := range dirs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s:\n", strings.TrimSuffix(mnt+d, "/"))
		for e, err := range fsys.List(ctx, d) {
			require.NoError(t, err)
			b.WriteString(vfs.Base(e.Path) + "\n")
		}
	}
	// ls -R lists subdirectories depth-first, not in path order.
	lsR := sh(t, `ls -R "$MNT"`, env...)
	assert.True(t, sameBlocks(lsR, b.String()), "ls -R =\n%s\nwant (as blocks)\n%s", lsR, b.String())

	// Sizes, link counts, inode numbers.
	var files []string
	for p, err := range vfs.WalkFiles(ctx, fsys, "/") {
		require.NoError(t, err)
		files = append(files, p)
	}
	for _, p := range files {
		fi, err := fsys.Stat(ctx, p)
		require.NoError(t, err)
		got := strings.TrimSpace(sh(t, `stat -c '%s %h %Y %F' "$MNT$P"`, append(env, "P="+p)...))
		want := fmt.Sprintf("%d 1 %d regular", fi.Size, fi.ModTime.Unix())
		if fi.Size == 0 {
			want = fmt.Sprintf("%d 1 %d regular empty file", fi.Size, fi.ModTime.Unix())
		} else {
			want += " file"
		}
		assert.Equal(t, want, got, "stat %s", p)
	}
	ino1 := sh(t, `stat -c %i "$D/src/a.go" "$D/src" "$D/z"`, env...)
	ino2 := sh(t, `stat -c %i "$D/src/a.go" "$D/src" "$D/z"`, env...)
	assert.Equal(t, ino1, ino2, "inode numbers: want stable")
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(lines(ino1)))), 3, "inode numbers %q then %q: want stable and distinct", ino1, ino2)
	assert.Equal(t, "4", strings.TrimSpace(sh(t, `stat -c %h "$D/src"`, env...)), "Nlink of /src (2 subdirectories)")
	statfs := strings.Fields(sh(t, `stat -f -c '%S %b %a' "$MNT"`, env...))
	assert.Len(t, statfs, 3, "statfs, want non-zero block size, blocks, free")
	assert.NotContains(t, statfs, "0", "statfs, want non-zero block size, blocks, free")

	// cat and cp -r copy the bytes Read returns.
	for _, p := range files {
		data, err := fsys.Read(ctx, p)
		require.NoError(t, err)
		got := strings.TrimSpace(sh(t, `cat "$MNT$P" | sha256sum | cut -d' ' -f1`, append(env, "P="+p)...))
		assert.Equal(t, fmt.Sprintf("%x", sha256.Sum256(data)), got, "cat %s: sha256", p)
	}
	out := t.TempDir()
	sh(t, `cp -r "$MNT/." "$OUT/"`, append(env, "OUT="+out)...)
	for _, p := range files {
		data, _ := fsys.Read(ctx, p)
		got, err := os.ReadFile(filepath.Join(out, p))
		assert.NoError(t, err, "cp -r: %s", p)
		assert.True(t, bytes.Equal(got, data), "cp -r: %s = %d bytes; want %d bytes", p, len(got), len(data))
	}

	// grep -r finds the lines Grep finds.
	var wantGrep []string
	for r, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "TODO"}) {
		require.NoError(t, err)
		wantGrep = append(wantGrep, fmt.Sprintf("%s:%d:%s", r.Path, r.LineNumber, r.Line))
	}
	gotGrep := lines(sh(t, `cd "$MNT" && grep -rn TODO . | sed 's/^\.//' | sort`, env...))
	slices.Sort(wantGrep)
	assert.Equal(t, wantGrep, gotGrep, "grep -rn")

	if !writable {
		for _, script := range []string{
			`echo x > "$D/new.txt"`, `echo x >> "$D/README.md"`, `rm "$D/README.md"`,
			`mkdir "$D/newdir"`, `mv "$D/README.md" "$D/moved.md"`, `touch "$D/README.md"`,
		} {
			_, stderr, err := shErr(t, script, env...)
			assert.Error(t, err, "%s on a read-only tree, want EROFS", script)
			assert.Contains(t, stderr, "Read-only file system", "%s on a read-only tree: %v, want EROFS", script, err)
		}
		return
	}

	// Changes through the shell reach the API at once.
	read := func(p string) string {
		t.Helper()
		data, err := fsys.Read(ctx, p)
		require.NoError(t, err, "Read(%q)", p)
		return string(data)
	}
	kind := func(p string) vfs.EntryKind {
		t.Helper()
		fi, err := fsys.Stat(ctx, p)
		require.NoError(t, err)
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
	assert.Equal(t, "hello\nTODO: one\nmore\n", read(j("/README.md")), ">> : Read")
	sh(t, `mkdir "$D/notes" && echo hi > "$D/notes/a.md" && echo more >> "$D/notes/a.md"`, env...)
	assert.Equal(t, "hi\nmore\n", read(j("/notes/a.md")), "> then >>: Read")
	sh(t, `mv "$D/notes/a.md" "$D/notes/b.md"`, env...)
	assert.Equal(t, vfs.KindMissing, kind(j("/notes/a.md")), "mv file: a.md")
	assert.Equal(t, "hi\nmore\n", read(j("/notes/b.md")), "mv file: b.md")
	sh(t, `mv "$D/src/sub" "$D/moved"`, env...)
	assert.True(t, gone(j("/src/sub")), "mv dir: /src/sub still there")
	assert.Equal(t, "deep\n", read(j("/moved/deep/f.txt")), "mv dir: /moved/deep/f.txt")
	sh(t, `rm "$D/src/a.go" && test ! -e "$D/src/a.go"`, env...)
	assert.Equal(t, vfs.KindMissing, kind(j("/src/a.go")), "rm: /src/a.go still there")
	sh(t, `rm -r "$D/moved" && test ! -e "$D/moved"`, env...)
	assert.True(t, gone(j("/moved")), "rm -r: /moved still there")

	// mkdir makes a real directory in a tree with directories of its own
	// (local:); elsewhere the mount holds it until something is written
	// under it.
	sh(t, `mkdir "$D/held" && test -d "$D/held" && ls -f "$D" | grep -qx held`, env...)
	wantHeld := vfs.KindMissing
	if realDirs {
		wantHeld = vfs.KindDir
	}
	assert.Equal(t, wantHeld, kind(j("/held")), "mkdir: the tree has /held as")
	sh(t, `echo x > "$D/held/f" && rm "$D/held/f" && test -d "$D/held" && rmdir "$D/held" && test ! -e "$D/held"`, env...)
	assert.Equal(t, vfs.KindMissing, kind(j("/held")), "rmdir: the tree still has /held")
	sh(t, `mkdir -p "$D/p/q" && rmdir "$D/p/q" "$D/p" && test ! -e "$D/p"`, env...)
	assert.Equal(t, vfs.KindMissing, kind(j("/p")), "mkdir -p; rmdir: the tree still has /p")
	_, _, err := shErr(t, `rmdir "$D/src"`, env...)
	assert.Error(t, err, "rmdir of a non-empty directory succeeded")

	// Changes through the API reach the shell at once.
	sh(t, `cat "$D/README.md" >/dev/null`, env...)
	require.NoError(t, fsys.Write(ctx, j("/README.md"), []byte("from the API\n")))
	s.Settle()
	assert.Equal(t, "from the API\n", sh(t, `cat "$D/README.md"`, env...), "after API Write, cat")
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
