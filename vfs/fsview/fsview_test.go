package fsview_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"testing/fstest"

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
	if err := fstest.TestFS(fsview.New(t.Context(), temp.MustNew(files)), expected()...); err != nil {
		t.Error(err)
	}
}

// noRange hides the tree's RangeReader so the view's whole-file path runs.
type noRange struct{ vfs.FileSystem }

func TestFSTestWithoutRangeReader(t *testing.T) {
	tree := noRange{temp.MustNew(files)}
	if _, ok := vfs.FileSystem(tree).(vfs.RangeReader); ok {
		t.Fatal("noRange still has ReadAt")
	}
	if err := fstest.TestFS(fsview.New(t.Context(), tree), expected()...); err != nil {
		t.Error(err)
	}
}

func TestFSTestReference(t *testing.T) {
	m := map[string][]byte{}
	for p, s := range files {
		m[p] = []byte(s)
	}
	if err := fstest.TestFS(fsview.New(t.Context(), vfstest.NewReference(m)), expected()...); err != nil {
		t.Error(err)
	}
}

func TestFSTestLocal(t *testing.T) {
	dir := t.TempDir()
	for p, s := range files {
		host := filepath.Join(dir, filepath.FromSlash(p[1:]))
		if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(host, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(fsview.New(t.Context(), tree), expected()...); err != nil {
		t.Error(err)
	}
}

func TestFSTestEmpty(t *testing.T) {
	if err := fstest.TestFS(fsview.New(t.Context(), temp.Empty())); err != nil {
		t.Error(err)
	}
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
		if err == nil {
			t.Errorf("%s = nil error, want %q", c.name, c.msg)
			continue
		}
		if err.Error() != c.msg {
			t.Errorf("%s = %q, want %q", c.name, err, c.msg)
		}
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			t.Errorf("%s = %T, want *fs.PathError", c.name, err)
		}
		for _, target := range c.is {
			if !errors.Is(err, target) {
				t.Errorf("%s = %q, not errors.Is %v", c.name, err, target)
			}
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
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if n, err := f.Read(buf); n != 4 || err != nil || string(buf) != "# ju" {
			t.Errorf("%s: Read = %d, %v, %q; want 4, nil, %q", c.name, n, err, buf[:n], "# ju")
		}
		rs := f.(io.ReadSeeker)
		if off, err := rs.Seek(-3, io.SeekEnd); off != 6 || err != nil {
			t.Errorf("%s: Seek(-3, end) = %d, %v; want 6, nil", c.name, off, err)
		}
		rest, err := io.ReadAll(f)
		if string(rest) != "fs\n" || err != nil {
			t.Errorf("%s: ReadAll after Seek = %q, %v; want %q", c.name, rest, err, "fs\n")
		}
		if n, err := f.(io.ReaderAt).ReadAt(buf, 7); n != 2 || err != io.EOF || string(buf[:n]) != "s\n" {
			t.Errorf("%s: ReadAt(4 bytes, 7) = %d, %v, %q; want 2, EOF, %q", c.name, n, err, buf[:n], "s\n")
		}
		if err := f.Close(); err != nil {
			t.Errorf("%s: Close = %v", c.name, err)
		}
		if _, err := f.Read(buf); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("%s: Read after Close = %v, want fs.ErrClosed", c.name, err)
		}
	}
}

func TestDirectories(t *testing.T) {
	view := fsview.New(t.Context(), temp.MustNew(files))
	es, err := view.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, fs.FormatDirEntry(e))
	}
	want := []string{"- README.md", "d docs/", "d src/", "d src-old/", "- src.bak"}
	if !slices.Equal(got, want) {
		t.Errorf("ReadDir(\".\") = %q, want %q", got, want)
	}
	var walked []string
	err = fs.WalkDir(view, "src", func(p string, d fs.DirEntry, err error) error {
		walked = append(walked, p)
		return err
	})
	if want := []string{"src", "src/a.ts", "src/b.js", "src/nested", "src/nested/c.ts", "src/nested/deep", "src/nested/deep/d.ts"}; err != nil || !slices.Equal(walked, want) {
		t.Errorf("WalkDir(\"src\") = %q, %v; want %q", walked, err, want)
	}
	info, err := view.Stat(".")
	if err != nil || info.Name() != "." || !info.IsDir() || info.Mode() != fs.ModeDir|0o555 {
		t.Errorf("Stat(\".\") = %v, %v; want a directory named \".\"", info, err)
	}
	if vi, ok := info.Sys().(vfs.FileInfo); !ok || vi.Path != "/" {
		t.Errorf("Stat(\".\").Sys() = %#v, want the vfs.FileInfo of /", info.Sys())
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	view := fsview.New(ctx, temp.MustNew(files))
	if _, err := view.ReadFile("README.md"); err != nil {
		t.Fatalf("ReadFile before cancel: %v", err)
	}
	cancel()
	if _, err := view.ReadFile("README.md"); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadFile after cancel = %v, want context.Canceled", err)
	}
	if _, err := view.Stat("src"); !errors.Is(err, context.Canceled) {
		t.Errorf("Stat after cancel = %v, want context.Canceled", err)
	}
}

func TestPathsStayInside(t *testing.T) {
	// io/fs names cannot climb; the view refuses rather than cleaning.
	view := fsview.New(t.Context(), temp.MustNew(files))
	for _, name := range []string{"..", "../etc/passwd", "src/../..", "./src", "src//a.ts"} {
		if _, err := view.Open(name); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want fs.ErrInvalid", name, err)
		}
	}
}
