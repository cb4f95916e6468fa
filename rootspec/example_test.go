package rootspec_test

import (
	"context"
	"fmt"
	"log"

	"gopkg.in/yaml.v3"

	"github.com/julyfs/julyfs/rootspec"
)

// Parse --mount flags and build the composed tree.
func ExampleParseMounts() {
	table, err := rootspec.ParseMounts([]string{"/notes=temp:", "/docs=temp:?ro"}, ".")
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range table {
		fmt.Println(m.Prefix, m.Spec.Kind, m.Spec.Mode())
	}
	ctx := context.Background()
	root, err := table.Open(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()
	fmt.Println(root.FS.Write(ctx, "/notes/a.md", []byte("hi")))
	fmt.Println(root.FS.Write(ctx, "/docs/a.md", []byte("hi")))
	fmt.Println(root.FS.Write(ctx, "/other/a.md", []byte("hi")))
	// Output:
	// /notes temp rw
	// /docs temp ro
	// <nil>
	// read-only mount: /docs/a.md
	// no mount for path: /other/a.md
}

// Decode the mount mapping embedded under another key of a YAML document,
// as the runner does with root: in agent.yaml.
func ExampleDecodeMounts() {
	var doc struct {
		Name string    `yaml:"name"`
		Root yaml.Node `yaml:"root"`
	}
	src := `
name: notes
root:
  /: { temp: { /notes.md: hello } }
  /scratch: { tmp: {} }
`
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		log.Fatal(err)
	}
	_, err := rootspec.DecodeMountsFile(&doc.Root, "agent.yaml", ".")
	fmt.Println(err)
	// Output:
	// agent.yaml:5: /scratch: unknown key "tmp" (kinds: hostfiles, local, overlay, plugin, temp, union; options: readonly, ro)
}
