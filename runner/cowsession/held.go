package cowsession

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs/cow"
)

// Held is a copy-on-write session held for a change: its log (no turn
// runs meanwhile), its base and its layer open. Close it when done.
type Held struct {
	*Session
	// Log is the session's log, held; Layer its layer over the base.
	Log   *sessions.Log
	Layer *cow.FS

	close func()
}

// Hold holds session id of agent a in st (sessions.ErrInUse while a turn
// runs) and opens its layer. The warnings are what resuming the log
// recovered from.
func Hold(ctx context.Context, a *runner.Agent, st *sessions.Store, id string) (*Held, []sessions.Warning, error) {
	if _, err := Open(a, st, id); err != nil {
		return nil, nil, err
	}
	log, warns, err := st.Resume(id)
	if err != nil {
		if errors.Is(err, sessions.ErrInUse) {
			return nil, nil, fmt.Errorf("%w: a turn is running (or another command holds it); try again when it ends", err)
		}
		return nil, nil, err
	}
	h, err := Attach(ctx, a, st, log)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	prev := h.close
	h.close = func() { prev(); log.Close() }
	return h, warns, nil
}

// Attach opens the layer of the session whose log the caller holds; its
// Close leaves the log open.
func Attach(ctx context.Context, a *runner.Agent, st *sessions.Store, log *sessions.Log) (*Held, error) {
	s := &Session{Agent: a, Store: st, ID: log.ID(), Dir: filepath.Join(st.Dir(), log.ID())}
	if agent := log.Meta().Agent; agent != "" && agent != a.Config.Name {
		return nil, &runner.OtherAgentError{Session: s.ID, Agent: agent, Want: a.Config.Name}
	}
	if !HasLayer(s.Dir) {
		return nil, noLayer(s.ID)
	}
	s.setEvents(log.Events())
	base, closeBase, err := a.OpenBase(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	layer, err := cow.Open(base, s.LayerDir())
	if err != nil {
		closeBase()
		return nil, err
	}
	return &Held{Session: s, Log: log, Layer: layer, close: func() { layer.Close(); closeBase() }}, nil
}

// Close releases the layer, the base and (from Hold) the log.
func (h *Held) Close() {
	if h.close != nil {
		h.close()
		h.close = nil
	}
}

// Rewind resets the layer to turn n's checkpoint (0: the base) and the
// conversation to the end of turn n: a session.rewound event marks the
// point. A missing checkpoint or blob is named and nothing changes.
func (h *Held) Rewind(n int) error {
	if n < 0 || n > len(h.Turns) {
		return h.noTurn(n)
	}
	if err := checkpoint.Rewind(h.Layer, n); err != nil {
		return fmt.Errorf("session %s: %w", h.ID, err)
	}
	if _, err := h.Log.Append(sessions.TypeSessionRewound, "", sessions.SessionRewound{ToTurn: n}); err != nil {
		return err
	}
	h.setEvents(h.Log.Events())
	return nil
}

// Apply writes the layer's changes into the base (checkpoint.Apply).
func (h *Held) Apply(ctx context.Context, dryRun bool) ([]checkpoint.Action, error) {
	acts, err := checkpoint.Apply(ctx, h.Layer, dryRun)
	if err != nil {
		return acts, fmt.Errorf("apply of session %s: %w (rerun to complete it)", h.ID, err)
	}
	return acts, nil
}
