package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/runner/web"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// BenchmarkSpillCopy is the overlay's cost for one spilled result: read
// the host file, write it to the turn's /tmp, delete the host file and
// rewrite the result. The host file is written outside the timer.
func BenchmarkSpillCopy(b *testing.B) {
	for _, size := range []int{1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			root, _ := temp.New(nil)
			scratch, _ := temp.New(nil)
			tree, err := union.New([]union.Mount{{Prefix: "/", FS: root}, {Prefix: "/tmp", FS: scratch}})
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			sp := &web.Spill{Dir: dir}
			o := &overlaySpill{fs: tree, hostDir: filepath.Join(dir, web.SpillDirName), spill: sp}
			text := strings.Repeat("x", size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				p, err := sp.Write(text)
				if err != nil {
					b.Fatal(err)
				}
				r := tools.Text("written to " + p + "\n" + web.FollowUpHost)
				b.StartTimer()
				if res := o.result(context.Background(), r); res.IsError || strings.Contains(res.String(), dir) {
					b.Fatal(res.String())
				}
			}
		})
	}
}
