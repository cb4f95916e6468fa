package fsview_test

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/julyfs/julyfs/vfs/fsview"
	"github.com/julyfs/julyfs/vfs/temp"
)

func ExampleNew() {
	tree := temp.MustNew(map[string]string{
		"/docs/guide.md": "# Guide\n",
		"/docs/api.md":   "# API\n",
		"/README.md":     "# julyfs\n",
	})
	view := fsview.New(context.Background(), tree)
	fs.WalkDir(view, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Println(name, d.IsDir())
		return nil
	})
	data, _ := fs.ReadFile(view, "docs/guide.md")
	fmt.Printf("%q\n", data)
	_, err := fs.ReadFile(view, "docs/nope.md")
	fmt.Println(err)
	// Output:
	// . true
	// README.md false
	// docs true
	// docs/api.md false
	// docs/guide.md false
	// "# Guide\n"
	// open docs/nope.md: not found: /docs/nope.md
}
