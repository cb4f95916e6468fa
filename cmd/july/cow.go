package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
)

// This file is july run --cow and the commands over a copy-on-write
// session's checkpoints: diff, log, rewind, fork, apply (docs/cow.md).

var cowFlag = &cli.BoolFlag{Name: "cow", Usage: "run on a copy-on-write layer over the agent's tree (kept with the session; the tree is not written)"}

// layerDir is the layer directory of the session in sessionDir.
func layerDir(sessionDir string) string { return filepath.Join(sessionDir, checkpoint.LayerDir) }

func hasLayer(sessionDir string) bool {
	_, err := os.Stat(layerDir(sessionDir))
	return err == nil
}

// cowLayer is july run's OpenOptions.Layer: a session made with --cow
// (or continued, having a layer) runs on a copy-on-write layer over the
// agent's tree in its directory, checkpointed at the end of every turn.
// A continued session without a layer runs as it was made, on the tree
// itself; asked for --cow, it is refused.
func cowLayer(c *cli.Context, a *runner.Agent, stderr io.Writer) func(context.Context, *sessions.Log, *runner.SessionOptions, *runner.LoopOptions) (func(), error) {
	return func(ctx context.Context, log *sessions.Log, sopts *runner.SessionOptions, lopts *runner.LoopOptions) (func(), error) {
		if c.String("session") != "" && !hasLayer(log.Dir()) {
			if c.Bool("cow") {
				return nil, fmt.Errorf("session %s was made without --cow: its writes went to the tree directly, so it has no layer", log.ID())
			}
			return nil, nil
		}
		base, closeBase, err := a.OpenBase(ctx, log.ID())
		if err != nil {
			return nil, err
		}
		layer, err := cow.Open(base, layerDir(log.Dir()))
		if err != nil {
			closeBase()
			return nil, err
		}
		sopts.Root, sopts.NoIndex = layer.Tree(), true
		lopts.Checkpoint = checkpointHook(layer, log, stderr)
		return func() { layer.Close(); closeBase() }, nil
	}
}

// checkpointHook takes each turn's checkpoint; a failure is recorded in
// the event (the previous checkpoints stay valid) and printed.
func checkpointHook(layer *cow.FS, log *sessions.Log, stderr io.Writer) func(context.Context, int, string) *sessions.Checkpoint {
	prev := layer.Entries()
	return func(_ context.Context, turn int, turnID string) *sessions.Checkpoint {
		ref, es, err := checkpoint.Take(layer, log.Dir(), turn, turnID, prev)
		if err != nil {
			fmt.Fprintf(stderr, "july: warning: %v\n", err)
			ref.Error = err.Error()
			return &ref
		}
		prev = es
		return &ref
	}
}

// turnInfo is one turn of a log, numbered from 1.
type turnInfo struct {
	num      int
	id       string
	message  string
	status   string // completed, failed, running
	parent   int    // the turn the conversation was at when it started (0: none)
	ancestry []int  // the turns of the conversation at its end, itself last
}

// turnsOf numbers a log's turns and follows its rewinds.
func turnsOf(events []sessions.Event) ([]turnInfo, []int) {
	var turns []turnInfo
	byID := map[string]int{}
	var active []int
	msgs := map[string]string{}
	for _, ev := range events {
		switch ev.Type {
		case sessions.TypeMessageReceived:
			var d sessions.MessageReceived
			json.Unmarshal(ev.Data, &d)
			msgs[ev.TurnID] = d.Text
		case sessions.TypeTurnStarted:
			t := turnInfo{num: len(turns) + 1, id: ev.TurnID, message: msgs[ev.TurnID], status: "running"}
			if len(active) > 0 {
				t.parent = active[len(active)-1]
			}
			active = append(active[:len(active):len(active)], t.num)
			t.ancestry = active
			byID[ev.TurnID] = len(turns)
			turns = append(turns, t)
		case sessions.TypeTurnCompleted, sessions.TypeTurnFailed:
			if i, ok := byID[ev.TurnID]; ok {
				turns[i].status = strings.TrimPrefix(ev.Type, "turn.")
			}
		case sessions.TypeSessionRewound:
			var d sessions.SessionRewound
			if json.Unmarshal(ev.Data, &d) == nil {
				if d.ToTurn == 0 {
					active = nil
				} else if d.ToTurn <= len(turns) {
					active = turns[d.ToTurn-1].ancestry
				}
			}
		}
	}
	return turns, active
}

// cowTarget is a copy-on-write session read for diff and log.
type cowTarget struct {
	a      *runner.Agent
	root   string // the state root (a directory)
	id     string
	dir    string // the session directory
	events []sessions.Event
	turns  []turnInfo
	active []int
}

