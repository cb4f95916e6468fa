package runner

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/julyfs/julyfs/runner/mcpclient"
	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/runner/web"
)

// This file connects the agent loop to the MCP servers agent.yaml lists
// under mcp: (runner/mcpclient): the servers start on a session's first
// turn and stop with the session; their tools join the loop's harness as
// mcp__<server>__<tool>. july call and july mcp do not serve them.

// mcpProblems checks agent.yaml's mcp: block and the mcp: entries of
// tools: (an entry naming a server mcp: does not configure fails closed).
// Under an authored root, MCP tools bind the turn's /tmp scratch for the
// results they spill, as the web tools do.
func (a *Agent) mcpProblems() []Problem {
	var out []Problem
	for _, name := range slices.Sorted(maps.Keys(a.Config.MCP)) {
		for _, msg := range mcpclient.Check(name, a.Config.MCP[name]) {
			out = append(out, Problem{Field: "mcp." + name, Message: msg})
		}
	}
	allow, ps := mcpclient.ParseAllow(a.Config.Tools, a.Config.MCP)
	for _, msg := range ps {
		out = append(out, Problem{Field: "tools", Message: msg})
	}
	if a.Plan.Root && len(a.Config.MCP) > 0 {
		for name := range a.Config.MCP {
			if allow.Serves(name) {
				a.Plan.ScratchTmp = true
			}
		}
	}
	return out
}

// mcpOptions are the options of a Set over the agent's servers.
func (a *Agent) mcpOptions() mcpclient.Options {
	allow, _ := mcpclient.ParseAllow(a.Config.Tools, a.Config.MCP)
	return mcpclient.Options{Dir: a.Dir, Allow: allow}
}

// ConnectMCP starts the agent's MCP servers (those its allowlist serves)
// and returns their tools and what starting each server found, for july
// tools and july validate. Call close when done: it stops the servers.
func (a *Agent) ConnectMCP(ctx context.Context) (ts []*tools.Tool, status []mcpclient.Status, close func()) {
	set := mcpclient.NewSet(a.Config.MCP, a.mcpOptions())
	ts, status = set.Tools(ctx)
	return ts, status, func() { set.Close() }
}

// mcpTools returns the session's MCP tools, starting the servers on first
// use. Under an authored root each tool's spilled result is moved into
// the turn's /tmp (fsys is the turn's tree).
func (s *Session) mcpTools(turn *Turn) ([]*tools.Tool, error) {
	if len(s.agent.Config.MCP) == 0 {
		return nil, nil
	}
	hdir, err := s.harnessDir()
	if err != nil {
		return nil, err
	}
	s.hmu.Lock()
	if s.mcp == nil {
		s.mcpSpill = &web.Spill{Dir: hdir, Inline: s.opts.Harness.InlineLimit}
		opts := s.agent.mcpOptions()
		opts.InlineLimit = s.mcpSpill.Limit()
		opts.Spill = s.mcpSpill.Write
		opts.SpillFollowUp = web.FollowUpHost
		s.mcp = mcpclient.NewSet(s.agent.Config.MCP, opts)
	}
	set, spill := s.mcp, s.mcpSpill
	s.hmu.Unlock()
	ts, status := set.Tools(context.Background())
	s.mcpOnce.Do(func() {
		if s.opts.MCPWarn == nil {
			return
		}
		for _, err := range mcpclient.Problems(status) {
			s.opts.MCPWarn(fmt.Sprintf("%v; its tools are offered once a later turn starts it", err))
		}
		for _, st := range status {
			for _, r := range st.Refused {
				s.opts.MCPWarn(fmt.Sprintf("mcp server %s: %s; it is not offered", st.Server, r))
			}
		}
	})
	if !s.agent.Plan.Root || len(ts) == 0 {
		return ts, nil
	}
	o := &overlaySpill{fs: turn.FS, hostDir: filepath.Join(hdir, web.SpillDirName), spill: spill}
	out := make([]*tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = wrapRun(t, nil, o.result)
	}
	return out, nil
}

// closeMCP stops the session's MCP servers.
func (s *Session) closeMCP() {
	s.hmu.Lock()
	set := s.mcp
	s.mcp = nil
	s.hmu.Unlock()
	if set != nil {
		set.Close()
	}
}

// MCPPids returns the process ids of the session's running stdio MCP
// servers by server name, for tests and diagnostics.
func (s *Session) MCPPids() map[string]int {
	s.hmu.Lock()
	set := s.mcp
	s.hmu.Unlock()
	if set == nil {
		return map[string]int{}
	}
	return set.Pids()
}
