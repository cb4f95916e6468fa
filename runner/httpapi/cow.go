package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/cowsession"
	"github.com/julyfs/julyfs/runner/sessions"
)

// This file is the routes over a copy-on-write session's checkpoints
// (package runner/cowsession, docs/cow.md):
//
//	GET  /<slug>/v1/sessions/{id}/checkpoints   {"checkpoints":[{turn, turnId, message, files:[{path, change, added, removed}]}]}
//	GET  /<slug>/v1/sessions/{id}/diff          ?turn=N (what turn N changed), or ?from=A&to=B; neither: the session against the base
//	POST /<slug>/v1/sessions/{id}/rewind        {"to":N} → the session
//	POST /<slug>/v1/sessions/{id}/fork          {"at":N} → 201 {"sessionId"}
//	POST /<slug>/v1/sessions/{id}/apply         {"dryRun":bool} → {"dryRun","applied":[...],"conflicts":[...]}
//
// A session without a layer is 404 no_checkpoints; a turn it does not
// have (or has no checkpoint of) is 400 no_such_turn; rewind and apply
// while a turn runs or waits are 409 session_in_use.

func (s *Server) cowRoutes(mux *http.ServeMux, base string, a *agentAPI) {
	mux.HandleFunc("GET "+base+"/v1/sessions/{id}/checkpoints", a.checkpoints)
	mux.HandleFunc("GET "+base+"/v1/sessions/{id}/diff", a.diff)
	mux.HandleFunc("POST "+base+"/v1/sessions/{id}/rewind", a.rewind)
	mux.HandleFunc("POST "+base+"/v1/sessions/{id}/fork", a.fork)
	mux.HandleFunc("POST "+base+"/v1/sessions/{id}/apply", a.apply)
}