func openTarget(c *cli.Context) (*cowTarget, error) {
	if c.NArg() != 2 && !(c.Command.Name == "mount" && c.NArg() == 3) {
		return nil, usagef(c, "want DIR SESSION, got %d arguments", c.NArg())
	}
	a, err := load(c)
	if err != nil {
		return nil, err
	}
	root, err := diskStateRoot(c, a)
	if err != nil {
		return nil, err
	}
	st := sessions.New(root)
	id := c.Args().Get(1)
	_, events, _, err := st.Read(id)
	if err != nil {
		return nil, err
	}
	t := &cowTarget{a: a, root: root, id: id, dir: filepath.Join(st.Dir(), id), events: events}
	if !hasLayer(t.dir) {
		return nil, fmt.Errorf("session %s was made without --cow: its writes went to the tree directly, so it has no layer and no checkpoints", id)
	}
	t.turns, t.active = turnsOf(events)
	return t, nil
}

// state returns the layer's entries at turn n (0: the base; -1: the
// layer as it is now).
func (t *cowTarget) state(n int) ([]cow.Entry, error) {
	switch {
	case n < 0:
		return cow.ReadEntries(layerDir(t.dir))
	case n > len(t.turns):
		return nil, fmt.Errorf("session %s has no turn %d (it has %d)", t.id, n, len(t.turns))
	}
	m, err := checkpoint.Load(layerDir(t.dir), n)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", t.id, err)
	}
	return m.Entries, nil
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
			from, to := c.Int("from"), c.Int("to")
			if n := c.Int("turn"); c.IsSet("turn") {
				if n < 1 || n > len(t.turns) {
					return fmt.Errorf("session %s has no turn %d (it has %d)", t.id, n, len(t.turns))
				}
				from, to = t.turns[n-1].parent, n
			}
			diffs, err := t.diff(c.Context, from, to)
			if err != nil {
				return err
			}
			colour := c.String("color") == "always" || c.String("color") == "auto" && isTerminal(c.App.Writer)
			return printDiffs(c.App.Writer, diffs, c.Bool("stat"), c.Bool("name-only"), c.Bool("json"), colour)
		},
	}
}

func (t *cowTarget) diff(ctx context.Context, from, to int) ([]checkpoint.FileDiff, error) {
	a, err := t.state(from)
	if err != nil {
		return nil, err
	}
	b, err := t.state(to)
	if err != nil {
		return nil, err
	}
	base, closeBase, err := t.a.OpenBase(ctx, t.id)
	if err != nil {
		return nil, err
	}
	defer closeBase()
	return checkpoint.Diff(ctx, base, layerDir(t.dir), a, b)
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
			live := map[int]bool{}
			for _, n := range t.active {
				live[n] = true
			}
			w := c.App.Writer
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TURN\tID\tSTATUS\tFILES\t+/-\tMESSAGE")
			for _, ti := range t.turns {
				files, plus := "-", "-"
				if diffs, err := t.diff(c.Context, ti.parent, ti.num); err == nil {
					a, r := 0, 0
					for _, d := range diffs {
						a, r = a+d.Added, r+d.Removed
					}
					files, plus = fmt.Sprint(len(diffs)), fmt.Sprintf("+%d -%d", a, r)
				} else if !errors.Is(err, checkpoint.ErrNoCheckpoint) {
					return err
				}
				status := ti.status
				if !live[ti.num] {
					status += " (rewound)"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", ti.num, ti.id, status, files, plus, oneLine(ti.message, 60))
			}
			return tw.Flush()
		},
	}
}

// lockTarget is a copy-on-write session held for a change: the log
// (session in use when a turn runs), the base and the layer.
type lockTarget struct {
	*cowTarget
	log   *sessions.Log
	layer *cow.FS
	close func()
}

