package overlay_test

import (
	"context"
	"fmt"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/overlay"
	"github.com/julyfs/julyfs/vfs/temp"
)

func Example() {
	ctx := context.Background()
	upper := temp.MustNew(map[string]string{"/guide.md": "TODO: new guide\n"})
	lower := temp.MustNew(map[string]string{"/guide.md": "TODO: old guide\n", "/faq.md": "TODO: faq\n"})
	o := overlay.New(upper, lower)
	for r, err := range o.Grep(ctx, vfs.GrepQuery{Pattern: "TODO"}) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s:%d: %s\n", r.Path, r.LineNumber, r.Line)
	}
	fmt.Println(o.Write(ctx, "/guide.md", []byte("x")))
	// Output:
	// /faq.md:1: TODO: faq
	// /guide.md:1: TODO: new guide
	// read-only mount: /guide.md
}
