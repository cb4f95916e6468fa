// Package cowsession is what july run, july serve and the checkpoint
// commands do with a copy-on-write session (docs/cow.md): the
// runner.OpenOptions.Layer hook that puts a session on a layer (vfs/cow)
// kept in its directory and checkpoints it at the end of every turn
// ([Hook]), and the operations over a session's checkpoints: its turns
// ([Turns]), diffs ([Session.Diff]), fork ([Session.Fork]), and, with the
// session held, rewind and apply ([Held]).
//
// # Turns
//
// Turns are numbered from 1 in log order (the n-th turn.started); 0 is
// the base, before any turn. A session.rewound event puts the
// conversation back to a turn's lineage: the turns after it stay in the
// log, and [Turns] reports which are still in the conversation.
//
// # Errors
//
// A session without a layer is [ErrNoLayer]; a turn it does not have, or
// has no checkpoint of, is [ErrNoTurn] or checkpoint.ErrNoCheckpoint;
// a held session is sessions.ErrInUse. Each names the session.
//
// # Concurrency
//
// A [Session] is a snapshot of the log when it was read; reading diffs
// while a turn runs elsewhere sees the checkpoints recorded so far and
// the layer as its journal has it. [Held] holds the session's lock, so
// no turn runs meanwhile.
package cowsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs/cow"
)

var (
	// ErrNoLayer is a session made without a copy-on-write layer.
	ErrNoLayer = errors.New("no layer")
	// ErrNoTurn is a turn the session does not have.
	ErrNoTurn = errors.New("no such turn")
)

// LayerDir is the layer directory of the session in sessionDir.
func LayerDir(sessionDir string) string { return filepath.Join(sessionDir, checkpoint.LayerDir) }

// HasLayer reports whether the session in sessionDir has a layer.
func HasLayer(sessionDir string) bool {
	_, err := os.Stat(LayerDir(sessionDir))
	return err == nil
}

func noLayer(id string) error {
	return fmt.Errorf("session %s was made without --cow: its writes went to the tree directly, so it has no layer and no checkpoints (%w)", id, ErrNoLayer)
}

// Check reports why the agent cannot run copy-on-write sessions, nil
// when it can.
func Check(a *runner.Agent) error {
	if a.Plan.Shell {
		return fmt.Errorf("agent %s: a copy-on-write session needs an agent whose tools all go through its tree: this one has the host shell, which writes the host directly", a.Config.Name)
	}
	return nil
}

// HookOptions configure [Hook].
type HookOptions struct {
	// New puts new sessions on a layer. A resumed session runs on its
	// layer when it has one, whatever New says.
	New bool
	// Require refuses a resumed session without a layer (july run --cow
	// --session, an agent with cow: true), which would write the tree
	// directly.
	Require bool
	// Warnf reports a checkpoint that failed (it is also recorded in the
	// turn's event). Nil: not reported.
	Warnf func(format string, args ...any)
}

// Hook returns the runner.OpenOptions.Layer hook of agent a: a new
// session (with opts.New) or a resumed one with a layer runs on a
// copy-on-write layer over the agent's tree, in the session's directory,
// checkpointed at the end of every turn. When the agent has a search
// index, it serves the Search of the files the layer leaves as the tree
// has them, and a small index of the layer's own files in the session's
// directory ([IndexDir]) the rest ([Search]). Other sessions run on
// the tree itself.
func Hook(a *runner.Agent, opts HookOptions) func(context.Context, *sessions.Log, *runner.SessionOptions, *runner.LoopOptions) (func(), error) {
	return func(ctx context.Context, log *sessions.Log, sopts *runner.SessionOptions, lopts *runner.LoopOptions) (func(), error) {
		fresh := len(log.Events()) == 0
		if !HasLayer(log.Dir()) && !(fresh && opts.New) {
			if opts.Require && !fresh {
				return nil, noLayer(log.ID())
			}
			return nil, nil
		}
		base, closeBase, err := a.OpenBase(ctx, log.ID())
		if err != nil {
			return nil, err
		}
		var search *Search
		if !sopts.NoIndex {
			idx, err := a.OpenBaseIndex(ctx, base, sopts.IndexDir, sopts.Index)
			if err != nil {
				closeBase()
				return nil, err
			}
			if idx != nil {
				search = NewSearch(idx, IndexDir(log.Dir()), sopts.Index)
				base = idx
			}
		}
		layer, err := cow.Open(base, LayerDir(log.Dir()))
		if err != nil {
			if search != nil {
				search.Close()
			}
			closeBase()
			return nil, err
		}
		if search != nil {
			search.Attach(layer)
		}
		sopts.Root, sopts.NoIndex = layer.Tree(), true
		lopts.Checkpoint = CheckpointHook(layer, log, opts.Warnf)
		return func() {
			layer.Close()
			if search != nil {
				search.Close()
			}
			closeBase()
		}, nil
	}
}

