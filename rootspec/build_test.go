package rootspec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// writeFiles creates files (path relative to base: contents).
func writeFiles(t *testing.T, base string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(base, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func list(t *testing.T, fsys vfs.FileSystem, dir string) []string {
	t.Helper()
	var out []string
	for e, err := range fsys.List(t.Context(), dir) {
		if err != nil {
			t.Fatalf("List(%s): %v", dir, err)
		}
		out = append(out, e.Path)
	}
	return out
}

func read(t *testing.T, fsys vfs.FileSystem, p string) string {
	t.Helper()
	data, err := fsys.Read(t.Context(), p)
	if err != nil {
		t.Fatalf("Read(%s): %v", p, err)
	}
	return string(data)
}

func TestBuildComposed(t *testing.T) {
	base := t.TempDir()
	writeFiles(t, base, map[string]string{
		"src/main.go":         "package main\n",
		"docs/guide.md":       "lower guide\n",
		"docs/faq.md":         "faq\n",
		"docs-local/guide.md": "upper guide\n",
		"a/x.txt":             "x\n",
	})
	config := `mounts:
  /repo: { local: ./src }
  /notes: { temp: { /seed.md: "seed" } }
  /docs:
    overlay:
      - local: ./docs-local
      - local: ./docs
  /ext:
    union:
      /a: { local: ./a, ro: true }
      /b: { temp: {} }
`
	table, err := Parse([]byte(config), "root.yaml", base)
	if err != nil {
		t.Fatal(err)
	}
	root, err := table.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fsys := root.FS
	if _, ok := fsys.(interface{ Mounts() []union.Mount }); !ok {
		t.Errorf("Open of several mounts = %T, want a union", fsys)
	}
	if got, want := list(t, fsys, "/"), []string{"/docs", "/ext", "/notes", "/repo"}; !slices.Equal(got, want) {
		t.Errorf("List(/) = %q, want %q", got, want)
	}
	if got := read(t, fsys, "/repo/main.go"); got != "package main\n" {
		t.Errorf("Read(/repo/main.go) = %q", got)
	}
	if got := read(t, fsys, "/notes/seed.md"); got != "seed" {
		t.Errorf("Read(/notes/seed.md) = %q", got)
	}
	if got := read(t, fsys, "/docs/guide.md"); got != "upper guide\n" {
		t.Errorf("Read(/docs/guide.md) = %q, want the upper layer's", got)
	}
	if got, want := list(t, fsys, "/docs"), []string{"/docs/faq.md", "/docs/guide.md"}; !slices.Equal(got, want) {
		t.Errorf("List(/docs) = %q, want %q", got, want)
	}
	if got := read(t, fsys, "/ext/a/x.txt"); got != "x\n" {
		t.Errorf("Read(/ext/a/x.txt) = %q", got)
	}

	ctx := t.Context()
	for _, p := range []string{"/docs/new.md", "/ext/a/new.txt"} {
		if err := fsys.Write(ctx, p, []byte("n")); !errors.Is(err, vfs.ErrReadOnly) || err.Error() != "read-only mount: "+p {
			t.Errorf("Write(%s) = %v, want read-only mount: %s", p, err, p)
		}
	}
	for _, p := range []string{"/notes/new.md", "/ext/b/new.txt", "/repo/new.go"} {
		if err := fsys.Write(ctx, p, []byte("n")); err != nil {
			t.Errorf("Write(%s) = %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "src", "new.go")); err != nil {
		t.Errorf("write through /repo did not reach the disk: %v", err)
	}
	if err := fsys.Write(ctx, "/other/x", nil); !errors.Is(err, vfs.ErrNoMount) {
		t.Errorf("Write(/other/x) = %v, want no mount", err)
	}
}

func TestBuildSingleRoot(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	tests := []struct {
		value string
		check func(vfs.FileSystem) bool
	}{
		{"/=temp:", func(f vfs.FileSystem) bool { _, ok := f.(*temp.FS); return ok }},
		{"/=local:" + dir, func(f vfs.FileSystem) bool { _, ok := f.(*local.FS); return ok }},
	}
	for _, tt := range tests {
		table, err := ParseMounts([]string{tt.value}, "/")
		if err != nil {
			t.Fatal(err)
		}
		fsys, err := table.Build(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !tt.check(fsys) {
			t.Errorf("Build(%s) = %T, want the tree itself (no union)", tt.value, fsys)
		}
	}

	// One mount below the root is still a union, so paths keep the prefix.
	table, _ := ParseMounts([]string{"/repo=local:" + dir}, "/")
	fsys, err := table.Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, fsys, "/repo/a.txt"); got != "a" {
		t.Errorf("Read(/repo/a.txt) = %q", got)
	}
}

func TestBuildReadOnly(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	table, err := ParseMounts([]string{"/=local:" + dir + "?ro"}, "/")
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := table.Build(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := fsys.Write(t.Context(), "/b.txt", []byte("b")); !errors.Is(err, vfs.ErrReadOnly) {
		t.Errorf("Write on ?ro = %v, want read-only mount", err)
	}
	if err := fsys.Delete(t.Context(), "/a.txt"); !errors.Is(err, vfs.ErrReadOnly) {
		t.Errorf("Delete on ?ro = %v, want read-only mount", err)
	}
	if got := read(t, fsys, "/a.txt"); got != "a" {
		t.Errorf("Read(/a.txt) = %q", got)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := (Table{}).Build(t.Context()); !errors.Is(err, ErrNoMounts) {
		t.Errorf("Build(empty) = %v, want ErrNoMounts", err)
	}

	// A directory that disappears between parsing and building.
	base := t.TempDir()
	writeFiles(t, base, map[string]string{"gone/a": "a"})
	table, err := Parse([]byte("mounts:\n  /x: {temp: {}}\n  /gone: {local: ./gone}\n"), "root.yaml", base)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(base, "gone")); err != nil {
		t.Fatal(err)
	}
	_, err = table.Build(t.Context())
	want := "root.yaml:3: directory " + filepath.Join(base, "gone") + " does not exist"
	if err == nil || err.Error() != want {
		t.Errorf("Build with a removed directory = %v, want %s", err, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := (Table{{"/", Spec{Kind: KindTemp}}}).Build(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Build(canceled) = %v, want context.Canceled", err)
	}
}

// TestRootClose checks that Close releases the local trees: their verbs
// fail afterwards.
func TestRootClose(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	table, _ := ParseMounts([]string{"/a=local:" + dir, "/b=local:" + dir}, "/")
	root, err := table.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, root.FS, "/b/a.txt"); got != "a" {
		t.Fatalf("Read = %q", got)
	}
	if err := root.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := root.FS.Read(t.Context(), "/b/a.txt"); err == nil {
		t.Errorf("Read after Close succeeded")
	}
}

func TestTableStrings(t *testing.T) {
	tab := Table{
		{"/", Spec{Kind: KindTemp}},
		{"/d", Spec{Kind: KindLocal, Dir: "/x", ReadOnly: true}},
	}
	var got []string
	for _, m := range tab {
		got = append(got, m.String())
	}
	if want := "/=temp: /d=local:/x?ro"; strings.Join(got, " ") != want {
		t.Errorf("Strings = %q, want %q", got, want)
	}
}
