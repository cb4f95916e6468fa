package local_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// BenchmarkWrite rewrites one 4 KiB file: the temporary file, its sync,
// the directory lock, the check and the rename (see docs/perf/local-writes.md).
func BenchmarkWrite(b *testing.B) {
	fsys, err := local.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	ctx := context.Background()
	data := bytes.Repeat([]byte("x"), 4096)
	b.SetBytes(int64(len(data)))
	b.Run("Write", func(b *testing.B) {
		for b.Loop() {
			if err := fsys.Write(ctx, "/d/f.txt", data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WriteIf", func(b *testing.B) {
		st, err := fsys.Stat(ctx, "/d/f.txt")
		if err != nil {
			b.Fatal(err)
		}
		etag := st.ETag
		for b.Loop() {
			if etag, err = fsys.WriteIf(ctx, "/d/f.txt", data, vfs.Precondition{IfMatch: etag}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
