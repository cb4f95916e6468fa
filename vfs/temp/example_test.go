package temp_test

import (
	"context"
	"fmt"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/temp"
)

func Example() {
	ctx := context.Background()
	fsys := temp.MustNew(map[string]string{
		"/src/a.ts":        "import x\n// TODO: one\n",
		"/src/nested/c.ts": "// todo: two\n",
		"/src-old/e.ts":    "// TODO: old\n",
	})
	for hit, err := range fsys.Grep(ctx, vfs.GrepQuery{Pattern: "todo", Path: "/src", Glob: "*.ts", CaseInsensitive: true}) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s:%d:%s\n", hit.Path, hit.LineNumber, hit.Line)
	}
	for e, err := range fsys.Glob(ctx, "*.ts", "/src") {
		if err != nil {
			panic(err)
		}
		fmt.Println(e.Path)
	}
	_, err := fsys.Read(ctx, "/src/b.ts")
	fmt.Println(err)
	// Output:
	// /src/a.ts:2:// TODO: one
	// /src/nested/c.ts:1:// todo: two
	// /src/a.ts
	// not found: /src/b.ts
}

func ExampleEmpty() {
	ctx := context.Background()
	fsys := temp.Empty()
	fmt.Println(fsys.Write(ctx, "/notes.md", []byte("hi")))
	info, _ := fsys.Stat(ctx, "/notes.md")
	fmt.Println(info.Kind)
	// Output:
	// read-only mount: /notes.md
	// missing
}