// CheckpointHook returns the runner.LoopOptions.Checkpoint of a session
// on layer: each turn's checkpoint, a failure recorded in the event (the
// previous checkpoints stay valid) and reported to warnf.
func CheckpointHook(layer *cow.FS, log *sessions.Log, warnf func(string, ...any)) func(context.Context, int, string) *sessions.Checkpoint {
	prev := layer.Entries()
	return func(_ context.Context, turn int, turnID string) *sessions.Checkpoint {
		ref, es, err := checkpoint.Take(layer, log.Dir(), turn, turnID, prev)
		if err != nil {
			if warnf != nil {
				warnf("%v", err)
			}
			ref.Error = err.Error()
			return &ref
		}
		prev = es
		return &ref
	}
}

// Turn is one turn of a session's log.
type Turn struct {
	// Num is the turn's number, from 1 in log order; ID its turn id.
	Num int
	ID  string
	// Message is the user's message that started it.
	Message string
	// Status is "completed", "failed" or "running".
	Status string
	// Parent is the turn the conversation was at when it started (0:
	// none).
	Parent int
	// Ancestry is the turns of the conversation at its end, itself last.
	Ancestry []int
}

// Turns numbers a log's turns and follows its rewinds: it returns the
// turns and the conversation's turns now (after the last rewind).
func Turns(events []sessions.Event) (turns []Turn, active []int) {
	byID := map[string]int{}
	msgs := map[string]string{}
	for _, ev := range events {
		switch ev.Type {
		case sessions.TypeMessageReceived:
			var d sessions.MessageReceived
			if json.Unmarshal(ev.Data, &d) == nil {
				msgs[ev.TurnID] = d.Text
			}
		case sessions.TypeTurnStarted:
			t := Turn{Num: len(turns) + 1, ID: ev.TurnID, Message: msgs[ev.TurnID], Status: "running"}
			if len(active) > 0 {
				t.Parent = active[len(active)-1]
			}
			active = append(active[:len(active):len(active)], t.Num)
			t.Ancestry = active
			byID[ev.TurnID] = len(turns)
			turns = append(turns, t)
		case sessions.TypeTurnCompleted, sessions.TypeTurnFailed:
			if i, ok := byID[ev.TurnID]; ok {
				turns[i].Status = strings.TrimPrefix(ev.Type, "turn.")
			}
		case sessions.TypeSessionRewound:
			var d sessions.SessionRewound
			if json.Unmarshal(ev.Data, &d) == nil {
				if d.ToTurn == 0 {
					active = nil
				} else if d.ToTurn <= len(turns) {
					active = turns[d.ToTurn-1].Ancestry
				}
			}
		}
	}
	return turns, active
}

// Session is a copy-on-write session as its log was when read.
type Session struct {
	// Agent is the session's agent; Store its store.
	Agent *runner.Agent
	Store *sessions.Store
	// ID is the session's id; Dir its directory.
	ID, Dir string
	// Events is the log; Turns and Active are [Turns] of it.
	Events []sessions.Event
	Turns  []Turn
	Active []int
}

// Open reads session id of agent a from st. A session without a layer
// is ErrNoLayer.
func Open(a *runner.Agent, st *sessions.Store, id string) (*Session, error) {
	meta, events, _, err := st.Read(id)
	if err != nil {
		return nil, err
	}
	if meta.Agent != "" && meta.Agent != a.Config.Name {
		return nil, &runner.OtherAgentError{Session: id, Agent: meta.Agent, Want: a.Config.Name}
	}
	s := &Session{Agent: a, Store: st, ID: id, Dir: filepath.Join(st.Dir(), id)}
	if !HasLayer(s.Dir) {
		return nil, noLayer(id)
	}
	s.setEvents(events)
	return s, nil
}

func (s *Session) setEvents(events []sessions.Event) {
	s.Events = events
	s.Turns, s.Active = Turns(events)
}

// LayerDir is the session's layer directory.
func (s *Session) LayerDir() string { return LayerDir(s.Dir) }

