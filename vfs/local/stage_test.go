package local_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/julyfs/julyfs/vfs"
)

// hostNames lists every name under dir on the host (temporaries included).
func hostNames(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p != dir {
			r, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(r))
		}
		return nil
	})
	return names
}

func TestOpenFileKeepsVersion(t *testing.T) {
	fsys, _ := newTree(t, map[string][]byte{"/d/f": []byte("version one")})
	ctx := t.Context()
	f, err := fsys.OpenFile(ctx, "/d/../d/f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := fsys.Write(ctx, "/d/f", []byte("2")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 20)
	n, _ := f.ReadAt(buf, 0)
	if got := string(buf[:n]); got != "version one" || f.Size() != 11 {
		t.Errorf("reader opened before a Write reads %q (size %d), want the version it opened", got, f.Size())
	}
	for p, want := range map[string]string{"/d": "is a directory: /d", "/nope": "not found: /nope"} {
		if _, err := fsys.OpenFile(ctx, p); err == nil || err.Error() != want {
			t.Errorf("OpenFile(%q) = %v, want %s", p, err, want)
		}
	}
}

func TestStageConfined(t *testing.T) {
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644)
	fsys, dir := newTree(t, map[string][]byte{"/in.txt": []byte("in")})
	os.Symlink(outside, filepath.Join(dir, "out"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "secretlink"))
	ctx := t.Context()

	// keep through a link out of the root starts empty: the file is missing.
	s, err := fsys.Stage(ctx, "/out/secret", true)
	if err != nil {
		t.Fatalf("Stage(/out/secret): %v", err)
	}
	if s.Size() != 0 {
		t.Errorf("Stage(/out/secret, keep) copied %d bytes from outside the root", s.Size())
	}
	s.WriteAt([]byte("pwned"), 0)
	if err := s.Commit(ctx); err == nil {
		t.Error("Commit through a directory link out of the root succeeded")
	}
	s.Abort()
	for _, p := range []string{"/../../secret", "/secretlink"} {
		s, err := fsys.Stage(ctx, p, true)
		if err != nil {
			t.Fatalf("Stage(%q): %v", p, err)
		}
		if s.Size() != 0 {
			t.Errorf("Stage(%q, keep) copied %d bytes from outside the root", p, s.Size())
		}
		s.WriteAt([]byte("pwned"), 0)
		if err := s.Commit(ctx); err != nil {
			t.Errorf("Commit(%q): %v", p, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "secret")); string(data) != "outside" {
		t.Errorf("file outside the root = %q, want it untouched", data)
	}
	if names := hostNames(t, outside); !slices.Equal(names, []string{"secret"}) {
		t.Errorf("outside the root: %q, want only secret", names)
	}
	// /../../secret is /secret; the link at /secretlink is replaced, not
	// written through.
	for p, want := range map[string]string{"/secret": "pwned", "/secretlink": "pwned"} {
		if data, err := fsys.Read(ctx, p); string(data) != want {
			t.Errorf("Read(%q) = %q, %v; want %q", p, data, err, want)
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, "secretlink")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("/secretlink after Commit: %v, %v; want a regular file", fi, err)
	}
}

func TestStageAtomic(t *testing.T) {
	old := bytes.Repeat([]byte("o"), 1<<20)
	fsys, dir := newTree(t, map[string][]byte{"/d/f": old})
	os.Chmod(filepath.Join(dir, "d/f"), 0o600)
	ctx := t.Context()
	var changes []vfs.Change
	var mu sync.Mutex
	cancel := fsys.Watch(func(c vfs.Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() })
	defer cancel()

	s, err := fsys.Stage(ctx, "/d/f", true)
	if err != nil {
		t.Fatal(err)
	}
	newData := bytes.Repeat([]byte("n"), 3<<20)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for !stop.Load() {
			data, err := fsys.Read(ctx, "/d/f")
			if err != nil || !(bytes.Equal(data, old) || bytes.Equal(data, newData)) {
				t.Errorf("a reader saw %d bytes (%v): neither the old nor the new file", len(data), err)
				return
			}
			runtime.Gosched()
		}
	})
	for off := 0; off < len(newData); off += 64 << 10 {
		if _, err := s.WriteAt(newData[off:off+64<<10], int64(off)); err != nil {
			t.Fatal(err)
		}
	}
	if names := hostNames(t, dir); runtime.GOOS == "linux" && !slices.Equal(names, []string{"d", "d/f"}) {
		t.Errorf("host tree while staging: %q, want no temporary file", names)
	}
	if got := collect(t, fsys.List(ctx, "/d")); len(got) != 1 {
		t.Errorf("List(/d) while staging = %v, want only /d/f", got)
	}
	if err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	stop.Store(true)
	wg.Wait()
	if data, _ := fsys.Read(ctx, "/d/f"); !bytes.Equal(data, newData) {
		t.Errorf("after Commit: %d bytes, want the 3 MiB staged", len(data))
	}
	if fi, _ := os.Stat(filepath.Join(dir, "d/f")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after Commit = %v, want 0600 kept", fi.Mode().Perm())
	}

	// Abort leaves nothing; a staging under missing directories makes
	// them only at Commit.
	s, _ = fsys.Stage(ctx, "/d/f", false)
	s.WriteAt([]byte("dropped"), 0)
	s.Abort()
	s2, err := fsys.Stage(ctx, "/new/sub/g", false)
	if err != nil {
		t.Fatal(err)
	}
	s2.WriteAt([]byte("g"), 0)
	if names := hostNames(t, dir); !slices.Equal(names, []string{"d", "d/f"}) {
		t.Errorf("host tree after Abort and a pending staging: %q, want d, d/f only", names)
	}
	if err := s2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if names := hostNames(t, dir); !slices.Equal(names, []string{"d", "d/f", "new", "new/sub", "new/sub/g"}) {
		t.Errorf("host tree after Commit: %q", names)
	}
	for _, n := range hostNames(t, dir) {
		if strings.Contains(n, ".julyfs-tmp-") {
			t.Errorf("temporary file left: %s", n)
		}
	}
	mu.Lock()
	want := []vfs.Change{{Path: "/d/f", Op: vfs.ChangeWrite}, {Path: "/new/sub/g", Op: vfs.ChangeWrite}}
	if !slices.Equal(changes, want) {
		t.Errorf("Watch saw %v, want %v (one per Commit, none for Abort)", changes, want)
	}
	mu.Unlock()
}

func TestStageCommitOverDir(t *testing.T) {
	fsys, dir := newTree(t, nil)
	ctx := t.Context()
	s, err := fsys.Stage(ctx, "/x", false)
	if err != nil {
		t.Fatal(err)
	}
	s.WriteAt([]byte("data"), 0)
	os.Mkdir(filepath.Join(dir, "x"), 0o755)
	if err := s.Commit(ctx); err == nil || err.Error() != "is a directory: /x" {
		t.Errorf("Commit over a directory = %v, want is a directory: /x", err)
	}
	os.Remove(filepath.Join(dir, "x"))
	if err := s.Commit(ctx); err != nil {
		t.Errorf("Commit retried: %v", err)
	}
	if data, _ := fsys.Read(ctx, "/x"); string(data) != "data" {
		t.Errorf("Read(/x) = %q, want data", data)
	}
	if names := hostNames(t, dir); !slices.Equal(names, []string{"x"}) {
		t.Errorf("host tree: %q, want x only", names)
	}
	if _, err := fsys.Stage(ctx, "/", false); err == nil || err.Error() != "is a directory: /" {
		t.Errorf("Stage(/) = %v", err)
	}
}