func lockSession(c *cli.Context) (*lockTarget, error) {
	t, err := openTarget(c)
	if err != nil {
		return nil, err
	}
	log, warns, err := sessions.New(t.root).Resume(t.id)
	if err != nil {
		if errors.Is(err, sessions.ErrInUse) {
			return nil, fmt.Errorf("%w: a turn is running (or another command holds it); try again when it ends", err)
		}
		return nil, err
	}
	for _, w := range warns {
		fmt.Fprintf(c.App.ErrWriter, "july: warning: %s\n", w)
	}
	t.events = log.Events()
	t.turns, t.active = turnsOf(t.events)
	base, closeBase, err := t.a.OpenBase(c.Context, t.id)
	if err != nil {
		log.Close()
		return nil, err
	}
	layer, err := cow.Open(base, layerDir(t.dir))
	if err != nil {
		closeBase()
		log.Close()
		return nil, err
	}
	return &lockTarget{cowTarget: t, log: log, layer: layer, close: func() { layer.Close(); closeBase(); log.Close() }}, nil
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
			defer t.close()
			n := c.Int("to")
			if n < 0 || n > len(t.turns) {
				return fmt.Errorf("session %s has no turn %d (it has %d)", t.id, n, len(t.turns))
			}
			if err := checkpoint.Rewind(t.layer, n); err != nil {
				return fmt.Errorf("session %s: %w", t.id, err)
			}
			if _, err := t.log.Append(sessions.TypeSessionRewound, "", sessions.SessionRewound{ToTurn: n}); err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "july: session %s rewound to the end of turn %d\n", t.id, n)
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
			n := c.Int("at")
			if n < 1 || n > len(t.turns) {
				return fmt.Errorf("session %s has no turn %d (it has %d)", t.id, n, len(t.turns))
			}
			src := layerDir(t.dir)
			if _, err := checkpoint.Load(src, n); err != nil {
				return fmt.Errorf("session %s: %w", t.id, err)
			}
			st := sessions.New(t.root)
			meta, _, _, err := st.Read(t.id)
			if err != nil {
				return err
			}
			log, err := st.Create(sessions.Meta{Agent: meta.Agent, Model: meta.Model, ForkOf: &sessions.Fork{Session: t.id, Turn: n}})
			if err != nil {
				return err
			}
			defer log.Close()
			fail := func(err error) error {
				return fmt.Errorf("fork of session %s (left half made as %s): %w", t.id, log.ID(), err)
			}
			keep := map[string]int{} // turn id -> its number in the fork
			for i, num := range t.turns[n-1].ancestry {
				keep[t.turns[num-1].id] = i + 1
			}
			for _, ev := range t.events {
				if _, ok := keep[ev.TurnID]; !ok || ev.TurnID == "" {
					continue
				}
				if _, err := log.Append(ev.Type, ev.TurnID, ev.Data); err != nil {
					return fail(err)
				}
			}
			dst := layerDir(log.Dir())
			// The fork's own checkpoints of its turns, over linked blobs.
			for _, num := range t.turns[n-1].ancestry {
				tmp := dst + ".fork"
				os.RemoveAll(tmp)
				if err := checkpoint.Fork(src, num, tmp); err != nil && !errors.Is(err, checkpoint.ErrNoCheckpoint) {
					return fail(err)
				}
				if err := mergeBlobs(tmp, dst); err != nil {
					return fail(err)
				}
				os.RemoveAll(tmp)
				m, err := checkpoint.Load(src, num)
				if err != nil {
					continue
				}
				m.Turn = keep[t.turns[num-1].id]
				data, _ := json.Marshal(m)
				p := checkpoint.ManifestPath(dst, m.Turn)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return fail(err)
				}
				if err := cow.WriteFileAtomic(p, data); err != nil {
					return fail(err)
				}
			}
			m, err := checkpoint.Load(src, n)
			if err != nil {
				return fail(err)
			}
			if err := cow.InitLayer(dst, m.Entries); err != nil {
				return fail(err)
			}
			fmt.Fprintln(c.App.Writer, log.ID())
			return nil
		},
	}
}

// mergeBlobs moves the blobs of layer directory from into to's (by
// rename: both are the fork's).
func mergeBlobs(from, to string) error {
	root := filepath.Join(from, "blobs")
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		dst := filepath.Join(to, "blobs", rel)
		if _, err := os.Stat(dst); err == nil {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Rename(p, dst)
	})
}

func applyCommand() *cli.Command {
	return &cli.Command{
		Name:      "apply",
		Usage:     "write a copy-on-write session's changes into the agent's tree",
		ArgsUsage: "DIR SESSION",
		Description: `Writes each change of the session's layer into the tree, compare-and-swap
against what the tree had when the session first changed the path: a path
changed behind the session's back since is a conflict, listed (with the
three versions' diffs: july diff --from 0) and not written; the rest is
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
			defer t.close()
			acts, err := checkpoint.Apply(c.Context, t.layer, c.Bool("dry-run"))
			w := c.App.Writer
			conflicts := 0
			for _, a := range acts {
				switch {
				case a.Conflict != "":
					conflicts++
					fmt.Fprintf(w, "conflict %s %s: %s\n", a.Op, vfs.DisplayPath(a.Path), a.Conflict)
				case a.Done:
					fmt.Fprintf(w, "done     %s %s\n", a.Op, vfs.DisplayPath(a.Path))
				case c.Bool("dry-run"):
					fmt.Fprintf(w, "would    %s %s\n", a.Op, vfs.DisplayPath(a.Path))
				default:
					fmt.Fprintf(w, "applied  %s %s\n", a.Op, vfs.DisplayPath(a.Path))
				}
			}
			if err != nil {
				return fmt.Errorf("apply of session %s: %w (rerun to complete it)", t.id, err)
			}
			if conflicts > 0 {
				fmt.Fprintf(c.App.ErrWriter, "july: %d conflicts: the tree changed there since the session first changed them; they stay in the session\n", conflicts)
				return errReported
			}
			return nil
		},
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
