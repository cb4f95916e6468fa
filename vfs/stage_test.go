package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"sync"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

// stager is a tree whose Stager records that it was called.
type stager struct {
	vfs.FileSystem
	called *bool
}

func (s stager) Stage(ctx context.Context, path string, keep bool) (vfs.StagedFile, error) {
	*s.called = true
	return vfs.Stage(ctx, plain{s.FileSystem}, path, keep)
}

func readAll(t *testing.T, f vfs.StagedFile) string {
	t.Helper()
	buf := make([]byte, f.Size()+3)
	n, err := f.ReadAt(buf, 0)
	if err != io.EOF {
		t.Errorf("ReadAt(all + 3) error = %v, want io.EOF", err)
	}
	return string(buf[:n])
}

func TestStage(t *testing.T) {
	called := false
	for _, c := range []struct {
		name string
		fsys func() vfs.FileSystem
	}{
		{"fallback", func() vfs.FileSystem { return temp.MustNew(map[string]string{"/d/f": "old"}) }},
		{"method", func() vfs.FileSystem { return stager{temp.MustNew(map[string]string{"/d/f": "old"}), &called} }},
	} {
		ctx := t.Context()
		fsys := c.fsys()
		s, err := vfs.Stage(ctx, fsys, "/d/./f", true)
		if err != nil {
			t.Fatalf("%s: Stage(keep): %v", c.name, err)
		}
		if got := readAll(t, s); got != "old" {
			t.Errorf("%s: kept staging holds %q, want old", c.name, got)
		}
		s.WriteAt([]byte("NEW"), 0)
		s.WriteAt([]byte("x"), 6) // gap of zeros
		if got, want := readAll(t, s), "NEW\x00\x00\x00x"; got != want {
			t.Errorf("%s: staged %q, want %q", c.name, got, want)
		}
		if data, _ := fsys.Read(ctx, "/d/f"); string(data) != "old" {
			t.Errorf("%s: Read before Commit = %q, want old", c.name, data)
		}
		s.Truncate(2)
		s.Truncate(4) // regrowth is zeros, not the cut bytes
		if got, want := readAll(t, s), "NE\x00\x00"; got != want {
			t.Errorf("%s: after truncates %q, want %q", c.name, got, want)
		}
		if err := s.Commit(ctx); err != nil {
			t.Fatalf("%s: Commit: %v", c.name, err)
		}
		if data, _ := fsys.Read(ctx, "/d/f"); string(data) != "NE\x00\x00" {
			t.Errorf("%s: Read after Commit = %q", c.name, data)
		}
		if _, err := s.WriteAt([]byte("y"), 0); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("%s: WriteAt after Commit = %v, want fs.ErrClosed", c.name, err)
		}
		if err := s.Abort(); err != nil {
			t.Errorf("%s: Abort after Commit = %v", c.name, err)
		}

		// Empty start, abort, errors.
		s, err = vfs.Stage(ctx, fsys, "/d/f", false)
		if err != nil {
			t.Fatalf("%s: Stage: %v", c.name, err)
		}
		if s.Size() != 0 {
			t.Errorf("%s: Stage without keep: Size = %d", c.name, s.Size())
		}
		s.WriteAt([]byte("dropped"), 0)
		s.Abort()
		if data, _ := fsys.Read(ctx, "/d/f"); string(data) != "NE\x00\x00" {
			t.Errorf("%s: Read after Abort = %q", c.name, data)
		}
		if s, err := vfs.Stage(ctx, fsys, "/new/g", true); err != nil || s.Size() != 0 {
			t.Errorf("%s: Stage(missing, keep) = %v, %v; want an empty staging", c.name, s, err)
		}
		for _, keep := range []bool{false, true} {
			for p, want := range map[string]string{"/d": "is a directory: /d", "/": "is a directory: /"} {
				if _, err := vfs.Stage(ctx, fsys, p, keep); err == nil || err.Error() != want {
					t.Errorf("%s: Stage(%q, %v) = %v, want %s", c.name, p, keep, err, want)
				}
			}
		}
		// A commit the tree refuses keeps the data for a retry.
		s, _ = vfs.Stage(ctx, fsys, "/x/y", false)
		s.WriteAt([]byte("z"), 0)
		fsys.Write(ctx, "/x/y/z", []byte("now a dir"))
		if err := s.Commit(ctx); err == nil {
			t.Errorf("%s: Commit over a directory succeeded", c.name)
		}
		if got := readAll(t, s); got != "z" {
			t.Errorf("%s: after a failed Commit staged %q, want z", c.name, got)
		}
	}
	if !called {
		t.Error("Stage did not call the tree's Stager")
	}
}

// TestStageGrowth writes a file front to back in uneven pieces from
// several goroutines' worth of offsets and checks every byte.
func TestStageGrowth(t *testing.T) {
	fsys := temp.MustNew(nil)
	s, err := vfs.Stage(t.Context(), fsys, "/big", false)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := 0; len(want) < 3<<20; i++ {
		chunk := bytes.Repeat([]byte{byte(i)}, 1000+i*37)
		if _, err := s.WriteAt(chunk, int64(len(want))); err != nil {
			t.Fatal(err)
		}
		want = append(want, chunk...)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			buf := make([]byte, 4096)
			off := int64(i * 700000)
			n, _ := s.ReadAt(buf, off)
			if !bytes.Equal(buf[:n], want[off:off+int64(n)]) {
				t.Errorf("ReadAt(%d) differs", off)
			}
		})
	}
	wg.Wait()
	if err := s.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, _ := fsys.Read(t.Context(), "/big"); !bytes.Equal(got, want) {
		t.Errorf("committed %d bytes, want %d bytes as written", len(got), len(want))
	}
}
