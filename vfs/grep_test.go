package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

func TestCompileGrepInvalid(t *testing.T) {
	for _, p := range []string{"(", "a[", "*x", `\`} {
		_, err := vfs.CompileGrepQuery(vfs.GrepQuery{Pattern: p})
		if !errors.Is(err, vfs.ErrInvalidGrepPattern) || err.Error() != "invalid grep pattern: "+p {
			t.Errorf("CompileGrepQuery(%q) = %v, want \"invalid grep pattern: %s\"", p, err, p)
		}
	}
}

// failingRead is a tree whose Read fails for one path.
type failingRead struct {
	vfs.FileSystem
	path string
	err  error
}

func (f failingRead) Read(ctx context.Context, p string) ([]byte, error) {
	if vfs.Clean(p) == f.path {
		return nil, f.err
	}
	return f.FileSystem.Read(ctx, p)
}

func grepAll(t *testing.T, seq iter.Seq2[vfs.GrepResult, error]) ([]string, error) {
	t.Helper()
	var out []string
	for h, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, fmt.Sprintf("%s:%d:%s", h.Path, h.LineNumber, h.Line))
	}
	return out, nil
}

func TestGrepHelper(t *testing.T) {
	tree := temp.MustNew(map[string]string{
		"/a.txt":   "hit 1\nmiss\nhit 2\n",
		"/b.bin":   "hit\x00binary\n",
		"/c/d.txt": "hit 3\n",
		"/e.txt":   "hit 4\n",
	})
	ctx := t.Context()
	got, err := grepAll(t, vfs.Grep(ctx, tree, vfs.GrepQuery{Pattern: "hit"}))
	if want := []string{"/a.txt:1:hit 1", "/a.txt:3:hit 2", "/c/d.txt:1:hit 3", "/e.txt:1:hit 4"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Grep(hit) = %q, %v; want %q (binary file skipped)", got, err, want)
	}
	got, err = grepAll(t, vfs.Grep(ctx, tree, vfs.GrepQuery{Pattern: "hit", MaxResults: 3}))
	if want := []string{"/a.txt:1:hit 1", "/a.txt:3:hit 2", "/c/d.txt:1:hit 3"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Grep(hit, max 3) = %q, %v; want %q", got, err, want)
	}
	// A file that vanished between the walk and the read is skipped.
	gone := failingRead{tree, "/c/d.txt", vfs.NotFound("/c/d.txt")}
	got, err = grepAll(t, vfs.Grep(ctx, gone, vfs.GrepQuery{Pattern: "hit"}))
	if want := []string{"/a.txt:1:hit 1", "/a.txt:3:hit 2", "/e.txt:1:hit 4"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Grep with a vanished file = %q, %v; want %q", got, err, want)
	}
	// Any other read failure ends the stream, after the hits before it.
	boom := vfs.NewError(vfs.KindUnavailable, "/c/d.txt", errors.New("backend down"))
	got, err = grepAll(t, vfs.Grep(ctx, failingRead{tree, "/c/d.txt", boom}, vfs.GrepQuery{Pattern: "hit"}))
	if want := []string{"/a.txt:1:hit 1", "/a.txt:3:hit 2"}; !errors.Is(err, vfs.ErrUnavailable) || !slices.Equal(got, want) {
		t.Errorf("Grep with a failing read = %q, %v; want %q, unavailable", got, err, want)
	}
	// Invalid patterns fail before any work.
	if _, err := grepAll(t, vfs.Grep(ctx, tree, vfs.GrepQuery{Pattern: "("})); err == nil || err.Error() != "invalid grep pattern: (" {
		t.Errorf("Grep(\"(\") = %v", err)
	}
	if _, err := grepAll(t, vfs.Grep(ctx, tree, vfs.GrepQuery{Pattern: "x", Glob: "{"})); !errors.Is(err, vfs.ErrInvalidGlobPattern) {
		t.Errorf("Grep(glob \"{\") = %v, want invalid glob pattern", err)
	}
}

func TestIsBinary(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{{"", false}, {"text\n", false}, {"a\x00b", true}, {"\x89PNG\r\n\x1a\n\x00\x00", true}, {"caf\u00e9", false}} {
		if got := vfs.IsBinary([]byte(c.data)); got != c.want {
			t.Errorf("IsBinary(%q) = %v, want %v", c.data, got, c.want)
		}
	}
}
