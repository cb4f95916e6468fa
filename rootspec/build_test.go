package rootspec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(c), 0o644))
	}
}

func list(t *testing.T, fsys vfs.FileSystem, dir string) []string {
	t.Helper()
	var out []string
	for e, err := range fsys.List(t.Context(), dir) {
		require.NoError(t, err, "List(%s)", dir)
		out = append(out, e.Path)
	}
	return out
}

func read(t *testing.T, fsys vfs.FileSystem, p string) string {
	t.Helper()
	data, err := fsys.Read(t.Context(), p)
	require.NoError(t, err, "Read(%s)", p)
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
	require.NoError(t, err)
	root, err := table.Open(t.Context())
	require.NoError(t, err)
	defer root.Close()
	fsys := root.FS
	assert.Implements(t, (*interface{ Mounts() []union.Mount })(nil), fsys, "Open of several mounts = %T, want a union", fsys)
	assert.Equal(t, []string{"/docs", "/ext", "/notes", "/repo"}, list(t, fsys, "/"), "List(/)")
	assert.Equal(t, "package main\n", read(t, fsys, "/repo/main.go"), "Read(/repo/main.go)")
	assert.Equal(t, "seed", read(t, fsys, "/notes/seed.md"), "Read(/notes/seed.md)")
	assert.Equal(t, "upper guide\n", read(t, fsys, "/docs/guide.md"), "Read(/docs/guide.md), want the upper layer's")
	assert.Equal(t, []string{"/docs/faq.md", "/docs/guide.md"}, list(t, fsys, "/docs"), "List(/docs)")
	assert.Equal(t, "x\n", read(t, fsys, "/ext/a/x.txt"), "Read(/ext/a/x.txt)")

	ctx := t.Context()
	for _, p := range []string{"/docs/new.md", "/ext/a/new.txt"} {
		err := fsys.Write(ctx, p, []byte("n"))
		assert.ErrorIs(t, err, vfs.ErrReadOnly, "Write(%s)", p)
		assert.EqualError(t, err, "read-only mount: "+p, "Write(%s)", p)
	}
	for _, p := range []string{"/notes/new.md", "/ext/b/new.txt", "/repo/new.go"} {
		assert.NoError(t, fsys.Write(ctx, p, []byte("n")), "Write(%s)", p)
	}
	_, err = os.Stat(filepath.Join(base, "src", "new.go"))
	assert.NoError(t, err, "write through /repo did not reach the disk")
	assert.ErrorIs(t, fsys.Write(ctx, "/other/x", nil), vfs.ErrNoMount, "Write(/other/x)")
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
		require.NoError(t, err)
		fsys, err := table.Build(t.Context())
		require.NoError(t, err)
		assert.True(t, tt.check(fsys), "Build(%s) = %T, want the tree itself (no union)", tt.value, fsys)
	}

	// One mount below the root is still a union, so paths keep the prefix.
	table, _ := ParseMounts([]string{"/repo=local:" + dir}, "/")
	fsys, err := table.Build(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "a", read(t, fsys, "/repo/a.txt"), "Read(/repo/a.txt)")
}

func TestBuildReadOnly(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	table, err := ParseMounts([]string{"/=local:" + dir + "?ro"}, "/")
	require.NoError(t, err)
	fsys, err := table.Build(t.Context())
	require.NoError(t, err)
	assert.ErrorIs(t, fsys.Write(t.Context(), "/b.txt", []byte("b")), vfs.ErrReadOnly, "Write on ?ro")
	assert.ErrorIs(t, fsys.Delete(t.Context(), "/a.txt"), vfs.ErrReadOnly, "Delete on ?ro")
	assert.Equal(t, "a", read(t, fsys, "/a.txt"), "Read(/a.txt)")
}

func TestBuildErrors(t *testing.T) {
	_, err := (Table{}).Build(t.Context())
	assert.ErrorIs(t, err, ErrNoMounts, "Build(empty)")

	// A directory that disappears between parsing and building.
	base := t.TempDir()
	writeFiles(t, base, map[string]string{"gone/a": "a"})
	table, err := Parse([]byte("mounts:\n  /x: {temp: {}}\n  /gone: {local: ./gone}\n"), "root.yaml", base)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(base, "gone")))
	_, err = table.Build(t.Context())
	want := "root.yaml:3: directory " + filepath.Join(base, "gone") + " does not exist"
	assert.EqualError(t, err, want, "Build with a removed directory")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = (Table{{"/", Spec{Kind: KindTemp}}}).Build(ctx)
	assert.ErrorIs(t, err, context.Canceled, "Build(canceled)")
}

// TestRootClose checks that Close releases the local trees: their verbs
// fail afterwards.
func TestRootClose(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "a"})
	table, _ := ParseMounts([]string{"/a=local:" + dir, "/b=local:" + dir}, "/")
	root, err := table.Open(t.Context())
	require.NoError(t, err)
	require.Equal(t, "a", read(t, root.FS, "/b/a.txt"), "Read")
	require.NoError(t, root.Close())
	_, err = root.FS.Read(t.Context(), "/b/a.txt")
	assert.Error(t, err, "Read after Close succeeded")
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
	assert.Equal(t, "/=temp: /d=local:/x?ro", strings.Join(got, " "), "Strings = %q", got)
}
