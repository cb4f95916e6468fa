package runner

import (
	"sync"

	"github.com/julyfs/julyfs/runner/authored"
	"github.com/julyfs/julyfs/runner/tools"
)

// This file serves the agent's authored tools (tools/<name>.yaml, package
// authored): always served, whatever tools: says (the allowlist narrows
// the tools the runner synthesizes, not the author's own), in every turn
// of july run, july call and july mcp.

// loadAuthored reads the agent's tools/*.yaml into a.authored and returns
// their problems, each at FILE:LINE.
func (a *Agent) loadAuthored() []Problem {
	defs, ps := authored.Load(a.Dir)
	a.authored = defs
	out := make([]Problem, len(ps))
	for i, p := range ps {
		out[i] = Problem{Field: p.Where(), Message: p.Message}
	}
	return out
}

// Authored returns the agent's authored tools, in name order. The slice
// is the caller's; the definitions are shared and immutable.
func (a *Agent) Authored() []*authored.Def { return append([]*authored.Def(nil), a.authored...) }

// AuthoredProblems reports the authored tools whose command cannot be run
// (not on PATH, missing, not executable), for july validate; a run
// reports the same as the call's error.
func (a *Agent) AuthoredProblems() []Problem {
	var out []Problem
	for _, d := range a.authored {
		if p := d.CheckCommand(); p != nil {
			out = append(out, Problem{Field: p.Where(), Message: p.Message})
		}
	}
	return out
}

// reservedToolNames are the names an authored tool may not take: every
// tool the runner itself may serve.
func reservedToolNames() []string {
	return append(tools.FileToolNames(), tools.NameShell, NameUpdateTodos, NameReadTodos, NameTask,
		"WebFetch", "WebSearch", "CreateReminder", "ListReminders", "CancelReminder")
}

// sessionInfo is what a session's authored tools read at each call: its
// id (known once its log is) and the mount point of its tree.
type sessionInfo struct {
	mu        sync.Mutex
	id, mount string
}

func (i *sessionInfo) get() (id, mount string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.id, i.mount
}

// SetTreeMount records where the session's tree is mounted (july run
// --mount), for the authored tools' JULY_TREE; "" when it is not.
func (s *Session) SetTreeMount(dir string) {
	s.info.mu.Lock()
	s.info.mount = dir
	s.info.mu.Unlock()
}

// setSessionID records the session's id for the authored tools.
func (s *Session) setSessionID(id string) {
	s.info.mu.Lock()
	s.info.id = id
	s.info.mu.Unlock()
}

// authoredTools returns the session's authored tools.
func (s *Session) authoredTools() []*tools.Tool {
	if len(s.agent.authored) == 0 {
		return nil
	}
	if s.opts.SessionID != "" {
		s.setSessionID(s.opts.SessionID)
	}
	sess := authored.Session{
		ID:        func() string { id, _ := s.info.get(); return id },
		Tree:      func() string { _, m := s.info.get(); return m },
		MaxOutput: s.opts.Tools.MaxShellOutput,
	}
	out := make([]*tools.Tool, len(s.agent.authored))
	for i, d := range s.agent.authored {
		out[i] = d.Tool(sess)
	}
	return out
}
