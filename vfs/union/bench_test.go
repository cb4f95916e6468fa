package union_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

// benchTrees returns the same files as one temp tree, as a union of four
// temp trees mounted side by side at /g1../g4, and as a union whose "/"
// mount holds /g1 with the other three mounted below it (so the union
// merges instead of concatenating): the union's own cost, with children
// that cost as little as possible. For the cost over host disk see
// bench/union.
func benchTrees(b *testing.B, filesPerGroup int) (single, u, merged vfs.FileSystem) {
	b.Helper()
	all := map[string]string{}
	groups := make([]map[string]string, 4)
	for g := range 4 {
		groups[g] = map[string]string{}
		for i := range filesPerGroup {
			name := fmt.Sprintf("/d%03d/f%04d.go", i/50, i)
			if i%3 == 0 {
				name = fmt.Sprintf("/d%03d/sub/f%04d.txt", i/50, i)
			}
			data := fmt.Sprintf("package p%d\n\nimport \"errors\"\n\nvar e%d = errors.New(\"x\")\n\nfunc f() {}\n", i, i)
			groups[g][name] = data
			all[fmt.Sprintf("/g%d%s", g+1, name)] = data
		}
	}
	var ms []union.Mount
	for g, files := range groups {
		ms = append(ms, union.Mount{Prefix: fmt.Sprintf("/g%d", g+1), FS: temp.MustNew(files)})
	}
	uf, err := union.New(ms)
	if err != nil {
		b.Fatal(err)
	}
	g1 := map[string]string{}
	for p, data := range groups[0] {
		g1["/g1"+p] = data
	}
	ms[0] = union.Mount{Prefix: "/", FS: temp.MustNew(g1)}
	mf, err := union.New(ms)
	if err != nil {
		b.Fatal(err)
	}
	return temp.MustNew(all), uf, mf
}

func BenchmarkGlob(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		single, u, merged := benchTrees(b, n)
		for _, tc := range []struct {
			name string
			fsys vfs.FileSystem
		}{{"single", single}, {"union", u}, {"merged", merged}} {
			b.Run(fmt.Sprintf("files=%d/%s", 4*n, tc.name), func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					count := 0
					for _, err := range tc.fsys.Glob(ctx, "**/*.go", "/") {
						if err != nil {
							b.Fatal(err)
						}
						count++
					}
					if count == 0 {
						b.Fatal("no matches")
					}
				}
			})
		}
	}
}

func BenchmarkGrep(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		single, u, merged := benchTrees(b, n)
		for _, tc := range []struct {
			name string
			fsys vfs.FileSystem
		}{{"single", single}, {"union", u}, {"merged", merged}} {
			b.Run(fmt.Sprintf("files=%d/%s", 4*n, tc.name), func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					count := 0
					for _, err := range tc.fsys.Grep(ctx, vfs.GrepQuery{Pattern: `errors\.New\(`}) {
						if err != nil {
							b.Fatal(err)
						}
						count++
					}
					if count != 4*n {
						b.Fatalf("%d hits, want %d", count, 4*n)
					}
				}
			})
		}
	}
}
