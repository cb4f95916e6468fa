package julyfscli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/julyfs/julyfs/internal/clirun"
	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/vfstest"
)

// DefaultCheckTimeout is how long julyfs conformance gives each check.
const DefaultCheckTimeout = 10 * time.Second

func conformanceCommand() *cli.Command {
	return &cli.Command{
		Name:      "conformance",
		Usage:     "check a tree against the filesystem contract (the vfs/vfstest suite)",
		ArgsUsage: " ",
		Description: `Runs every check of the conformance suite the built-in trees pass on fresh
trees built from the mount flags, and prints one line per check ("ok NAME" or
"FAIL NAME: reason"), then "N passed, M failed". Exits 1 when a check fails.

Each check needs a tree holding exactly its fixture files. A writable tree
is cleared and written with them; it must be empty at the start, because
conformance writes and deletes. A plugin mounted at / is asked to build
each fixture itself when it can (plugins.ServeOptions.Seed), which is how
read-only plugins are checked: pass --read-only, and writes must fail with
"read-only mount".

Each check has --check-timeout (default 10s): a tree that has not answered
by then fails it as "FAIL List/children: no answer within 10s", and the run
goes on to the next check. Every call to a plugin is bounded the same way,
so a hung plugin cannot hang the setup either.

Examples:
   julyfs conformance --mount /=temp:
   julyfs conformance --mount /=plugin:./bin/my-backend
   julyfs conformance --mount /=plugin:julyfs-git --read-only
   julyfs conformance --mount /=local:/tmp/empty --json`,
		Flags: withTreeFlags(
			&cli.BoolFlag{Name: "read-only", Usage: "the tree refuses writes: check that Write and Delete fail with read-only mount"},
			&cli.BoolFlag{Name: "host-grep-root", Usage: "grep of a missing scope fails with not found, as on a host directory (set when / is a local: mount)"},
			&cli.BoolFlag{Name: "keeps-empty-dirs", Usage: "the tree keeps a directory after its last file goes (set for local: mounts)"},
			&cli.BoolFlag{Name: "no-delete", Usage: "the tree cannot delete: check that Delete fails with delete not supported"},
			&cli.BoolFlag{Name: "has-index", Usage: "the tree serves Search: check its order and limits"},
			&cli.StringFlag{Name: "run", Usage: "run only the checks whose name matches `REGEXP`"},
			&cli.DurationFlag{Name: "check-timeout", Aliases: []string{"timeout"}, Value: DefaultCheckTimeout, Usage: "give each check `DURATION`: one that has not ended by then fails with \"no answer within DURATION\" and the run goes on"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON document instead of lines"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return Usagef(c, "conformance takes no arguments, got %d", c.NArg())
			}
			table, err := LoadTable(c)
			if err != nil {
				return err
			}
			if err := delegatePlugins(c, table); err != nil {
				return err
			}
			var re *regexp.Regexp
			if s := c.String("run"); s != "" {
				if re, err = regexp.Compile(s); err != nil {
					return Usagef(c, "--run: %v", err)
				}
			}
			opts := vfstest.Options{
				ReadOnly:       c.Bool("read-only"),
				KeepsEmptyDirs: c.Bool("keeps-empty-dirs") || hasLocal(table),
				NoDelete:       c.Bool("no-delete"),
				HasIndex:       c.Bool("has-index"),
				HostGrepRoot:   c.Bool("host-grep-root") || localRoot(table),
			}
			// A plugin's every call is bounded too, so the setup and
			// the clean-up between checks cannot hang either.
			timeout := c.Duration("check-timeout")
			ctx := c.Context
			if timeout > 0 {
				ctx = rootspec.WithPluginCallTimeout(ctx, timeout, "raise it with --check-timeout")
			}
			tb := &trees{table: table, readOnly: opts.ReadOnly}
			defer tb.closeAll()
			// Fail early, once, when the tree cannot be built or seeded.
			if _, err := tb.newFS(ctx, map[string][]byte{}); err != nil {
				return err
			}
			tb.closeAll()

			out := newOutput(c)
			type jsonCheck struct {
				Name     string   `json:"name"`
				Passed   bool     `json:"passed"`
				Failures []string `json:"failures,omitempty"`
			}
			var report struct {
				Mounts []string    `json:"mounts"`
				Checks []jsonCheck `json:"checks"`
				Passed int         `json:"passed"`
				Failed int         `json:"failed"`
			}
			for _, m := range table {
				report.Mounts = append(report.Mounts, m.String())
			}
			report.Checks = []jsonCheck{}
			asJSON := c.Bool("json")
			vfstest.RunEach(c.Context, func(files map[string][]byte) (vfs.FileSystem, error) {
				return tb.newFS(ctx, files)
			}, opts, vfstest.EachOptions{Run: re, Timeout: timeout}, func(r vfstest.Result) {
				tb.closeAll()
				if len(r.Failures) == 0 {
					report.Passed++
				} else {
					report.Failed++
				}
				if asJSON {
					report.Checks = append(report.Checks, jsonCheck{Name: r.Name, Passed: len(r.Failures) == 0, Failures: r.Failures})
					return
				}
				if len(r.Failures) == 0 {
					out.line("ok   " + r.Name)
					return
				}
				out.line("FAIL " + r.Name + ": " + escapeLine(r.Failures[0]))
				for _, f := range r.Failures[1:] {
					out.line("     " + escapeLine(f))
				}
			})
			tb.closeAll()
			if err := tb.finish(ctx); err != nil {
				return err
			}
			if asJSON {
				data, err := json.MarshalIndent(report, "", "  ")
				if err != nil {
					return err
				}
				out.line(string(data))
			} else {
				out.line(fmt.Sprintf("%d passed, %d failed", report.Passed, report.Failed))
			}
			if err := out.done(nil); err != nil {
				return err
			}
			if report.Failed > 0 {
				return fmt.Errorf("conformance failed: %w", clirun.ErrSilent)
			}
			if c.Context.Err() != nil {
				return c.Context.Err()
			}
			return nil
		},
	}
}