// FileChange is one file a turn (or a diff) changed.
type FileChange struct {
	Path string `json:"path"`
	// Change is "added", "modified" or "deleted".
	Change  string `json:"change"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// Checkpoint is one turn's checkpoint, with what the turn changed.
type Checkpoint struct {
	Turn    int          `json:"turn"`
	TurnID  string       `json:"turnId"`
	Message string       `json:"message"`
	Files   []FileChange `json:"files"`
}

// FilePatch is one file of a diff.
type FilePatch struct {
	FileChange
	// Patch is the git-style unified diff ("" for a binary file, whose
	// change is only summarized).
	Patch  string `json:"patch"`
	Binary bool   `json:"binary"`
}

// ApplyResult is what an apply did (or, with DryRun, would do).
type ApplyResult struct {
	DryRun    bool                `json:"dryRun"`
	Applied   []AppliedChange     `json:"applied"`
	Conflicts []checkpoint.Action `json:"conflicts"`
}

// AppliedChange is a path apply wrote (Done: the base already held the
// change).
type AppliedChange struct {
	Path string `json:"path"`
	Op   string `json:"op"`
	Done bool   `json:"done,omitempty"`
}

// writeCowErr writes the errors of the copy-on-write routes.
func writeCowErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, cowsession.ErrNoLayer):
		writeError(w, http.StatusNotFound, "no_checkpoints", err.Error())
	case errors.Is(err, cowsession.ErrNoTurn), errors.Is(err, checkpoint.ErrNoCheckpoint):
		writeError(w, http.StatusBadRequest, "no_such_turn", err.Error())
	case errors.Is(err, sessions.ErrInUse):
		writeError(w, http.StatusConflict, "session_in_use", err.Error())
	default:
		writeErr(w, err)
	}
}

func (a *agentAPI) cowSession(w http.ResponseWriter, r *http.Request) (*cowsession.Session, bool) {
	s, err := cowsession.Open(a.Host.Agent(), a.Host.Store(), r.PathValue("id"))
	if err != nil {
		writeCowErr(w, err)
		return nil, false
	}
	return s, true
}

func changes(diffs []checkpoint.FileDiff) []FileChange {
	out := make([]FileChange, len(diffs))
	for i, d := range diffs {
		out[i] = FileChange{Path: d.Path, Change: d.Status, Added: d.Added, Removed: d.Removed}
	}
	return out
}

func (a *agentAPI) checkpoints(w http.ResponseWriter, r *http.Request) {
	s, ok := a.cowSession(w, r)
	if !ok {
		return
	}
	out := []Checkpoint{}
	for _, t := range s.Turns {
		if _, err := checkpoint.Load(s.LayerDir(), t.Num); err != nil {
			continue // a running turn, or one a killed process left
		}
		diffs, err := s.TurnDiff(r.Context(), t.Num)
		if err != nil {
			writeCowErr(w, err)
			return
		}
		out = append(out, Checkpoint{Turn: t.Num, TurnID: t.ID, Message: t.Message, Files: changes(diffs)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoints": out})
}

// turnParam reads query parameter name as a turn number (at least min),
// def when absent.
func turnParam(r *http.Request, name string, def, min int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		return 0, fmt.Errorf("%s=%q: want a turn number (an integer, at least %d)", name, v, min)
	}
	return n, nil
}

func (a *agentAPI) diff(w http.ResponseWriter, r *http.Request) {
	s, ok := a.cowSession(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	var diffs []checkpoint.FileDiff
	var err error
	if q.Has("turn") {
		if q.Has("from") || q.Has("to") {
			writeError(w, http.StatusBadRequest, "bad_request", "give turn=N, or from=A and to=B, not both")
			return
		}
		n, perr := turnParam(r, "turn", 0, 1)
		if perr != nil {
			writeError(w, http.StatusBadRequest, "bad_request", perr.Error())
			return
		}
		diffs, err = s.TurnDiff(r.Context(), n)
	} else {
		from, perr := turnParam(r, "from", 0, 0)
		if perr != nil {
			writeError(w, http.StatusBadRequest, "bad_request", perr.Error())
			return
		}
		to, perr := turnParam(r, "to", -1, 0)
		if perr != nil {
			writeError(w, http.StatusBadRequest, "bad_request", perr.Error())
			return
		}
		diffs, err = s.Diff(r.Context(), from, to)
	}
	if err != nil {
		writeCowErr(w, err)
		return
	}
	files := make([]FilePatch, len(diffs))
	for i, d := range diffs {
		files[i] = FilePatch{FileChange: changes(diffs[i : i+1])[0], Patch: d.Unified, Binary: d.Binary}
		if d.Binary {
			files[i].Patch = ""
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"files": files})
}

// held runs fn on session id held between turns (409 while one runs).
func (a *agentAPI) held(w http.ResponseWriter, r *http.Request, fn func(*cowsession.Held) error) bool {
	id := r.PathValue("id")
	if _, err := cowsession.Open(a.Host.Agent(), a.Host.Store(), id); err != nil {
		writeCowErr(w, err)
		return false
	}
	err := a.Host.Hold(id, func(log *sessions.Log) error {
		h, err := cowsession.Attach(r.Context(), a.Host.Agent(), a.Host.Store(), log)
		if err != nil {
			return err
		}
		defer h.Close()
		return fn(h)
	})
	if err != nil {
		writeCowErr(w, err)
		return false
	}
	return true
}

func (a *agentAPI) rewind(w http.ResponseWriter, r *http.Request) {
	var b struct {
		To *int `json:"to"`
	}
	if !a.s.decode(w, r, &b) {
		return
	}
	if b.To == nil || *b.To < 0 {
		writeError(w, http.StatusBadRequest, "bad_request", `the body needs "to", a turn number (0: before the first turn): {"to": 2}`)
		return
	}
	if !a.held(w, r, func(h *cowsession.Held) error { return h.Rewind(*b.To) }) {
		return
	}
	a.get(w, r)
}

func (a *agentAPI) fork(w http.ResponseWriter, r *http.Request) {
	var b struct {
		At *int `json:"at"`
	}
	if !a.s.decode(w, r, &b) {
		return
	}
	if b.At == nil || *b.At < 1 {
		writeError(w, http.StatusBadRequest, "bad_request", `the body needs "at", a turn number (from 1): {"at": 2}`)
		return
	}
	s, ok := a.cowSession(w, r)
	if !ok {
		return
	}
	id, err := s.Fork(*b.At)
	if err != nil {
		writeCowErr(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"sessionId": id})
}

func (a *agentAPI) apply(w http.ResponseWriter, r *http.Request) {
	var b struct {
		DryRun bool `json:"dryRun"`
	}
	if !a.s.decode(w, r, &b) {
		return
	}
	res := ApplyResult{DryRun: b.DryRun, Applied: []AppliedChange{}, Conflicts: []checkpoint.Action{}}
	if !a.held(w, r, func(h *cowsession.Held) error {
		acts, err := h.Apply(r.Context(), b.DryRun)
		for _, act := range acts {
			if act.Conflict != "" {
				res.Conflicts = append(res.Conflicts, act)
			} else {
				res.Applied = append(res.Applied, AppliedChange{Path: act.Path, Op: act.Op, Done: act.Done})
			}
		}
		return err
	}) {
		return
	}
	writeJSON(w, http.StatusOK, res)
}
