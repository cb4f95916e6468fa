package julyfscli

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
)

// demo is the tour's tree: a few docs and the code of a small service.
//
//go:embed testdata/demo
var demo embed.FS

// tourTree is what the tour hands the commands it runs, in their context:
// the tree, and the table it was built from for mounts.
type tourTree struct {
	table rootspec.Table
	fsys  vfs.FileSystem
}

// tourTable returns the tour's table when c runs inside the tour.
func tourTable(c *cli.Context) (rootspec.Table, error) {
	if t, ok := c.Context.Value(treeKey{}).(*tourTree); ok {
		return t.table, nil
	}
	return nil, nil
}

// demoTable composes the tour's tree from the embedded files: the docs
// read-only at /docs, the code writable at /src, an empty /notes.
func demoTable() (rootspec.Table, error) {
	files := func(dir string) (map[string][]byte, error) {
		m := map[string][]byte{}
		root := path.Join("testdata/demo", dir)
		err := fs.WalkDir(demo, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := demo.ReadFile(p)
			m[strings.TrimPrefix(p, root)] = data
			return err
		})
		return m, err
	}
	docs, err := files("docs")
	if err != nil {
		return nil, err
	}
	src, err := files("src")
	if err != nil {
		return nil, err
	}
	return rootspec.Table{
		{Prefix: "/docs", Spec: rootspec.Spec{Kind: rootspec.KindTemp, Files: docs, ReadOnly: true}},
		{Prefix: "/src", Spec: rootspec.Spec{Kind: rootspec.KindTemp, Files: src}},
		{Prefix: "/notes", Spec: rootspec.Spec{Kind: rootspec.KindTemp}},
	}, nil
}

// tourStep is one command of the tour and what it shows.
type tourStep struct {
	say   string   // the explanation printed before the command
	args  []string // argv after "julyfs"
	stdin string   // piped into the command, shown as echo ... |
}

var tourSteps = []tourStep{
	{say: "The tree has three mounts. Outside the tour you describe them with --mount\nflags or a --config file; `mounts` prints the table:",
		args: []string{"mounts"}},
	{say: "Mount points appear as directories at the root:",
		args: []string{"ls", "/"}},
	{say: "-l adds kind, size and modification time:",
		args: []string{"ls", "-l", "/src"}},
	{say: "glob finds paths by pattern; ** crosses directories:",
		args: []string{"glob", "**/*.go", "/"}},
	{say: "grep fans out to every mount, sorted by path then line (flags may follow\nthe positional arguments):",
		args: []string{"grep", "todo", "/", "-i"}},
	{say: "--glob keeps only files whose name matches:",
		args: []string{"grep", "func ", "/", "--glob", "*.go", "--max", "3"}},
	{say: "cat prints a file:",
		args: []string{"cat", "/docs/faq.md"}},
	{say: "write stores standard input; /notes is an in-memory mount:",
		args: []string{"write", "/notes/todo.md"}, stdin: "TODO: try julyfs on my own files\n"},
	{say: "The new file is searchable at once:",
		args: []string{"grep", "TODO", "/notes"}},
	{say: "/docs is mounted read-only, so writes fail with the contract's message:",
		args: []string{"write", "/docs/faq.md"}, stdin: "overwritten\n"},
	{say: "A path no mount covers:",
		args: []string{"cat", "/elsewhere/x.md"}},
}

func tourCommand(h Heavy) *cli.Command {
	return &cli.Command{
		Name:  "tour",
		Usage: "run every verb on a small tree built into julyfs (start here)",
		Description: `Composes a tree from files built into julyfs (docs mounted read-only at /docs,
the code of a small service at /src, an empty in-memory /notes) and runs
mounts, ls, glob, grep, cat and write on it, printing each command and its
output. Nothing on your disk is read or changed.

Example:
   julyfs tour`,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return Usagef(c, "tour takes no arguments")
			}
			table, err := demoTable()
			if err != nil {
				return err
			}
			root, err := table.Open(c.Context)
			if err != nil {
				return err
			}
			defer root.Close()
			ctx := context.WithValue(c.Context, treeKey{}, &tourTree{table: table, fsys: root.FS})
			return runTour(ctx, c.App.Writer, h)
		},
	}
}

// runTour runs the tour's steps against the tree in ctx, writing each
// command and its output (stderr included, in order) to w.
func runTour(ctx context.Context, w io.Writer, h Heavy) error {
	var b bytes.Buffer
	b.WriteString("julyfs tour: every command below runs on a tree built from files inside\njulyfs. Nothing on your disk is read or changed.\n")
	for _, s := range tourSteps {
		b.WriteString("\n" + s.say + "\n\n  $ ")
		if s.stdin != "" {
			fmt.Fprintf(&b, "echo %s | ", shellQuote(strings.TrimSuffix(s.stdin, "\n")))
		}
		b.WriteString("julyfs")
		for _, a := range s.args {
			b.WriteString(" " + shellQuote(a))
		}
		b.WriteString("\n")
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		b.Reset()
		out := &indentWriter{w: w, prefix: "  "}
		code := Run(ctx, append([]string{"julyfs"}, s.args...), strings.NewReader(s.stdin), out, out, h)
		if out.err != nil {
			return out.err
		}
		if code != 0 {
			fmt.Fprintf(&b, "  (exit status %d)\n", code)
		}
	}
	b.WriteString(`
That is the whole tour. Run the same commands on your own files with --mount:

  $ julyfs ls --mount /=local:. /
  $ julyfs grep --mount /repo=local:. --mount /scratch=temp: 'TODO' / --glob '*.go'

'julyfs help' lists the commands and 'julyfs help mounts' explains mounts and
config files.
`)
	_, err := w.Write(b.Bytes())
	return err
}

// indentWriter prefixes every line written through it.
type indentWriter struct {
	w       io.Writer
	prefix  string
	midLine bool
	err     error
}

func (iw *indentWriter) Write(p []byte) (int, error) {
	if iw.err != nil {
		return 0, iw.err
	}
	var b bytes.Buffer
	for _, line := range bytes.SplitAfter(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if !iw.midLine && line[0] != '\n' {
			b.WriteString(iw.prefix)
		}
		b.Write(line)
		iw.midLine = line[len(line)-1] != '\n'
	}
	if _, err := iw.w.Write(b.Bytes()); err != nil {
		iw.err = err
		return 0, err
	}
	return len(p), nil
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-=:") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
