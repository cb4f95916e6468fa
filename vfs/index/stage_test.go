package index_test

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

func TestStageCommitUpdatesIndex(t *testing.T) {
	ctx := t.Context()
	lfs, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lfs.Close()
	for name, inner := range map[string]vfs.FileSystem{"temp": temp.MustNew(fixture), "local": lfs} {
		f := open(t, inner, filepath.Join(t.TempDir(), name), index.Options{})
		var mu sync.Mutex
		var changes []vfs.Change
		cancel := f.Watch(func(c vfs.Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() })
		s, err := vfs.Stage(ctx, f, "/zoo/staged.txt", false)
		if err != nil {
			t.Fatal(err)
		}
		s.WriteAt([]byte("the okapi hides\n"), 0)
		if rs := search(t, f, vfs.SearchQuery{Query: "okapi"}); len(rs) != 0 {
			t.Errorf("%s: Search(okapi) before Commit = %v", name, rs)
		}
		if err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if rs := search(t, f, vfs.SearchQuery{Query: "okapi"}); len(rs) != 1 || rs[0].Path != "/zoo/staged.txt" {
			t.Errorf("%s: Search(okapi) after Commit = %+v", name, rs)
		}
		s, _ = vfs.Stage(ctx, f, "/zoo/staged.txt", true)
		s.WriteAt([]byte("an ibex  "), 0)
		s.Abort()
		if rs := search(t, f, vfs.SearchQuery{Query: "ibex"}); len(rs) != 0 {
			t.Errorf("%s: Search(ibex) after Abort = %v", name, rs)
		}
		cancel()
		mu.Lock()
		if want := []vfs.Change{{Path: "/zoo/staged.txt", Op: vfs.ChangeWrite}}; !slices.Equal(changes, want) {
			t.Errorf("%s: Watch saw %v, want %v", name, changes, want)
		}
		mu.Unlock()
		r, err := vfs.OpenFile(ctx, f, "/zoo/staged.txt")
		if err != nil || r.Size() != 16 {
			t.Errorf("%s: OpenFile = %v, %v; want 16 bytes", name, r, err)
		} else {
			r.Close()
		}
	}
}
