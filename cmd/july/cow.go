package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/cowsession"
	"github.com/julyfs/julyfs/runner/host"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs"
)

// This file is july run --cow and the commands over a copy-on-write
// session's checkpoints: diff, log, rewind, fork, apply (docs/cow.md).

var cowFlag = &cli.BoolFlag{Name: "cow", Usage: "run on a copy-on-write layer over the agent's tree (kept with the session; the tree is not written)"}

// cowLayer is july run's OpenOptions.Layer: a session made with --cow
// (or by an agent with cow: true), or a continued one that has a layer,
// runs on a copy-on-write layer over the agent's tree, checkpointed at
// the end of every turn. A continued session without a layer runs as it
// was made, on the tree itself; asked for --cow, it is refused.
func cowLayer(c *cli.Context, a *runner.Agent, stderr io.Writer) func(context.Context, *sessions.Log, *runner.SessionOptions, *runner.LoopOptions) (func(), error) {
	on := c.Bool("cow") || a.Cow
	return cowsession.Hook(a, cowsession.HookOptions{New: on, Require: on, Warnf: func(format string, args ...any) {
		fmt.Fprintf(stderr, "july: warning: "+format+"\n", args...)
	}})
}

// serveLayer sets july serve's copy-on-write hook on the host of agent
// a: with --cow or cow: true every new session runs on a layer, and a
// session july run --cow made continues on its layer either way.
func serveLayer(c *cli.Context, a *runner.Agent, o *host.Options) error {
	on := c.Bool("cow") || a.Cow
	if on {
		if err := cowsession.Check(a); err != nil {
			return err
		}
	}
	o.Layer, o.NewLayer = cowsession.Hook(a, cowsession.HookOptions{New: on, Require: on, Warnf: o.Logf}), on
	return nil
}

