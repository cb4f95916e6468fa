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

// The optional capabilities are checked through the vfs helpers, which
// call the tree's method when it has one and fall back otherwise, so a
// tree is checked either way and nothing is skipped.

func checkRangeRead(t T, newFS NewFunc, opts Options) {
	files := fixture()
	big := bytes.Repeat([]byte("0123456789abcdef"), 8192) // 128 KiB
	big[5000] = 0
	files["/big.bin"] = big
	fsys := newFS(t, files)
	ctx := t.Context()
	if !opts.NoFiles {
		for _, p := range seedPaths(files) {
			data := files[p]
			for _, off := range []int{0, 1, len(data) / 2, len(data) - 1, len(data), len(data) + 7} {
				if off < 0 {
					continue
				}
				for _, size := range []int{1, 5, 4096} {
					buf := make([]byte, size)
					n, err := vfs.ReadAt(ctx, fsys, p, buf, int64(off))
					want := data[min(off, len(data)):min(off+size, len(data))]
					call := fmt.Sprintf("ReadAt(%q, %d bytes, %d)", p, size, off)
					switch {
					case n < 0 || n > size:
						t.Errorf("%s = %d bytes", call, n)
					case !bytes.Equal(buf[:n], want):
						t.Errorf("%s = %s, want %s", call, short(buf[:n]), short(want))
					case n < size && err != io.EOF:
						t.Errorf("%s = %d bytes, error %v; want io.EOF for a short read", call, n, err)
					case n == size && err != nil && err != io.EOF:
						t.Errorf("%s failed: %v", call, err)
					}
				}
			}
		}
	}
	_, err := vfs.ReadAt(ctx, fsys, "/nope/../missing", make([]byte, 4), 0)
	wantError(t, `ReadAt("/nope/../missing")`, err, vfs.ErrNotFound, "not found: /missing")
}

func checkWriteIf(t T, newFS NewFunc, opts Options) {
	fsys := seeded(t, newFS)
	ctx := t.Context()
	if opts.readOnly() {
		for _, cond := range []vfs.Precondition{{}, {IfNoneMatch: true}} {
			_, err := vfs.WriteIf(ctx, fsys, "/new.txt", []byte("x"), cond)
			if !errors.Is(err, vfs.ErrReadOnly) {
				t.Errorf("WriteIf(\"/new.txt\", %+v) = %v on a read-only tree, want read-only mount", cond, err)
			}
		}
		wantKind(t, fsys, "/new.txt", vfs.KindMissing)
		return
	}
	etag1 := stat(t, fsys, "/src/a.ts").ETag
	for _, s := range []struct {
		path, data string
		cond       vfs.Precondition
		ok         bool
	}{
		{"/src/a.ts", "x", vfs.Precondition{IfNoneMatch: true}, false},
		{"/src/a.ts", "x", vfs.Precondition{IfMatch: "no such etag"}, false},
		{"/cas.txt", "x", vfs.Precondition{IfMatch: etag1}, false},
		{"/src/a.ts", "v2", vfs.Precondition{IfMatch: etag1}, true},
		{"/src/a.ts", "v3", vfs.Precondition{IfMatch: etag1}, false}, // etag1 is stale now
		{"cas/../cas.txt", "c1", vfs.Precondition{IfNoneMatch: true}, true},
		{"/cas.txt", "c2", vfs.Precondition{}, true},
	} {
		p := vfs.Clean(s.path)
		before, _ := fsys.Read(ctx, p)
		etag, err := vfs.WriteIf(ctx, fsys, s.path, []byte(s.data), s.cond)
		call := fmt.Sprintf("WriteIf(%q, %q, %+v)", s.path, s.data, s.cond)
		if !s.ok {
			wantError(t, call, err, vfs.ErrConflict, "conflict: "+p)
			if after, _ := fsys.Read(ctx, p); !bytes.Equal(after, before) {
				t.Errorf("refused %s changed %s to %s", call, short(before), short(after))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s failed: %v", call, err)
			continue
		}
		wantContent(t, fsys, p, []byte(s.data))
		if info := stat(t, fsys, p); etag == "" || etag != info.ETag {
			t.Errorf("%s = etag %q, but Stat(%q).ETag = %q", call, etag, p, info.ETag)
		}
	}
}

func checkWatch(t T, newFS NewFunc, opts Options) {
	fsys := seeded(t, newFS)
	ctx := t.Context()
	var mu sync.Mutex
	var got []vfs.Change
	cancel, ok := vfs.Watch(fsys, func(c vfs.Change) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	})
	if !ok || opts.readOnly() {
		cancel() // a tree without notifications: cancel is still callable
		return
	}
	write(t, fsys, "watch//a.txt", []byte("1"))
	write(t, fsys, "/watch/a.txt", []byte("2"))
	want := []vfs.Change{{Path: "/watch/a.txt", Op: vfs.ChangeWrite}, {Path: "/watch/a.txt", Op: vfs.ChangeWrite}}
	if !opts.NoDelete {
		del(t, fsys, "/watch/./a.txt")
		want = append(want, vfs.Change{Path: "/watch/a.txt", Op: vfs.ChangeDelete})
		if err := fsys.Delete(ctx, "/watch/a.txt"); err == nil {
			t.Errorf("Delete(\"/watch/a.txt\") twice = nil error")
		}
	}
	fsys.Write(ctx, "/src", []byte("x")) // fails: no change
	cancel()
	write(t, fsys, "/watch/b.txt", []byte("after cancel"))
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("Watch saw %+v, want %+v (each change delivered before the verb returns, none after cancel)", got, want)
	}
}
