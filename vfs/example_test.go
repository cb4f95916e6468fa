package vfs_test

import (
	"errors"
	"fmt"

	"github.com/julyfs/julyfs/vfs"
)

func ExampleClean() {
	for _, p := range []string{"", "src/a.ts", "/src//nested/../a.ts/", "/../../etc/passwd"} {
		fmt.Printf("%q -> %s\n", p, vfs.Clean(p))
	}
	// Output:
	// "" -> /
	// "src/a.ts" -> /src/a.ts
	// "/src//nested/../a.ts/" -> /src/a.ts
	// "/../../etc/passwd" -> /etc/passwd
}

func ExampleHasPrefix() {
	fmt.Println(vfs.HasPrefix("/agent/skills", "/agent"))
	fmt.Println(vfs.HasPrefix("/agent", "/agent"))
	fmt.Println(vfs.HasPrefix("/agent-tools", "/agent"))
	// Output:
	// true
	// true
	// false
}

func ExampleRel() {
	rel, ok := vfs.Rel("/src/nested/c.ts", "/src")
	fmt.Println(rel, ok)
	_, ok = vfs.Rel("/src-old/e.ts", "/src")
	fmt.Println(ok)
	// Output:
	// nested/c.ts true
	// false
}

func ExampleCompilePattern() {
	p, err := vfs.CompilePattern("src/**/*.{ts,js}")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Match("src/a.ts"), p.Match("src/x/y/b.js"), p.Match("lib/a.ts"))
	fmt.Println(p.LiteralPrefix(), p.MaxDepth())
	// Output:
	// true true false
	// src 0
}

func ExamplePathError() {
	err := vfs.Rebase(vfs.NotFound("/notes.md"), "/docs")
	fmt.Println(err)
	fmt.Println(errors.Is(err, vfs.ErrNotFound))
	var pe *vfs.PathError
	if errors.As(err, &pe) {
		fmt.Println(pe.Kind, pe.Path)
	}
	// Output:
	// not found: /docs/notes.md
	// true
	// not_found /docs/notes.md
}