// escapeLine quotes the control characters of a failure message (a check
// may name a path or contents holding them) so each failure stays one line.
func escapeLine(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func hasLocal(t rootspec.Table) bool {
	return slices.ContainsFunc(t, func(m rootspec.Mount) bool { return m.Spec.Kind == rootspec.KindLocal })
}

// localRoot reports a table whose root is a host directory, where grep of
// a missing scope is "not found" (vfstest.Options.HostGrepRoot).
func localRoot(t rootspec.Table) bool {
	return slices.ContainsFunc(t, func(m rootspec.Mount) bool {
		return m.Prefix == "/" && m.Spec.Kind == rootspec.KindLocal
	})
}

// removeHostLinks removes the symbolic links under the writable local:
// mounts' directories: links a check made that lead out of the root (or
// nowhere) are not listed by the tree, so reset cannot see them.
func removeHostLinks(t rootspec.Table) error {
	for _, m := range t {
		if m.Spec.Kind != rootspec.KindLocal || m.Spec.ReadOnly || m.Spec.Dir == "" {
			continue
		}
		err := filepath.WalkDir(m.Spec.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type()&fs.ModeSymlink != 0 {
				return os.Remove(p)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("clearing %s: %w", m.Prefix, err)
		}
	}
	return nil
}

// trees builds the fresh trees the checks ask for and closes them after
// each check.
type trees struct {
	table    rootspec.Table
	readOnly bool

	mu      sync.Mutex
	closers []func()
	seeding bool // the plugin at / builds fixtures itself
	checked bool // a writable tree was found empty once
	noSeed  bool
}

func (tb *trees) closeAll() {
	tb.mu.Lock()
	cs := tb.closers
	tb.closers = nil
	tb.mu.Unlock()
	for _, c := range cs {
		c()
	}
}

func (tb *trees) keep(c func()) {
	tb.mu.Lock()
	tb.closers = append(tb.closers, c)
	tb.mu.Unlock()
}

// seedable returns the plugin spec at / when the table is one plugin
// mount there.
func (tb *trees) seedable() *rootspec.PluginSpec {
	if len(tb.table) == 1 && tb.table[0].Prefix == "/" && tb.table[0].Spec.Kind == rootspec.KindPlugin && !tb.noSeed {
		return tb.table[0].Spec.Plugin
	}
	return nil
}

func (tb *trees) newFS(ctx context.Context, files map[string][]byte) (vfs.FileSystem, error) {
	if p := tb.seedable(); p != nil {
		fsys, closer, err := p.OpenSeeded(ctx, files)
		switch {
		case err == nil:
			tb.keep(func() { closer.Close() })
			return fsys, nil
		case errors.Is(err, rootspec.ErrPluginNoSeed) && !tb.readOnly:
			tb.noSeed = true // check it as a writable tree instead
		default:
			return nil, err
		}
	}
	if tb.readOnly {
		return nil, errors.New("--read-only needs a tree that can be built with given files: a plugin mounted at / with ServeOptions.Seed (other read-only trees cannot be seeded)")
	}
	for _, m := range tb.table {
		if !m.Spec.Writable() {
			return nil, fmt.Errorf("%s is read-only, so conformance cannot write the fixtures into it; check a writable tree, or a plugin mounted at / that can seed (with --read-only)", m.String())
		}
	}
	root, err := tb.table.Open(ctx)
	if err != nil {
		return nil, err
	}
	tb.keep(func() { root.Close() })
	if err := tb.reset(ctx, root.FS); err != nil {
		return nil, err
	}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range files {
			if !yield(p) {
				return
			}
		}
	}) {
		if err := root.FS.Write(ctx, p, files[p]); err != nil {
			return nil, fmt.Errorf("seeding %s: %w", p, err)
		}
	}
	return root.FS, nil
}

// finish removes what the last check left in a writable tree.
func (tb *trees) finish(ctx context.Context) error {
	if !tb.checked {
		return nil
	}
	root, err := tb.table.Open(ctx)
	if err != nil {
		return err
	}
	defer root.Close()
	return tb.reset(ctx, root.FS)
}

// reset empties a writable tree: the first time it must already be empty
// (conformance never deletes what it did not write); later it deletes
// what the previous checks left.
func (tb *trees) reset(ctx context.Context, fsys vfs.FileSystem) error {
	var all []vfs.DirEntry
	for e, err := range fsys.Glob(ctx, "**", "/") {
		if err != nil {
			return err
		}
		all = append(all, e)
	}
	if !tb.checked {
		// Directories alone (a union's mount points) are not contents.
		if i := slices.IndexFunc(all, func(e vfs.DirEntry) bool { return e.Kind == vfs.KindFile }); i >= 0 {
			return fmt.Errorf("the tree is not empty (it holds %s): conformance writes and deletes, so point it at an empty tree", escapeLine(all[i].Path))
		}
		tb.checked = true
		return nil
	}
	if err := removeHostLinks(tb.table); err != nil {
		return err
	}
	for _, e := range slices.Backward(all) {
		if e.Kind != vfs.KindFile {
			// Best effort: a directory that stays (a union's mount
			// point) is not contents.
			vfs.RemoveDir(ctx, fsys, e.Path)
			continue
		}
		if err := fsys.Delete(ctx, e.Path); err != nil && !errors.Is(err, vfs.ErrNotFound) {
			return fmt.Errorf("clearing %s: %w", escapeLine(e.Path), err)
		}
	}
	return nil
}
