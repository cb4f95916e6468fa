package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
)

// indexFlags are the flags of a command that can serve Search from an
// index: --index DIR (and --rebuild).
func indexFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:  "index",
			Usage: "serve search from the index in `DIR` (built or brought up to date first; see 'julyfs index build')",
		},
		&cli.BoolFlag{
			Name:  "rebuild",
			Usage: "with --index: discard the index (damaged or not) and build it anew",
		},
	}
}

// openIndex wraps fsys with the index named by c's --index flag, when
// given; otherwise it returns fsys. The caller calls close when done (it
// waits until the index is on disk).
func openIndex(c *cli.Context, fsys vfs.FileSystem) (vfs.FileSystem, func() error, error) {
	dir := c.String("index")
	if dir == "" {
		return fsys, func() error { return nil }, nil
	}
	opts := index.Options{
		Rebuild: c.Bool("rebuild"),
		Log:     func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) },
	}
	if n := c.Int64("max-file-size"); n > 0 {
		opts.MaxFileSize = n
	}
	f, err := index.Open(c.Context, fsys, dir, opts)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

func indexCommand() *cli.Command {
	return &cli.Command{
		Name:  "index",
		Usage: "build and maintain search indexes",
		Subcommands: []*cli.Command{
			{
				Name:  "build",
				Usage: "index the tree for search, or bring an index up to date",
				Description: `Indexes every text file of the tree into DIR so 'julyfs search --index DIR'
can rank files by relevance. Binary files and files over --max-file-size
are skipped. Run it again to bring the index up to date: only files whose
size, modification time or etag changed are read again, and files gone from
the tree are dropped. An interrupted build resumes where it stopped.

On a terminal a progress bar shows on stderr; the summary line goes to
stdout:

   12345 files: 10734 indexed (94.0 MiB), 0 unchanged, 0 removed, 736 skipped binary, 8 skipped too large in 14.2s

A damaged index fails with a message naming --rebuild, which discards it
and builds anew. An index written by another julyfs format version is
rebuilt automatically.

Examples:
   julyfs index build --mount /repo=local:./src --index .julyfs/index
   julyfs search --mount /repo=local:./src --index .julyfs/index 'parse http header' --max 10`,
				Flags: withTreeFlags(
					&cli.StringFlag{Name: "index", Usage: "the index `DIR` (created when missing)", Required: true},
					&cli.BoolFlag{Name: "rebuild", Usage: "discard the index (damaged or not) and build it anew"},
					&cli.Int64Flag{Name: "max-file-size", Value: index.DefaultMaxFileSize, Usage: "skip files larger than `BYTES`"},
				),
				Action: indexBuild,
			},
		},
	}
}

func indexBuild(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef(c, "index build takes no arguments, got %d", c.NArg())
	}
	fsys, closeTree, err := openTree(c)
	if err != nil {
		return err
	}
	defer closeTree()
	progress, finish := progressReporter(c.App.ErrWriter)
	opts := index.Options{
		Rebuild:     c.Bool("rebuild"),
		MaxFileSize: c.Int64("max-file-size"),
		Progress:    progress,
		Log:         func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) },
	}
	f, err := index.Open(c.Context, fsys, c.String("index"), opts)
	finish()
	if err != nil {
		return err
	}
	st := f.Stats()
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(c.App.Writer, st)
	return err
}

// progressReporter returns an index.Options.Progress that draws a progress
// bar on w when w is a terminal, and a function that clears it.
func progressReporter(w io.Writer) (func(index.Progress), func()) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, func() {}
	}
	var bar *progressbar.ProgressBar
	newBar := func(max int, desc string) *progressbar.ProgressBar {
		return progressbar.NewOptions(max,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetItsString("files"),
			progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	report := func(p index.Progress) {
		switch p.Phase {
		case index.PhaseScan:
			if bar == nil {
				bar = newBar(-1, "scanning")
			}
			bar.Set(p.Done)
		case index.PhaseIndex:
			if p.Done == 0 || bar == nil {
				if bar != nil {
					bar.Finish()
				}
				bar = newBar(p.Total, "indexing")
			}
			bar.Set(p.Done)
		}
	}
	finish := func() {
		if bar != nil {
			bar.Finish()
			bar = nil
		}
	}
	return report, finish
}
