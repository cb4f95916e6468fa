package vfstest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/julyfs/julyfs/vfs"
)

// The open and stage capabilities are checked through vfs.OpenFile and
// vfs.Stage, which call the tree's method when it has one and fall back
// otherwise.

func checkOpenFile(t T, newFS NewFunc, opts Options) {
	files := fixture()
	big := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB
	files["/big.bin"] = big
	fsys := newFS(t, files)
	ctx := t.Context()
	if !opts.NoFiles {
		for _, p := range seedPaths(files) {
			data := files[p]
			r, err := vfs.OpenFile(ctx, fsys, p)
			if err != nil {
				t.Errorf("OpenFile(%q) failed: %v", p, err)
				continue
			}
			if r.Size() != int64(len(data)) {
				t.Errorf("OpenFile(%q).Size() = %d, want %d", p, r.Size(), len(data))
			}
			for _, off := range []int{0, 1, len(data) / 2, len(data) - 1, len(data), len(data) + 7} {
				for _, size := range []int{1, 4096} {
					buf := make([]byte, size)
					n, err := r.ReadAt(buf, int64(off))
					want := data[min(max(off, 0), len(data)):min(max(off, 0)+size, len(data))]
					call := fmt.Sprintf("OpenFile(%q).ReadAt(%d bytes, %d)", p, size, off)
					switch {
					case off < 0:
					case !bytes.Equal(buf[:n], want):
						t.Errorf("%s = %s, want %s", call, short(buf[:n]), short(want))
					case n < size && err != io.EOF:
						t.Errorf("%s = %d bytes, error %v; want io.EOF for a short read", call, n, err)
					case n == size && err != nil && err != io.EOF:
						t.Errorf("%s failed: %v", call, err)
					}
				}
			}
			if err := r.Close(); err != nil {
				t.Errorf("OpenFile(%q).Close() = %v", p, err)
			}
		}
		_, err := vfs.OpenFile(ctx, fsys, "/src/./nested")
		wantError(t, `OpenFile("/src/./nested")`, err, vfs.ErrIsDir, "is a directory: /src/nested")
	}
	_, err := vfs.OpenFile(ctx, fsys, "/nope/../missing")
	wantError(t, `OpenFile("/nope/../missing")`, err, vfs.ErrNotFound, "not found: /missing")
}

func checkStage(t T, newFS NewFunc, opts Options) {
	fsys := seeded(t, newFS)
	ctx := t.Context()
	if opts.readOnly() {
		// Refused at Stage, or at the latest at Commit; nothing changes.
		for _, p := range []string{"/src/a.ts", "/new.txt"} {
			s, err := vfs.Stage(ctx, fsys, p, true)
			if err == nil {
				s.WriteAt([]byte("x"), 0)
				err = s.Commit(ctx)
				s.Abort()
			}
			if !errors.Is(err, vfs.ErrReadOnly) {
				t.Errorf("Stage(%q) and Commit on a read-only tree = %v, want read-only mount", p, err)
			}
		}
		wantKind(t, fsys, "/new.txt", vfs.KindMissing)
		if !opts.NoFiles {
			wantContent(t, fsys, "/src/a.ts", fixture()["/src/a.ts"])
		}
		return
	}
	var mu sync.Mutex
	var changes []vfs.Change
	cancel, watching := vfs.Watch(fsys, func(c vfs.Change) {
		mu.Lock()
		changes = append(changes, c)
		mu.Unlock()
	})
	defer cancel()

	old := fixture()["/src/a.ts"]
	s, err := vfs.Stage(ctx, fsys, "src//a.ts", true)
	if err != nil {
		t.Fatalf(`Stage("src//a.ts", keep) failed: %v`, err)
	}
	buf := make([]byte, len(old)+4)
	if n, _ := s.ReadAt(buf, 0); !bytes.Equal(buf[:n], old) || s.Size() != int64(len(old)) {
		t.Errorf(`Stage("/src/a.ts", keep) holds %s (size %d), want %s`, short(buf[:n]), s.Size(), short(old))
	}
	s.Truncate(3)
	s.WriteAt([]byte("new"), 5) // a gap of zeros
	want := []byte("imp\x00\x00new")
	if n, _ := s.ReadAt(buf, 0); !bytes.Equal(buf[:n], want) {
		t.Errorf("staged %s, want %s", short(buf[:n]), short(want))
	}
	wantContent(t, fsys, "/src/a.ts", old) // not before Commit
	if err := s.Commit(ctx); err != nil {
		t.Fatalf("Commit of /src/a.ts failed: %v", err)
	}
	wantContent(t, fsys, "/src/a.ts", want)
	if info := stat(t, fsys, "/src/a.ts"); info.Size != int64(len(want)) {
		t.Errorf(`Stat("/src/a.ts").Size = %d after Commit, want %d`, info.Size, len(want))
	}
	if err := s.Commit(ctx); err == nil {
		t.Errorf("a second Commit of one staging succeeded")
	}

	s, err = vfs.Stage(ctx, fsys, "/staged/sub/n.txt", false)
	if err != nil {
		t.Fatalf(`Stage("/staged/sub/n.txt") failed: %v`, err)
	}
	s.WriteAt([]byte("fresh"), 0)
	wantKind(t, fsys, "/staged/sub/n.txt", vfs.KindMissing)
	if err := s.Commit(ctx); err != nil {
		t.Fatalf("Commit of /staged/sub/n.txt failed: %v", err)
	}
	wantContent(t, fsys, "/staged/sub/n.txt", []byte("fresh"))
	if got := pathsOf(mustEntries(t, listCall("/staged/sub"), fsys.List(ctx, "/staged/sub"))); !slices.Equal(got, []string{"/staged/sub/n.txt"}) {
		t.Errorf(`List("/staged/sub") = %q after Commit, want only the committed file`, got)
	}

	s, err = vfs.Stage(ctx, fsys, "/src/b.js", false)
	if err != nil {
		t.Fatalf(`Stage("/src/b.js") failed: %v`, err)
	}
	s.WriteAt([]byte("aborted"), 0)
	if err := s.Abort(); err != nil {
		t.Errorf("Abort failed: %v", err)
	}
	wantContent(t, fsys, "/src/b.js", fixture()["/src/b.js"])
	if got := pathsOf(mustEntries(t, listCall("/src"), fsys.List(ctx, "/src"))); !slices.Equal(got, []string{"/src/a.ts", "/src/b.js", "/src/nested"}) {
		t.Errorf(`List("/src") = %q after a Commit and an Abort, want the seeded entries`, got)
	}

	for _, keep := range []bool{false, true} {
		_, err := vfs.Stage(ctx, fsys, "/src/nested/", keep)
		wantError(t, fmt.Sprintf(`Stage("/src/nested/", %v)`, keep), err, vfs.ErrIsDir, "is a directory: /src/nested")
		_, err = vfs.Stage(ctx, fsys, "/", keep)
		wantError(t, fmt.Sprintf(`Stage("/", %v)`, keep), err, vfs.ErrIsDir, "is a directory: /")
	}

	if watching {
		mu.Lock()
		wantChanges := []vfs.Change{{Path: "/src/a.ts", Op: vfs.ChangeWrite}, {Path: "/staged/sub/n.txt", Op: vfs.ChangeWrite}}
		if !slices.Equal(changes, wantChanges) {
			t.Errorf("Watch saw %+v, want %+v (one change per Commit, none for Abort)", changes, wantChanges)
		}
		mu.Unlock()
	}
}
