package julyfscli

import (
	"bufio"
	"errors"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/julyfs/julyfs/rootspec"
	"github.com/julyfs/julyfs/vfs"
)

// treeFlags are the flags that describe the tree: repeatable --mount and
// --config. Every command that opens a tree takes them.
func treeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{
			Name:  "mount",
			Usage: "mount a tree; `SPEC` is PREFIX=KIND:ARG[?ro]: /=local:DIR, /notes=temp: (repeatable)",
		},
		&cli.StringFlag{
			Name:  "config",
			Usage: "read mounts from a YAML `FILE` (see 'julyfs help mounts'); --mount adds to it and replaces its entry for the same prefix",
		},
		&cli.StringFlag{
			Name:  "agent",
			Usage: "the tree of the agent in `DIR`: the root: of its agent.yaml, as its model sees it (not with --config)",
		},
	}
}

// withTreeFlags returns flags followed by the tree flags.
func withTreeFlags(flags ...cli.Flag) []cli.Flag { return append(flags, treeFlags()...) }

// DefaultPluginTimeout bounds each call of a one-shot verb (ls, cat, grep,
// ...) to a plugin tree: a plugin that answers nothing for this long fails
// the call with "no answer within 1m0s" instead of hanging the command.
const DefaultPluginTimeout = time.Minute

const pluginTimeoutFlag = "plugin-timeout"

// verbFlags are the tree flags of a one-shot verb: treeFlags and
// --plugin-timeout.
func verbFlags() []cli.Flag {
	return append(treeFlags(), &cli.DurationFlag{
		Name:  pluginTimeoutFlag,
		Value: DefaultPluginTimeout,
		Usage: "fail a call to a plugin: mount that answers nothing for `DURATION` (0: wait for good)",
	})
}

// withVerbFlags returns flags followed by the verb flags.
func withVerbFlags(flags ...cli.Flag) []cli.Flag { return append(flags, verbFlags()...) }

// pluginTimeout is c's --plugin-timeout, DefaultPluginTimeout for a
// command without the flag.
func pluginTimeout(c *cli.Context) time.Duration {
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), pluginTimeoutFlag) {
			return c.Duration(pluginTimeoutFlag)
		}
	}
	return DefaultPluginTimeout
}

// treeKey is the context key under which the tour hands its tree to the
// commands it runs.
type treeKey struct{}

// LoadTable returns the mount table described by the tree flags of c.
func LoadTable(c *cli.Context) (rootspec.Table, error) {
	var table rootspec.Table
	if dir := c.String("agent"); dir != "" {
		if c.String("config") != "" {
			return nil, Usagef(c, "--agent and --config both name the mount table: give one")
		}
		t, err := AgentTable(dir)
		if err != nil {
			return nil, err
		}
		table = t
	}
	if file := c.String("config"); file != "" {
		t, err := rootspec.LoadFile(file)
		if err != nil {
			return nil, err
		}
		table = t
	}
	if values := c.StringSlice("mount"); len(values) > 0 {
		cwd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		flags, err := rootspec.ParseMounts(values, cwd)
		if err != nil {
			return nil, err
		}
		table = table.Override(flags)
	}
	if len(table) == 0 {
		return nil, Usagef(c, "%v", rootspec.ErrNoMounts)
	}
	return table, nil
}

// OpenTree builds the tree of c's flags (or takes the tour's). The caller
// calls close when done.
func OpenTree(c *cli.Context) (fsys vfs.FileSystem, close func(), err error) {
	if t, ok := c.Context.Value(treeKey{}).(*tourTree); ok {
		return t.fsys, func() {}, nil
	}
	table, err := LoadTable(c)
	if err != nil {
		return nil, nil, err
	}
	if err := delegatePlugins(c, table); err != nil {
		return nil, nil, err
	}
	ctx := c.Context
	if d := pluginTimeout(c); d > 0 && table.NeedsPlugins() {
		ctx = rootspec.WithPluginCallTimeout(ctx, d, "raise it with --"+pluginTimeoutFlag+", 0 for no bound")
	}
	root, err := table.Open(ctx)
	if err != nil {
		return nil, nil, err
	}
	return root.FS, func() { root.Close() }, nil
}

// output writes lines to the command's stdout as they come: buffered, and
// flushed after every line when stdout is a terminal. The first write
// error is kept and stops further writes; callers stop their loops when a
// write reports false and return err.
type output struct {
	w     *bufio.Writer
	flush bool
	err   error
}

func newOutput(c *cli.Context) *output {
	w := c.App.Writer
	o := &output{w: bufio.NewWriterSize(w, 64<<10)}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		o.flush = true
	}
	return o
}

// line writes s and a newline; it reports whether writing may go on.
func (o *output) line(s string) bool {
	if o.err != nil {
		return false
	}
	o.w.WriteString(s)
	o.w.WriteByte('\n')
	if o.flush {
		o.err = o.w.Flush()
	}
	return o.err == nil
}

// write writes p as is; it reports whether writing may go on.
func (o *output) write(p []byte) bool {
	if o.err != nil {
		return false
	}
	_, o.err = o.w.Write(p)
	if o.err == nil && o.flush {
		o.err = o.w.Flush()
	}
	return o.err == nil
}

// done flushes and returns the first write error, or err when there was
// none. A write error (a closed pipe) takes precedence: the stream was
// stopped because of it.
func (o *output) done(err error) error {
	if o.err == nil {
		o.err = o.w.Flush()
	}
	if o.err != nil {
		return o.err
	}
	return displayErr(err)
}

// displayErr returns err with the paths and patterns of its contract
// errors shown by vfs.DisplayPath (Go-quoted when they hold control
// characters or invalid UTF-8), also inside an errors.Join.
func displayErr(err error) error {
	switch e := err.(type) {
	case *vfs.PathError:
		c := *e
		c.Path, c.Pattern = vfs.DisplayPath(c.Path), vfs.DisplayPath(c.Pattern)
		return &c
	case interface{ Unwrap() []error }:
		errs := e.Unwrap()
		out := make([]error, len(errs))
		for i, x := range errs {
			out[i] = displayErr(x)
		}
		return errors.Join(out...)
	}
	return err
}
