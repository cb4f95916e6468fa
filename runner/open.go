package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/julyfs/julyfs/runner/sessions"
)

// This file is the one way july run and july serve bring a durable
// session up for turns: hold the session (a new one, or an existing one
// resumed), bind the agent's tree for it, and start the loop over both.

// OpenOptions configure OpenLoop.
type OpenOptions struct {
	// Store is the state root's sessions. Required.
	Store *sessions.Store
	// Resume, when set, is the id of the session to continue; otherwise
	// a new session is created with Meta.
	Resume string
	// Meta is a new session's session.json (its ID, Created and Updated
	// are set by the store). Agent defaults to the agent's name and Model
	// to the loop's model.
	Meta sessions.Meta
	// Session configures binding the tree; SessionID is set by OpenLoop.
	Session SessionOptions
	// Loop configures the loop.
	Loop LoopOptions
	// Bound, when set, runs once the tree is bound and before a new
	// session is created for an agent whose tree is not live (july run
	// mounts its watch view here): an error ends OpenLoop and leaves no
	// session behind.
	Bound func(*Session) error
	// Layer, when set, runs once the session is held and before the tree
	// is bound, for a tree kept in the session's own directory (july run
	// --cow: a copy-on-write layer): it may replace the tree
	// (SessionOptions.Root) and set the loop's options (a checkpoint per
	// turn). A new session is then created before the tree is bound. It
	// returns what releases what it opened (nil for nothing), run by
	// Close after the tree is released and before the session is.
	Layer func(ctx context.Context, log *sessions.Log, sopts *SessionOptions, lopts *LoopOptions) (release func(), err error)
}

// SessionLoop is a held session, its bound tree and the loop over them.
type SessionLoop struct {
	// Log is the session's log, held (flock) until Close.
	Log *sessions.Log
	// Session is the bound tree.
	Session *Session
	// Loop runs the session's turns.
	*Loop
	// Warnings are what resuming the session recovered from (a torn
	// last line, a turn closed as interrupted).
	Warnings []sessions.Warning

	release func() // OpenOptions.Layer's, or nil
}

// OtherAgentError is a resumed session that another agent created.
type OtherAgentError struct {
	// Session is the session's id; Agent the agent that created it; Want
	// the agent that tried to continue it.
	Session, Agent, Want string
}

func (e *OtherAgentError) Error() string {
	return fmt.Sprintf("session %s belongs to agent %s, not %s", e.Session, e.Agent, e.Want)
}

// OpenLoop holds the session (Resume, or a new one), binds the agent's
// tree for it and returns the loop over both. A resumed session that is
// unknown, held by another process (sessions.ErrInUse) or another
// agent's (ErrOtherAgent) fails before the tree is bound. A new session
// is created after the tree is bound, so a tree that fails leaves no
// empty session behind, except for a live root, whose tree is built with
// the session's id. Close the SessionLoop when done.
func (a *Agent) OpenLoop(ctx context.Context, opts OpenOptions) (_ *SessionLoop, err error) {
	if opts.Store == nil {
		return nil, errors.New("runner: OpenLoop needs a session store")
	}
	if opts.Loop.Model == nil {
		return nil, errors.New("runner: a loop needs a model")
	}
	sl := &SessionLoop{}
	defer func() {
		if err != nil {
			sl.Close()
		}
	}()
	meta := opts.Meta
	if meta.Agent == "" {
		meta.Agent = a.Config.Name
	}
	if meta.Model == "" {
		meta.Model = opts.Loop.Model.Name()
	}
	if opts.Resume != "" {
		if sl.Log, sl.Warnings, err = opts.Store.Resume(opts.Resume); err != nil {
			return nil, err
		}
		if agent := sl.Log.Meta().Agent; agent != "" && agent != a.Config.Name {
			return nil, &OtherAgentError{Session: opts.Resume, Agent: agent, Want: a.Config.Name}
		}
	} else if a.Live() || opts.Layer != nil {
		// A live root is built with the session's id, and a layer lives in
		// the session's directory: the session first.
		if sl.Log, err = opts.Store.Create(meta); err != nil {
			return nil, err
		}
	}
	sopts, lopts := opts.Session, opts.Loop
	if opts.Layer != nil {
		if sl.release, err = opts.Layer(ctx, sl.Log, &sopts, &lopts); err != nil {
			return nil, err
		}
	}
	if sl.Log != nil {
		sopts.SessionID = sl.Log.ID()
	}
	if sl.Session, err = a.Open(ctx, sopts); err != nil {
		return nil, err
	}
	if opts.Bound != nil {
		if err := opts.Bound(sl.Session); err != nil {
			return nil, err
		}
	}
	if sl.Log == nil {
		if sl.Log, err = opts.Store.Create(meta); err != nil {
			return nil, err
		}
	}
	if sl.Loop, err = NewLoop(sl.Session, sl.Log, lopts); err != nil {
		return nil, err
	}
	return sl, nil
}

// Close releases the tree and then the session. A turn must not be
// running.
func (sl *SessionLoop) Close() error {
	var err error
	if sl.Session != nil {
		err = sl.Session.Close()
		sl.Session = nil
	}
	if sl.release != nil {
		sl.release()
		sl.release = nil
	}
	if sl.Log != nil {
		err = errors.Join(err, sl.Log.Close())
		sl.Log = nil
	}
	return err
}
