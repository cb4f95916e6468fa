package plugins_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/local"
)

// benchDir is a directory of 100,000 empty files (/many) and two large
// ones (/big1, /big64), made once per run.
var benchDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp(bins.dir, "bench") // removed by TestMain
	if err != nil {
		return "", err
	}
	many := filepath.Join(dir, "many")
	if err := os.Mkdir(many, 0o755); err != nil {
		return "", err
	}
	for i := range 100_000 {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("f%06d", i)), nil, 0o644); err != nil {
			return "", err
		}
	}
	for name, size := range map[string]int{"big1": 1 << 20, "big64": 64 << 20} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
})

// pair returns the same host directory in process and through the test
// plugin (the local adapter inside it).
func pair(b *testing.B, dir string) map[string]vfs.FileSystem {
	in, err := local.New(dir)
	require.NoError(b, err)
	b.Cleanup(func() { in.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := plugins.OpenConfig(ctx, plugins.Config{Path: bins.plugin, Args: map[string]string{"mode": "local", "dir": dir}, Logger: quiet})
	require.NoError(b, err)
	b.Cleanup(func() { out.Close() })
	return map[string]vfs.FileSystem{"inproc": in, "plugin": out}
}

func drain[E any](b *testing.B, seq func(func(E, error) bool)) int {
	n := 0
	for _, err := range seq {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// BenchmarkVerbs compares each verb in process and through the plugin on
// the same tree. Run with -bench Verbs -benchtime 5x.
func BenchmarkVerbs(b *testing.B) {
	dir, err := benchDir()
	require.NoError(b, err)
	goroot := filepath.Join(runtime.GOROOT(), "src")
	trees, gotrees := pair(b, dir), pair(b, goroot)
	ctx := context.Background()
	for _, mode := range []string{"inproc", "plugin"} {
		fsys, gofs := trees[mode], gotrees[mode]
		b.Run("List100k/"+mode, func(b *testing.B) {
			for b.Loop() {
				if n := drain(b, fsys.List(ctx, "/many")); n != 100_000 {
					b.Fatalf("listed %d", n)
				}
			}
		})
		for _, name := range []string{"big1", "big64"} {
			b.Run("Read-"+name+"/"+mode, func(b *testing.B) {
				for b.Loop() {
					data, err := fsys.Read(ctx, "/"+name)
					if err != nil {
						b.Fatal(err)
					}
					b.SetBytes(int64(len(data)))
				}
			})
		}
		b.Run("GrepGOROOT/"+mode, func(b *testing.B) {
			for b.Loop() {
				drain(b, gofs.Grep(ctx, vfs.GrepQuery{Pattern: `TODO\(`}))
			}
		})
		b.Run("GlobGo/"+mode, func(b *testing.B) {
			for b.Loop() {
				drain(b, gofs.Glob(ctx, "**/*.go", "/"))
			}
		})
	}
}

// BenchmarkCallLatency is one small call through the plugin: the fixed
// cost every verb pays.
func BenchmarkCallLatency(b *testing.B) {
	dir, err := benchDir()
	require.NoError(b, err)
	fsys := pair(b, dir)["plugin"]
	ctx := context.Background()
	b.Run("Stat", func(b *testing.B) {
		for b.Loop() {
			if _, err := fsys.Stat(ctx, "/big1"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Read0", func(b *testing.B) {
		for b.Loop() {
			if _, err := fsys.Read(ctx, "/many/f000001"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
