package full

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/julyfs/julyfs/internal/julyfscli"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/index"
)

// openIndex wraps fsys with the index in dir (search --index DIR, mount
// --index DIR). The caller calls close when done (it waits until the index
// is on disk).
func openIndex(c *cli.Context, fsys vfs.FileSystem, dir string) (vfs.FileSystem, func() error, error) {
	mode, err := index.ParseSyncMode(c.String("sync"))
	if err != nil {
		return nil, nil, julyfscli.Usagef(c, "--sync: %v", err)
	}
	tree, err := treeID(c)
	if err != nil {
		return nil, nil, err
	}
	opts := index.Options{
		Rebuild: c.Bool("rebuild"),
		Sync:    mode,
		Tree:    tree,
		// A mount serves until unmounted: it follows the tree's changes
		// (inotify for local: trees) rather than syncing per search.
		Follow: c.Command != nil && c.Command.Name == "mount",
		Log:    func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) },
	}
	f, err := index.Open(c.Context, fsys, dir, opts)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// treeID describes the tree of c's flags for index.Options.Tree: its
// mounts as PREFIX=KIND:ARG (local directories absolute), sorted, so an
// index is refused for another tree whatever the working directory.
func treeID(c *cli.Context) (string, error) {
	table, err := julyfscli.LoadTable(c)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, m := range table {
		parts = append(parts, m.Prefix+"="+m.Spec.Source())
	}
	slices.Sort(parts)
	return strings.Join(parts, " "), nil
}

// indexBuild is 'julyfs index build', its arguments checked.
func indexBuild(c *cli.Context) error {
	fsys, closeTree, err := julyfscli.OpenTree(c)
	if err != nil {
		return err
	}
	defer closeTree()
	if os.Getenv("GOMEMLIMIT") == "" {
		// A build analyses batches on every core; the soft limit makes
		// the garbage collector work harder rather than let the heap
		// double past it (see docs/perf/index.md).
		debug.SetMemoryLimit(index.BuildMemoryLimit)
	}
	progress, finish := progressReporter(c.App.ErrWriter)
	tree, err := treeID(c)
	if err != nil {
		return err
	}
	opts := index.Options{
		Rebuild:     c.Bool("rebuild"),
		Tree:        tree,
		MaxFileSize: c.Int64("max-file-size"),
		// A build reads the tree into the index itself, even when a
		// mount follows it (it then fails: in use).
		Direct:   true,
		Progress: progress,
		Log:      func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) },
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

// indexFollow is 'julyfs index follow', its arguments checked.
func indexFollow(c *cli.Context) error {
	fsys, closeTree, err := julyfscli.OpenTree(c)
	if err != nil {
		return err
	}
	defer closeTree()
	tree, err := treeID(c)
	if err != nil {
		return err
	}
	dir := c.String("index")
	f, err := index.Open(c.Context, fsys, dir, index.Options{
		Sync:   index.SyncAuto,
		Tree:   tree,
		Follow: true,
		Log:    func(msg string) { fmt.Fprintln(c.App.ErrWriter, msg) },
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.ErrWriter, "following %s for index %s (%s); julyfs search --index asks this process; Ctrl-C to stop\n",
		vfs.DisplayPath(tree), vfs.DisplayPath(dir), f.Stats())
	<-c.Context.Done()
	return f.Close()
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
