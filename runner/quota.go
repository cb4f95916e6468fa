package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/julyfs/julyfs/vfs"
)

// quotaFS is a turn's scratch tree with a bound on the bytes of its files:
// the scratch starts empty and is written only through this wrapper, so
// it knows every file's size. A write that would take the total over max
// fails with "write failed: /p" (the cause says the quota is used up) and
// changes nothing.
type quotaFS struct {
	vfs.FileSystem
	max int64

	mu    sync.Mutex // serializes writes and deletes with the accounting
	sizes map[string]int64
	total int64
}

func newQuotaFS(fsys vfs.FileSystem, max int64) *quotaFS {
	return &quotaFS{FileSystem: fsys, max: max, sizes: map[string]int64{}}
}

// Write writes data to path when the quota allows it.
func (q *quotaFS) Write(ctx context.Context, path string, data []byte) error {
	p := vfs.Clean(path)
	q.mu.Lock()
	defer q.mu.Unlock()
	next := q.total - q.sizes[p] + int64(len(data))
	if next > q.max {
		return vfs.WriteFailed(p, fmt.Errorf("the %s scratch quota of %d bytes is used up (%d bytes in use)", ScratchPrefix, q.max, q.total))
	}
	if err := q.FileSystem.Write(ctx, p, data); err != nil {
		return err
	}
	q.sizes[p] = int64(len(data))
	q.total = next
	return nil
}

// Delete deletes path and frees its bytes.
func (q *quotaFS) Delete(ctx context.Context, path string) error {
	p := vfs.Clean(path)
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.FileSystem.Delete(ctx, p); err != nil {
		return err
	}
	q.total -= q.sizes[p]
	delete(q.sizes, p)
	return nil
}
