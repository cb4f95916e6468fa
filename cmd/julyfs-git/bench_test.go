package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/plugins"
	"github.com/julyfs/julyfs/vfs"
)

// benchRepo is a repository of 10,000 files in 100 directories, one
// commit, made with the git command once per run.
var benchRepo = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(pluginBin), "bench") // removed by TestMain
	if err != nil {
		return "", err
	}
	for d := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return "", err
		}
		for f := range 100 {
			var b strings.Builder
			fmt.Fprintf(&b, "package pkg%03d\n\n", d)
			for l := range 60 {
				if (d*100+f+l)%97 == 0 {
					fmt.Fprintf(&b, "// TODO(%d): revisit line %d\n", f, l)
				} else {
					fmt.Fprintf(&b, "func f%d_%d() int { return %d }\n", f, l, l*f)
				}
			}
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", f)), []byte(b.String()), 0o644); err != nil {
				return "", err
			}
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "gc.auto=0", "commit", "-q", "-m", "bench"},
		{"gc", "-q"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	return dir, nil
})

// BenchmarkGit compares Glob '**' and Grep over the repository at its
// commit: the tree in process, through the plugin, and git grep.
// Run with -bench Git -benchtime 5x.
func BenchmarkGit(b *testing.B) {
	dir, err := benchRepo()
	require.NoError(b, err)
	in, err := openRepo(dir, "HEAD")
	require.NoError(b, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := plugins.OpenConfig(ctx, plugins.Config{Path: pluginBin, Args: map[string]string{"repo": dir, "ref": "HEAD"}, Logger: hclog.NewNullLogger()})
	require.NoError(b, err)
	b.Cleanup(func() { out.Close() })
	bg := context.Background()
	q := vfs.GrepQuery{Pattern: `TODO\(`}
	count := func(b *testing.B, seq func(func(vfs.GrepResult, error) bool)) int {
		n := 0
		for _, err := range seq {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		return n
	}
	var want int
	for name, fsys := range map[string]vfs.FileSystem{"inproc": in, "plugin": out} {
		b.Run("Glob/"+name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				for _, err := range fsys.Glob(bg, "**", "/") {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != 10_100 {
					b.Fatalf("globbed %d", n)
				}
			}
		})
		b.Run("Grep/"+name, func(b *testing.B) {
			for b.Loop() {
				want = count(b, fsys.Grep(bg, q))
			}
		})
	}
	b.Run("Grep/git-grep", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("git", "grep", "-n", `TODO(`, "HEAD")
			cmd.Dir = dir
			data, err := cmd.Output()
			if err != nil {
				b.Fatal(err)
			}
			if n := bytes.Count(data, []byte("\n")); want != 0 && n != want {
				b.Fatalf("git grep found %d, julyfs-git %d", n, want)
			}
		}
	})
}