// Turn returns turn n (from 1), or ErrNoTurn.
func (s *Session) Turn(n int) (Turn, error) {
	if n < 1 || n > len(s.Turns) {
		return Turn{}, s.noTurn(n)
	}
	return s.Turns[n-1], nil
}

func (s *Session) noTurn(n int) error {
	return fmt.Errorf("session %s has no turn %d (it has %d): %w", s.ID, n, len(s.Turns), ErrNoTurn)
}

// Live reports whether turn n is in the conversation now (a rewind has
// not left it).
func (s *Session) Live(n int) bool {
	for _, a := range s.Active {
		if a == n {
			return true
		}
	}
	return false
}

// State returns the layer's entries at the end of turn n (0: the base,
// no entries; -1: the layer as it is now).
func (s *Session) State(n int) ([]cow.Entry, error) {
	switch {
	case n < 0:
		return cow.ReadEntries(s.LayerDir())
	case n > len(s.Turns):
		return nil, s.noTurn(n)
	}
	m, err := checkpoint.Load(s.LayerDir(), n)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	return m.Entries, nil
}

// Diff compares the session's state at the end of turn from with its
// state at the end of turn to (0: the base; -1: the layer now).
func (s *Session) Diff(ctx context.Context, from, to int) ([]checkpoint.FileDiff, error) {
	a, err := s.State(from)
	if err != nil {
		return nil, err
	}
	b, err := s.State(to)
	if err != nil {
		return nil, err
	}
	base, closeBase, err := s.Agent.OpenBase(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	defer closeBase()
	return checkpoint.Diff(ctx, base, s.LayerDir(), a, b)
}

// TurnDiff is what turn n changed: its state against the state the
// conversation was at when it started.
func (s *Session) TurnDiff(ctx context.Context, n int) ([]checkpoint.FileDiff, error) {
	t, err := s.Turn(n)
	if err != nil {
		return nil, err
	}
	return s.Diff(ctx, t.Parent, n)
}

// Fork makes a new session whose log is the events of the turns that
// make up the conversation at the end of turn n (copied, renumbered from
// 1) and whose layer starts at turn n's checkpoint, the file contents
// hard-linked; its session.json names the parent. It returns the new
// session's id.
func (s *Session) Fork(n int) (string, error) {
	t, err := s.Turn(n)
	if err != nil {
		return "", err
	}
	src := s.LayerDir()
	top, err := checkpoint.Load(src, n)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", s.ID, err)
	}
	meta, _, _, err := s.Store.Read(s.ID)
	if err != nil {
		return "", err
	}
	log, err := s.Store.Create(sessions.Meta{Agent: meta.Agent, Model: meta.Model, ForkOf: &sessions.Fork{Session: s.ID, Turn: n}})
	if err != nil {
		return "", err
	}
	defer log.Close()
	fail := func(err error) error {
		return fmt.Errorf("fork of session %s (left half made as %s): %w", s.ID, log.ID(), err)
	}
	keep := map[string]int{} // turn id -> its number in the fork
	for i, num := range t.Ancestry {
		keep[s.Turns[num-1].ID] = i + 1
	}
	for _, ev := range s.Events {
		if _, ok := keep[ev.TurnID]; !ok || ev.TurnID == "" {
			continue
		}
		if _, err := log.Append(ev.Type, ev.TurnID, ev.Data); err != nil {
			return "", fail(err)
		}
	}
	dst := LayerDir(log.Dir())
	// The fork's own checkpoints of its turns, over linked blobs.
	for _, num := range t.Ancestry {
		tmp := dst + ".fork"
		os.RemoveAll(tmp)
		if err := checkpoint.Fork(src, num, tmp); err != nil && !errors.Is(err, checkpoint.ErrNoCheckpoint) {
			return "", fail(err)
		}
		if err := mergeBlobs(tmp, dst); err != nil {
			return "", fail(err)
		}
		os.RemoveAll(tmp)
		m, err := checkpoint.Load(src, num)
		if err != nil {
			continue
		}
		m.Turn = keep[s.Turns[num-1].ID]
		data, err := json.Marshal(m)
		if err != nil {
			return "", fail(err)
		}
		p := checkpoint.ManifestPath(dst, m.Turn)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fail(err)
		}
		if err := cow.WriteFileAtomic(p, data); err != nil {
			return "", fail(err)
		}
	}
	if err := cow.InitLayer(dst, top.Entries); err != nil {
		return "", fail(err)
	}
	return log.ID(), nil
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
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
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
