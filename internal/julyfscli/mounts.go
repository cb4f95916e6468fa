package julyfscli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
)

func mountsCommand() *cli.Command {
	return &cli.Command{
		Name:  "mounts",
		Usage: "print the mount table the flags and config describe",
		Description: `Prints one line per mount: PREFIX, KIND, SOURCE and MODE (rw or ro), in the
order the tree composes them. SOURCE is the directory of a local mount, - for
an empty temp tree, and the layers or nested mounts of an overlay or union.
It checks the flags and the config (directories must exist) without opening
anything. --json prints the same as a JSON array.

Mount flags: --mount PREFIX=KIND:ARG[?ro], repeatable.
   PREFIX   where the tree appears: / or an absolute path such as /repo
   KIND:ARG local:DIR (a host directory; relative to the working directory)
            temp:     (an empty in-memory tree, gone when julyfs exits)
            hostfiles:DIR or hostfiles:postgres://USER:PASS@HOST/DB
                      (durable host files shared by processes and hosts;
                      ?scope=deployment (default) or ?scope=session; the
                      password is never printed)
   ?ro      read-only: writes and deletes fail with "read-only mount: PATH"

A single mount at / is the tree itself; several mounts compose a union in
which each path goes to the mount with the longest matching prefix, and a
path no mount covers fails with "no mount for path: PATH".

Config files (--config FILE, YAML) describe what flags cannot. Relative
directories resolve against the file's own directory:

   mounts:
     /repo: { local: ./src }
     /notes: { temp: {} }              # or temp: { /todo.md: "seed text" }
     /docs:
       overlay:                        # read-only layers, earlier layers win
         - local: ./docs-local
         - local: ./docs
     /vendor: { local: ./vendor, ro: true }
     /ext:
       union:                          # a nested mount table
         /a: { local: ./a }
         /b: local:./b?ro              # the flag form also works here

--mount flags add to the config; a flag for a prefix the config has replaces
that entry.

Examples:
   julyfs mounts --config root.yaml
   julyfs mounts --config root.yaml --mount /notes=local:./notes
   julyfs mounts --mount /repo=local:. --mount /tmp=temp: --json`,
		Flags: withTreeFlags(
			&cli.BoolFlag{Name: "json", Usage: "print the table as JSON"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usagef(c, "mounts takes no arguments, got %q", c.Args().First())
			}
			table, err := tourTable(c)
			if table == nil {
				table, err = LoadTable(c)
			}
			if err != nil {
				return err
			}
			out := newOutput(c)
			if c.Bool("json") {
				type row struct {
					Prefix string `json:"prefix"`
					Kind   string `json:"kind"`
					Source string `json:"source"`
					Mode   string `json:"mode"`
				}
				rows := make([]row, 0, len(table))
				for _, m := range table {
					rows = append(rows, row{m.Prefix, m.Spec.Kind, m.Spec.Arg(), m.Spec.Mode()})
				}
				data, err := json.MarshalIndent(rows, "", "  ")
				if err != nil {
					return err
				}
				out.write(append(data, '\n'))
				return out.done(nil)
			}
			tw := tabwriter.NewWriter(out.w, 0, 0, 2, ' ', 0)
			for _, m := range table {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", vfs.DisplayPath(m.Prefix), m.Spec.Kind, source(m.Spec), m.Spec.Mode())
			}
			if err := tw.Flush(); err != nil {
				return out.done(err)
			}
			return out.done(nil)
		},
	}
}

// source renders a spec's SOURCE column: its Arg, or - when empty.
func source(s rootspec.Spec) string {
	if a := s.Arg(); a != "" {
		return vfs.DisplayPath(a) // a host directory may hold any byte
	}
	return "-"
}
