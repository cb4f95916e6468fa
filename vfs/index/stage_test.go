package index_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
	"github.com/julyfs/julyfs/vfs/local"
	"github.com/julyfs/julyfs/vfs/temp"
)

func TestStageCommitUpdatesIndex(t *testing.T) {
	ctx := t.Context()
	lfs, err := local.New(t.TempDir())
	require.NoError(t, err)
	defer lfs.Close()
	for name, inner := range map[string]vfs.FileSystem{"temp": temp.MustNew(fixture), "local": lfs} {
		f := open(t, inner, filepath.Join(t.TempDir(), name), index.Options{})
		var mu sync.Mutex
		var changes []vfs.Change
		cancel := f.Watch(func(c vfs.Change) { mu.Lock(); changes = append(changes, c); mu.Unlock() })
		s, err := vfs.Stage(ctx, f, "/zoo/staged.txt", false)
		require.NoError(t, err, name)
		s.WriteAt([]byte("the okapi hides\n"), 0)
		assert.Empty(t, search(t, f, vfs.SearchQuery{Query: "okapi"}), "%s: Search(okapi) before Commit", name)
		require.NoError(t, s.Commit(ctx), name)
		if rs := search(t, f, vfs.SearchQuery{Query: "okapi"}); assert.Len(t, rs, 1, "%s: Search(okapi) after Commit", name) {
			assert.Equal(t, "/zoo/staged.txt", rs[0].Path, "%s: Search(okapi) after Commit", name)
		}
		s, _ = vfs.Stage(ctx, f, "/zoo/staged.txt", true)
		s.WriteAt([]byte("an ibex  "), 0)
		s.Abort()
		assert.Empty(t, search(t, f, vfs.SearchQuery{Query: "ibex"}), "%s: Search(ibex) after Abort", name)
		cancel()
		mu.Lock()
		assert.Equal(t, []vfs.Change{{Path: "/zoo/staged.txt", Op: vfs.ChangeWrite}}, changes, "%s: Watch saw", name)
		mu.Unlock()
		r, err := vfs.OpenFile(ctx, f, "/zoo/staged.txt")
		if assert.NoError(t, err, "%s: OpenFile", name) {
			assert.Equal(t, int64(16), r.Size(), "%s: OpenFile, want 16 bytes", name)
			r.Close()
		}
	}
}
