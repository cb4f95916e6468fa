package fsview_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/fsview"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

var files = map[string]string{
	"/README.md":            "# julyfs\n",
	"/src/a.ts":             "a\n",
	"/src/b.js":             "b\n",
	"/src/nested/c.ts":      "c\n",
	"/src/nested/deep/d.ts": "d\n",
	"/src-old/e.ts":         "e\n",
	"/src.bak":              "bak\n",
	"/docs/empty.txt":       "",
	"/docs/image.png":       "\x89PNG\r\n\x1a\n\x00\x00",
}

// expected lists the names fstest.TestFS must find.
func expected() []string {
	var names []string
	for p := range files {
		names = append(names, p[1:])
	}
	slices.Sort(names)
	return names
}

func TestFSTestTemp(t *testing.T) {
	assert.NoError(t, fstest.TestFS(fsview.New(t.Context(), temp.MustNew(files)), expected()...))
}

// noRange hides the tree's RangeReader so the view's whole-file path runs.
type noRange struct{ vfs.FileSystem }

func TestFSTestWithoutRangeReader(t *testing.T) {
	tree := noRange{temp.MustNew(files)}
	_, ok := vfs.FileSystem(tree).(vfs.RangeReader)
	require.False(t, ok, "noRange still has ReadAt")
	assert.NoError(t, fstest.TestFS(fsview.New(t.Context(), tree), expected()...))
}

func TestFSTestReference(t *testing.T) {
	m := map[string][]byte{}
	for p, s := range files {
		m[p] = []byte(s)
	}
	assert.NoError(t, fstest.TestFS(fsview.New(t.Context(), vfstest.NewReference(m)), expected()...))
}

func TestFSTestLocal(t *testing.T) {
	dir := t.TempDir()
	for p, s := range files {
		host := filepath.Join(dir, filepath.FromSlash(p[1:]))
		require.NoError(t, os.MkdirAll(filepath.Dir(host), 0o755))
		require.NoError(t, os.WriteFile(host, []byte(s), 0o644))
	}
	tree, err := local.New(dir)
	require.NoError(t, err)
	assert.NoError(t, fstest.TestFS(fsview.New(t.Context(), tree), expected()...))
}

func TestFSTestEmpty(t *testing.T) {
	assert.NoError(t, fstest.TestFS(fsview.New(t.Context(), temp.Empty())))
}

func TestErrors(t *testing.T) {
	view := fsview.New(t.Context(), temp.MustNew(files))
	for _, c := range []struct {
		name string
		call func() error
		is   []error
		msg  string
	}{
		{"Open missing", func() error { _, err := view.Open("nope"); return err }, []error{fs.ErrNotExist, vfs.ErrNotFound}, "open nope: not found: /nope"},
		{"Stat missing", func() error { _, err := view.Stat("src/nope"); return err }, []error{fs.ErrNotExist, vfs.ErrNotFound}, "stat src/nope: not found: /src/nope"},
		{"ReadFile missing", func() error { _, err := view.ReadFile("nope"); return err }, []error{fs.ErrNotExist, vfs.ErrNotFound}, "open nope: not found: /nope"},
		{"ReadFile dir", func() error { _, err := view.ReadFile("src"); return err }, []error{fs.ErrInvalid, vfs.ErrIsDir}, "open src: is a directory: /src"},
		{"ReadDir missing", func() error { _, err := view.ReadDir("nope"); return err }, []error{fs.ErrNotExist}, "readdir nope: not found: /nope"},
		{"ReadDir file", func() error { _, err := view.ReadDir("src/a.ts"); return err }, nil, "readdir src/a.ts: not a directory"},
		{"Open below a file", func() error { _, err := view.Open("src/a.ts/x"); return err }, []error{fs.ErrNotExist}, "open src/a.ts/x: not found: /src/a.ts/x"},
		{"Open invalid", func() error { _, err := view.Open("/src"); return err }, []error{fs.ErrInvalid}, "open /src: invalid argument"},
		{"Open dotdot", func() error { _, err := view.Open("src/../README.md"); return err }, []error{fs.ErrInvalid}, "open src/../README.md: invalid argument"},
		{"Stat trailing slash", func() error { _, err := view.Stat("src/"); return err }, []error{fs.ErrInvalid}, "stat src/: invalid argument"},
		{"ReadFile empty name", func() error { _, err := view.ReadFile(""); return err }, []error{fs.ErrInvalid}, "open : invalid argument"},
	} {
		err := c.call()
		if !assert.Error(t, err, "%s = nil error, want %q", c.name, c.msg) {
			continue
		}
		assert.EqualError(t, err, c.msg, c.name)
		var pe *fs.PathError
		assert.ErrorAs(t, err, &pe, "%s = %T, want *fs.PathError", c.name, err)
		for _, target := range c.is {
			assert.ErrorIs(t, err, target, c.name)
		}
	}
}