// openTarget reads the copy-on-write session the command names.
func openTarget(c *cli.Context) (*cowsession.Session, error) {
	if c.NArg() != 2 && !(c.Command.Name == "mount" && c.NArg() == 3) {
		return nil, usagef(c, "want DIR SESSION, got %d arguments", c.NArg())
	}
	a, err := load(c)
	if err != nil {
		return nil, err
	}
	return cowsession.Open(a, sessions.New(stateRoot(c, a)), c.Args().Get(1))
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "what a copy-on-write session changed, as a unified diff",
		ArgsUsage: "DIR SESSION",
		Description: `Prints what the session (made with july run --cow) changed against the
agent's tree, git-style, coloured on a terminal: the layer as it is now, or
--turn N (what turn N changed), or --from A --to B (between two turns'
checkpoints; 0 is the tree itself). --stat prints files and +/- lines,
--name-only the paths, --json one object per file.`,
		Flags: []cli.Flag{stateRootFlag,
			&cli.IntFlag{Name: "turn", Usage: "what turn `N` changed"},
			&cli.IntFlag{Name: "from", Value: 0, Usage: "compare from turn `A`'s checkpoint (0: the tree)"},
			&cli.IntFlag{Name: "to", Value: -1, Usage: "compare to turn `B`'s checkpoint (default: the layer now)"},
			&cli.BoolFlag{Name: "stat", Usage: "files and +/- lines"},
			&cli.BoolFlag{Name: "name-only", Usage: "the changed paths"},
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per file"},
			&cli.StringFlag{Name: "color", Value: "auto", Usage: "colour: `auto`, always or never"},
		},
		Action: func(c *cli.Context) error {
			t, err := openTarget(c)
			if err != nil {
				return err
			}
			var diffs []checkpoint.FileDiff
			if c.IsSet("turn") {
				diffs, err = t.TurnDiff(c.Context, c.Int("turn"))
			} else {
				diffs, err = t.Diff(c.Context, c.Int("from"), c.Int("to"))
			}
			if err != nil {
				return err
			}
			colour := c.String("color") == "always" || c.String("color") == "auto" && isTerminal(c.App.Writer)
			return printDiffs(c.App.Writer, diffs, c.Bool("stat"), c.Bool("name-only"), c.Bool("json"), colour)
		},
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func printDiffs(w io.Writer, diffs []checkpoint.FileDiff, stat, names, asJSON, colour bool) error {
	switch {
	case asJSON:
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, d := range diffs {
			if err := enc.Encode(d); err != nil {
				return err
			}
		}
		return nil
	case names:
		for _, d := range diffs {
			fmt.Fprintln(w, vfs.DisplayPath(d.Path))
		}
		return nil
	case stat:
		added, removed := 0, 0
		tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
		for _, d := range diffs {
			change := fmt.Sprintf("+%d -%d", d.Added, d.Removed)
			if d.Binary {
				change = "binary"
			}
			fmt.Fprintf(tw, " %s\t| %s\t%s\n", vfs.DisplayPath(d.Path), change, d.Status)
			added, removed = added+d.Added, removed+d.Removed
		}
		tw.Flush()
		_, err := fmt.Fprintf(w, " %d files changed, %d insertions(+), %d deletions(-)\n", len(diffs), added, removed)
		return err
	}
	for _, d := range diffs {
		text := d.Unified
		if colour {
			text = colourDiff(text)
		}
		if _, err := io.WriteString(w, text); err != nil {
			return err
		}
	}
	return nil
}

func colourDiff(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git"), strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			b.WriteString("\x1b[1m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(line, "@@"):
			b.WriteString("\x1b[36m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(line, "+"):
			b.WriteString("\x1b[32m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		case strings.HasPrefix(line, "-"):
			b.WriteString("\x1b[31m" + strings.TrimSuffix(line, "\n") + "\x1b[0m\n")
		default:
			b.WriteString(line)
		}
	}
	return b.String()
}

func logCommand() *cli.Command {
	return &cli.Command{
		Name:      "log",
		Usage:     "one line per turn of a copy-on-write session: files changed, +/- lines",
		ArgsUsage: "DIR SESSION",
		Description: `Prints each turn of the session (made with july run --cow): its number,
id, how it ended, the files it changed with lines added and removed, and its
message. Turns a rewind left are marked "(rewound)"; rewinds are shown
where they happened.`,
		Flags: []cli.Flag{stateRootFlag},
		Action: func(c *cli.Context) error {
			t, err := openTarget(c)
			if err != nil {
				return err
			}
			w := c.App.Writer
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TURN\tID\tSTATUS\tFILES\t+/-\tMESSAGE")
			for _, ti := range t.Turns {
				files, plus := "-", "-"
				if diffs, err := t.TurnDiff(c.Context, ti.Num); err == nil {
					a, r := 0, 0
					for _, d := range diffs {
						a, r = a+d.Added, r+d.Removed
					}
					files, plus = fmt.Sprint(len(diffs)), fmt.Sprintf("+%d -%d", a, r)
				} else if !errors.Is(err, checkpoint.ErrNoCheckpoint) {
					return err
				}
				status := ti.Status
				if !t.Live(ti.Num) {
					status += " (rewound)"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", ti.Num, ti.ID, status, files, plus, oneLine(ti.Message, 60))
			}
			return tw.Flush()
		},
	}
}

// lockSession holds the copy-on-write session the command names.
func lockSession(c *cli.Context) (*cowsession.Held, error) {
	if c.NArg() != 2 {
		return nil, usagef(c, "want DIR SESSION, got %d arguments", c.NArg())
	}
	a, err := load(c)
	if err != nil {
		return nil, err
	}
	h, warns, err := cowsession.Hold(c.Context, a, sessions.New(stateRoot(c, a)), c.Args().Get(1))
	for _, w := range warns {
		fmt.Fprintf(c.App.ErrWriter, "july: warning: %s\n", w)
	}
	return h, err
}

func rewindCommand() *cli.Command {
	return &cli.Command{
		Name:      "rewind",
		Usage:     "put a copy-on-write session's files and conversation back to the end of a turn",
		ArgsUsage: "DIR SESSION",
		Description: `Resets the session's layer to turn N's checkpoint (--to 0: the tree as it
is, no change) and its conversation to the end of turn N: the log keeps every
event, a session.rewound event marks the point, and the next turn's model
sees the conversation without the turns after N. A running turn refuses
(session in use).`,
		Flags: []cli.Flag{stateRootFlag, &cli.IntFlag{Name: "to", Required: true, Usage: "turn `N` (0: before the first)"}},
		Action: func(c *cli.Context) error {
			t, err := lockSession(c)
			if err != nil {
				return err
			}
			defer t.Close()
			n := c.Int("to")
			if err := t.Rewind(n); err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "july: session %s rewound to the end of turn %d\n", t.ID, n)
			return nil
		},
	}
}

func forkCommand() *cli.Command {
	return &cli.Command{
		Name:      "fork",
		Usage:     "start a new copy-on-write session from a turn of another",
		ArgsUsage: "DIR SESSION",
		Description: `Makes a new session whose conversation is the session's up to the end of
turn N (its events copied, renumbered) and whose layer starts at turn N's
checkpoint (the file contents are hard-linked, not copied); session.json
names the parent (forkOf). Prints the new session's id.`,
		Flags: []cli.Flag{stateRootFlag, &cli.IntFlag{Name: "at", Required: true, Usage: "turn `N`"}},
		Action: func(c *cli.Context) error {
			t, err := openTarget(c)
			if err != nil {
				return err
			}
			id, err := t.Fork(c.Int("at"))
			if err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, id)
			return nil
		},
	}
}

func applyCommand() *cli.Command {
	return &cli.Command{
		Name:      "apply",
		Usage:     "write a copy-on-write session's changes into the agent's tree",
		ArgsUsage: "DIR SESSION",
		Description: `Writes each change of the session's layer into the tree, compare-and-swap
against what the tree had when the session first changed the path: a path
changed behind the session's back since is a conflict, listed (with the
three versions: the base's when the session first changed it, the tree's
now, the session's) and not written; the rest is
written and leaves the layer, so the session goes on over the new tree.
--dry-run lists what would happen. A rerun after a crash completes the
apply: a change the tree already holds counts as done. Exits 1 when there
were conflicts.`,
		Flags: []cli.Flag{stateRootFlag, &cli.BoolFlag{Name: "dry-run", Usage: "list what would be written"}},
		Action: func(c *cli.Context) error {
			t, err := lockSession(c)
			if err != nil {
				return err
			}
			defer t.Close()
			acts, err := t.Apply(c.Context, c.Bool("dry-run"))
			w := c.App.Writer
			conflicts := 0
			for _, a := range acts {
				switch {
				case a.Conflict != "":
					conflicts++
					fmt.Fprintf(w, "conflict %s %s: %s\n", a.Op, vfs.DisplayPath(a.Path), a.Conflict)
					printThreeWay(w, a.ThreeWay)
				case a.Done:
					fmt.Fprintf(w, "done     %s %s\n", a.Op, vfs.DisplayPath(a.Path))
				case c.Bool("dry-run"):
					fmt.Fprintf(w, "would    %s %s\n", a.Op, vfs.DisplayPath(a.Path))
				default:
					fmt.Fprintf(w, "applied  %s %s\n", a.Op, vfs.DisplayPath(a.Path))
				}
			}
			if err != nil {
				return err
			}
			if conflicts > 0 {
				fmt.Fprintf(c.App.ErrWriter, "july: %d conflicts: the tree changed there since the session first changed them; they stay in the session\n", conflicts)
				return errReported
			}
			return nil
		},
	}
}

// printThreeWay prints a conflict's three versions, indented under it:
// what the tree's change and the session's change each made of the
// base's version.
func printThreeWay(w io.Writer, tw *checkpoint.ThreeWay) {
	if tw == nil {
		return
	}
	if tw.Note != "" {
		fmt.Fprintf(w, "    (%s)\n", tw.Note)
	}
	for _, part := range []struct{ title, text string }{{"the tree's change since", tw.Tree}, {"the session's change", tw.Session}} {
		if part.text == "" {
			continue
		}
		fmt.Fprintf(w, "    %s:\n", part.title)
		for _, line := range strings.SplitAfter(strings.TrimSuffix(part.text, "\n"), "\n") {
			fmt.Fprintf(w, "    %s", line)
		}
		fmt.Fprintln(w)
	}
}

// printCheckpoint prints a turn's checkpoint in july show's transcript.
func printCheckpoint(w io.Writer, cp *sessions.Checkpoint) {
	switch {
	case cp == nil:
	case cp.Error != "":
		fmt.Fprintf(w, "-- no checkpoint of turn %d: %s\n", cp.Turn, cp.Error)
	default:
		fmt.Fprintf(w, "-- checkpoint of turn %d: %d paths changed, %d differ from the tree (july diff --turn %d)\n", cp.Turn, cp.Changed, cp.Entries, cp.Turn)
	}
}
