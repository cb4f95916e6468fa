package union_test

import (
	"context"
	"fmt"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
	"github.com/julyfs/julyfs/vfs/union"
)

func Example() {
	ctx := context.Background()
	u, err := union.New([]union.Mount{
		{Prefix: "/repo", FS: temp.MustNew(map[string]string{"/main.go": "package main\n\nfunc main() {}\n"})},
		{Prefix: "/notes", FS: temp.MustNew(map[string]string{"/todo.md": "- write main\n"})},
	})
	if err != nil {
		panic(err)
	}
	for e, err := range u.List(ctx, "/") {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.Path)
	}
	for e, err := range u.Glob(ctx, "repo/**/*.go", "/") {
		if err != nil {
			panic(err)
		}
		fmt.Println("glob:", e.Path)
	}
	for r, err := range u.Grep(ctx, vfs.GrepQuery{Pattern: "main"}) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("grep: %s:%d: %s\n", r.Path, r.LineNumber, r.Line)
	}
	_, err = u.Read(ctx, "/repo/nope.go")
	fmt.Println(err)
	_, err = u.Read(ctx, "/other/y")
	fmt.Println(err)
	// Output:
	// /notes
	// /repo
	// glob: /repo/main.go
	// grep: /notes/todo.md:1: - write main
	// grep: /repo/main.go:1: package main
	// grep: /repo/main.go:3: func main() {}
	// not found: /repo/nope.go
	// no mount for path: /other/y
}