func TestReadsAndSeeks(t *testing.T) {
	for _, c := range []struct {
		name string
		tree vfs.FileSystem
	}{{"range", temp.MustNew(files)}, {"whole", noRange{temp.MustNew(files)}}} {
		view := fsview.New(t.Context(), c.tree)
		f, err := view.Open("README.md")
		require.NoError(t, err)
		buf := make([]byte, 4)
		n, err := f.Read(buf)
		assert.NoError(t, err, "%s: Read", c.name)
		assert.Equal(t, 4, n, "%s: Read", c.name)
		assert.Equal(t, "# ju", string(buf), "%s: Read", c.name)
		rs := f.(io.ReadSeeker)
		off, err := rs.Seek(-3, io.SeekEnd)
		assert.NoError(t, err, "%s: Seek(-3, end)", c.name)
		assert.Equal(t, int64(6), off, "%s: Seek(-3, end)", c.name)
		rest, err := io.ReadAll(f)
		assert.NoError(t, err, "%s: ReadAll after Seek", c.name)
		assert.Equal(t, "fs\n", string(rest), "%s: ReadAll after Seek", c.name)
		n, err = f.(io.ReaderAt).ReadAt(buf, 7)
		assert.Same(t, io.EOF, err, "%s: ReadAt(4 bytes, 7)", c.name)
		assert.Equal(t, 2, n, "%s: ReadAt(4 bytes, 7)", c.name)
		assert.Equal(t, "s\n", string(buf[:n]), "%s: ReadAt(4 bytes, 7)", c.name)
		assert.NoError(t, f.Close(), "%s: Close", c.name)
		_, err = f.Read(buf)
		assert.ErrorIs(t, err, fs.ErrClosed, "%s: Read after Close", c.name)
	}
}

func TestDirectories(t *testing.T) {
	view := fsview.New(t.Context(), temp.MustNew(files))
	es, err := view.ReadDir(".")
	require.NoError(t, err)
	var got []string
	for _, e := range es {
		got = append(got, fs.FormatDirEntry(e))
	}
	want := []string{"- README.md", "d docs/", "d src/", "d src-old/", "- src.bak"}
	assert.Equal(t, want, got, "ReadDir(\".\")")
	var walked []string
	err = fs.WalkDir(view, "src", func(p string, d fs.DirEntry, err error) error {
		walked = append(walked, p)
		return err
	})
	assert.NoError(t, err, "WalkDir(\"src\")")
	assert.Equal(t, []string{"src", "src/a.ts", "src/b.js", "src/nested", "src/nested/c.ts", "src/nested/deep", "src/nested/deep/d.ts"}, walked, "WalkDir(\"src\")")
	info, err := view.Stat(".")
	require.NoError(t, err, "Stat(\".\")")
	assert.Equal(t, ".", info.Name(), "Stat(\".\")")
	assert.True(t, info.IsDir(), "Stat(\".\") = %v, want a directory", info)
	assert.Equal(t, fs.ModeDir|0o555, info.Mode(), "Stat(\".\")")
	if vi, ok := info.Sys().(vfs.FileInfo); assert.True(t, ok, "Stat(\".\").Sys() = %#v, want the vfs.FileInfo of /", info.Sys()) {
		assert.Equal(t, "/", vi.Path, "Stat(\".\").Sys()")
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	view := fsview.New(ctx, temp.MustNew(files))
	_, err := view.ReadFile("README.md")
	require.NoError(t, err, "ReadFile before cancel")
	cancel()
	_, err = view.ReadFile("README.md")
	assert.ErrorIs(t, err, context.Canceled, "ReadFile after cancel")
	_, err = view.Stat("src")
	assert.ErrorIs(t, err, context.Canceled, "Stat after cancel")
}

func TestPathsStayInside(t *testing.T) {
	// io/fs names cannot climb; the view refuses rather than cleaning.
	view := fsview.New(t.Context(), temp.MustNew(files))
	for _, name := range []string{"..", "../etc/passwd", "src/../..", "./src", "src//a.ts"} {
		_, err := view.Open(name)
		assert.ErrorIs(t, err, fs.ErrInvalid, "Open(%q)", name)
	}
}
