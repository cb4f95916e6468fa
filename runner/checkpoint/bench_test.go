package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/fusemount"
	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
	"github.com/julyfs/julyfs/vfs/local"
)

// TestMain removes the copies of GOROOT/src the benchmarks made.
func TestMain(m *testing.M) {
	code := m.Run()
	if eightX.dir != "" {
		os.RemoveAll(eightX.dir)
	}
	os.Exit(code)
}

// eightX is a directory of 8 hard-linked copies of GOROOT/src (c0 … c7),
// made once per process.
var eightX struct {
	once sync.Once
	dir  string
	err  error
}

// scales are the bases the benchmarks run over: GOROOT/src, and 8 copies
// of it (hard links: the same files, 8 times the paths).
var scales = []struct {
	name string
	dir  func(b *testing.B) string
	// files are the 10 files of the base a turn changes.
	files []string
}{
	{"1x", func(*testing.B) string { return filepath.Join(runtime.GOROOT(), "src") }, tenFiles("")},
	{"8x", func(b *testing.B) string {
		eightX.once.Do(func() {
			if eightX.dir, eightX.err = os.MkdirTemp("", "cow-bench-8x-"); eightX.err != nil {
				return
			}
			for i := range 8 {
				out, err := exec.Command("cp", "-al", filepath.Join(runtime.GOROOT(), "src"), filepath.Join(eightX.dir, fmt.Sprintf("c%d", i))).CombinedOutput()
				if err != nil {
					eightX.err = fmt.Errorf("cp -al: %v: %s", err, out)
					return
				}
			}
		})
		require.NoError(b, eightX.err)
		return eightX.dir
	}, tenFiles("/c7")},
}

// tenFiles is 10 files of GOROOT/src, under prefix.
func tenFiles(prefix string) []string {
	var out []string
	for _, p := range []string{"net/http/server.go", "net/http/client.go", "net/http/request.go", "net/http/response.go",
		"net/http/transport.go", "net/url/url.go", "os/file.go", "io/io.go", "strings/strings.go", "bytes/bytes.go"} {
		out = append(out, prefix+"/"+p)
	}
	return out
}

// changed opens a layer over dir in a new session directory and changes
// each of files (a line appended to the base's version), then returns it.
func changed(b *testing.B, dir string, files []string) (c *cow.FS, base vfs.FileSystem, ses string) {
	fs, err := local.New(dir)
	require.NoError(b, err)
	b.Cleanup(func() { fs.Close() })
	ses = b.TempDir()
	c, err = cow.Open(fs, filepath.Join(ses, checkpoint.LayerDir))
	require.NoError(b, err)
	b.Cleanup(func() { c.Close() })
	ctx := b.Context()
	for _, p := range files {
		data, err := c.Read(ctx, p)
		require.NoError(b, err)
		require.NoError(b, c.Write(ctx, p, append(data, "// changed by the session\n"...)))
	}
	return c, fs, ses
}

// BenchmarkCheckpoint10Files is the checkpoint of a turn that changed 10
// files, over GOROOT/src and 8 copies of it as the base: the writes are
// outside the timer.
func BenchmarkCheckpoint10Files(b *testing.B) {
	for _, sc := range scales {
		b.Run(sc.name, func(b *testing.B) {
			c, _, ses := changed(b, sc.dir(b), nil)
			ctx := b.Context()
			var prev []cow.Entry
			turn := 0
			for b.Loop() {
				b.StopTimer()
				turn++
				for _, p := range sc.files {
					require.NoError(b, c.Write(ctx, p, fmt.Appendf(nil, "package x // turn %d\n", turn)))
				}
				b.StartTimer()
				_, es, err := checkpoint.Take(c, ses, turn, "turn", prev)
				require.NoError(b, err)
				prev = es
			}
		})
	}
}

// BenchmarkDiff10Files is the unified diff of a session that changed 10
// files of the base (july diff's work, without the process start).
func BenchmarkDiff10Files(b *testing.B) {
	for _, sc := range scales {
		b.Run(sc.name, func(b *testing.B) {
			c, base, _ := changed(b, sc.dir(b), sc.files)
			es := c.Entries()
			for b.Loop() {
				ds, err := checkpoint.Diff(b.Context(), base, c.Dir(), nil, es)
				require.NoError(b, err)
				require.Len(b, ds, 10)
			}
		})
	}
}

// BenchmarkFork10Files is the fork of a session at a checkpoint holding
// 10 changed files: its blobs linked into a new layer, the head written.
func BenchmarkFork10Files(b *testing.B) {
	for _, sc := range scales {
		b.Run(sc.name, func(b *testing.B) {
			c, _, ses := changed(b, sc.dir(b), sc.files)
			_, _, err := checkpoint.Take(c, ses, 1, "t1", nil)
			require.NoError(b, err)
			forks := b.TempDir()
			i := 0
			for b.Loop() {
				i++
				require.NoError(b, checkpoint.Fork(c.Dir(), 1, filepath.Join(forks, fmt.Sprint(i), checkpoint.LayerDir)))
			}
		})
	}
}

// BenchmarkFUSE runs find and grep -r on a FUSE mount of the base
// (local:) and of a layer over it that changed 10 files, both with the
// default options (each watches its host directory and lets the kernel
// cache its entries long), over GOROOT/src and 8 copies of it: find over
// the whole tree, grep -r over net/ (each copy's at 8x).
func BenchmarkFUSE(b *testing.B) {
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		b.Skip("needs /dev/fuse and root")
	}
	for _, sc := range scales {
		dir := sc.dir(b)
		c, base, _ := changed(b, dir, sc.files)
		mount := func(fsys vfs.FileSystem) string {
			mnt := filepath.Join(b.TempDir(), "mnt")
			require.NoError(b, os.Mkdir(mnt, 0o755))
			srv, err := fusemount.Mount(mnt, fsys, fusemount.Options{})
			require.NoError(b, err)
			b.Cleanup(func() {
				if srv.Unmount() != nil {
					srv.UnmountLazy()
				}
			})
			require.Eventually(b, srv.HostWatched, time.Minute, 10*time.Millisecond, "the host directories watched")
			return mnt
		}
		mnts := []struct{ name, dir string }{{"local", mount(base)}, {"layer", mount(c.Tree())}}
		nets := func(mnt string) []string {
			if sc.name == "1x" {
				return []string{mnt + "/net"}
			}
			var out []string
			for i := range 8 {
				out = append(out, fmt.Sprintf("%s/c%d/net", mnt, i))
			}
			return out
		}
		for _, cmd := range []struct {
			name string
			args func(mnt string) []string
		}{
			{"find", func(mnt string) []string { return []string{"find", mnt, "-type", "f"} }},
			{"grep-r", func(mnt string) []string { return append([]string{"grep", "-r", "-c", "ResponseWriter"}, nets(mnt)...) }},
		} {
			for _, m := range mnts {
				b.Run(sc.name+"/"+cmd.name+"/"+m.name, func(b *testing.B) {
					args := cmd.args(m.dir)
					for b.Loop() {
						ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
						out, err := exec.CommandContext(ctx, args[0], args[1:]...).Output()
						cancel()
						require.NoError(b, err)
						require.NotEmpty(b, out)
					}
				})
			}
		}
	}
}
