package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/julyfs/julyfs/runner/schedule"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/runner/web"
)

// This file serves the harness builtins the agent loop gives the model:
// WebFetch, WebSearch (with the /tmp overlay of scratch.go under a root),
// UpdateTodos and ReadTodos, and Task on the host default. july call and
// july mcp serve the file tools only.

// WebConfig is agent.yaml's web: block.
type WebConfig struct {
	// AllowPrivateAddresses lets WebFetch reach loopback, private and
	// link-local addresses (refused by default).
	AllowPrivateAddresses bool `yaml:"allowPrivateAddresses"`
	// Search configures WebSearch's backend; without it WebSearch is not
	// served.
	Search *web.SearchConfig `yaml:"search"`
}

// HarnessOptions configure the harness tools of a session's loop turns.
type HarnessOptions struct {
	// InlineLimit is the largest web tool output shown inline, in bytes
	// (default web.DefaultInlineLimit); larger output is spilled.
	InlineLimit int
	// Fetch configures WebFetch; agent.yaml's allowPrivateAddresses is
	// or'ed in.
	Fetch web.FetchOptions
	// SearchClient is the HTTP client WebSearch uses (default: a plain
	// client with web.DefaultTimeout).
	SearchClient *http.Client
	// Reminders is the reminder service the reminders tool creates in,
	// bound to the loop's session (july serve sets it). Without it the
	// tool is still offered when granted, and each call answers that
	// reminders are not available in this process.
	Reminders *schedule.Reminders
}

// NameTask is the Task tool's model-facing name.
const NameTask = "Task"

// webProblems checks agent.yaml's web: block against the plan: a search
// configuration that does not parse, and webSearch listed in tools:
// without a backend (fail closed). WebSearch granted only by the
// allowlist row (tools: omitted) without a backend is dropped from the
// plan, and the note says so.
func (a *Agent) webProblems() (problems []Problem, note string) {
	c := a.Config.Web
	if c.Search != nil {
		if err := c.Search.Check(); err != nil {
			return []Problem{{Field: "web.search", Message: err.Error()}}, ""
		}
		return nil, ""
	}
	if !slices.Contains(a.Plan.Harness, AllowWebSearch) {
		return nil, ""
	}
	if slices.Contains(a.Config.Tools, AllowWebSearch) {
		return []Problem{{Field: "tools", Message: `"webSearch" needs a search backend, and an agent that lists it must not run without one: ` + web.HowToConfigure}}, ""
	}
	a.Plan.Harness = slices.DeleteFunc(a.Plan.Harness, func(n string) bool { return n == AllowWebSearch })
	a.Plan.ScratchTmp = a.Plan.Root && slices.Contains(a.Plan.Harness, AllowWebFetch)
	return nil, "webSearch is not granted: no search backend is configured (" + web.HowToConfigure + ")"
}

// harnessState is a session's harness: what outlives one turn.
type harnessState struct {
	fetcher  *web.Fetcher
	searcher web.Searcher
	todos    todoList
	loaded   bool // the todo list has been read from the session's log dir
}

// harnessFor returns the session's harness state, made on first use.
func (s *Session) harnessFor() (*harnessState, error) {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if s.harness != nil {
		return s.harness, nil
	}
	h := &harnessState{}
	plan, cfg, opts := s.agent.Plan, s.agent.Config.Web, s.opts.Harness
	if slices.Contains(plan.Harness, AllowWebFetch) {
		fo := opts.Fetch
		fo.AllowPrivateAddresses = fo.AllowPrivateAddresses || cfg.AllowPrivateAddresses
		h.fetcher = web.NewFetcher(fo)
	}
	if slices.Contains(plan.Harness, AllowWebSearch) && cfg.Search != nil {
		sr, err := web.NewSearcher(*cfg.Search, opts.SearchClient)
		if err != nil {
			return nil, fmt.Errorf("webSearch: %w", err)
		}
		h.searcher = sr
	}
	s.harness = h
	return h, nil
}

// loopTurn is the turn the agent loop runs: Turn's file tools plus the
// harness builtins the plan grants, with the /tmp overlay under a root.
func (s *Session) loopTurn(l *Loop) (*Turn, error) {
	t, err := s.Turn()
	if err != nil {
		return nil, err
	}
	h, err := s.harnessFor()
	if err != nil {
		return nil, err
	}
	plan := s.agent.Plan
	ts := t.Tools()
	hdir, err := s.harnessDir()
	if err != nil {
		return nil, err
	}
	spill := &web.Spill{Dir: hdir, Inline: s.opts.Harness.InlineLimit}
	webTools := false
	if h.searcher != nil {
		ts = append(ts, web.NewSearchTool(h.searcher, spill))
		webTools = true
	}
	if h.fetcher != nil {
		ts = append(ts, web.NewFetchTool(h.fetcher, spill))
		webTools = true
	}
	if slices.Contains(plan.Harness, AllowUpdateTodos) {
		s.hmu.Lock()
		if !h.loaded && l != nil {
			if err := h.todos.load(l.log.Dir()); err != nil {
				s.hmu.Unlock()
				return nil, err
			}
			h.loaded = true
		}
		s.hmu.Unlock()
		ts = append(ts, todoTools(&h.todos)...)
	}
	if slices.Contains(plan.Harness, AllowTask) && l != nil {
		ts = append(ts, l.taskTool())
	}
	if slices.Contains(plan.Harness, AllowReminders) && l != nil {
		ts = append(ts, s.reminderTools(l)...)
	}
	if webTools && plan.Root {
		ts = overlayTools(ts, &overlaySpill{fs: t.FS, hostDir: filepath.Join(hdir, "agent-tools"), spill: spill})
	}
	mts, err := s.mcpTools(t)
	if err != nil {
		return nil, err
	}
	ts = append(ts, mts...)
	ts = s.approve(l, ts)
	d, err := newDispatcher(ts, DispatchOptions{DryRun: s.opts.DryRun, Observe: s.opts.Observe}, &s.schemas)
	if err != nil {
		return nil, err
	}
	return &Turn{FS: t.FS, Dispatcher: d}, nil
}

// TaskResult is the Task tool's structured result.
type TaskResult struct {
	// SessionID is the subagent's session, under the same state root.
	SessionID string `json:"sessionId"`
}

// taskTool is Task: a child agent loop on the host default with the host
// toolset (the parent's plan without Task), in its own session linked to
// the parent's (its session.json names the parent; the parent's
// action.result names it), whose final text is the tool's result.
func (l *Loop) taskTool() *tools.Tool {
	return &tools.Tool{
		Name: NameTask,
		Description: "Start a subagent with the same tools on the same host directory to carry out a self-contained task, " +
			"and get its final reply. Give it everything it needs in prompt: it does not see this conversation.",
		Schema: &jsonschema.Schema{
			Type:                 "object",
			Required:             []string{"prompt"},
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{
				"description": {Type: "string", Description: "A few words saying what the subagent does."},
				"prompt":      {Type: "string", Description: "The task, complete.", MinLength: jsonschema.Ptr(1)},
			},
		},
		Effect:      tools.EffectWrite,
		Destructive: true,
		OpenWorld:   true,
		Run: func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
			var in struct {
				Description string `json:"description"`
				Prompt      string `json:"prompt"`
			}
			if err := json.Unmarshal(args, &in); err != nil {
				return tools.Errorf("invalid arguments for %s: %v", NameTask, err), nil
			}
			return l.runTask(ctx, in.Prompt)
		},
	}
}

func (l *Loop) runTask(ctx context.Context, prompt string) (*tools.Result, error) {
	parent := l.s.agent
	if parent.Plan.Root {
		// PlanTools refuses task with a root; this is the second lock.
		return tools.Errorf("Task with an authored root fails closed: a subagent would get the host toolset, not this root"), nil
	}
	child := *parent
	child.Plan.Harness = slices.DeleteFunc(slices.Clone(parent.Plan.Harness), func(n string) bool { return n == AllowTask })
	opts := l.s.opts
	opts.Root, opts.Observe = nil, nil
	cs, err := child.Open(ctx, opts)
	if err != nil {
		return tools.Errorf("starting the subagent: %v", err), nil
	}
	defer cs.Close()
	// The parent's log is STATE/sessions/<id>: the child goes in STATE.
	st := sessions.New(filepath.Dir(filepath.Dir(l.log.Dir())))
	clog, err := st.Create(sessions.Meta{Agent: parent.Config.Name, Model: l.opts.Model.Name(), Parent: l.log.ID()})
	if err != nil {
		return tools.Errorf("starting the subagent's session: %v", err), nil
	}
	defer clog.Close()
	cl, err := NewLoop(cs, clog, LoopOptions{Model: l.opts.Model, MaxSteps: l.opts.MaxSteps, MaxTokens: l.opts.MaxTokens})
	if err != nil {
		return tools.Errorf("starting the subagent: %v", err), nil
	}
	res, err := cl.Run(ctx, prompt)
	link := fmt.Sprintf("[subagent session %s]", clog.ID())
	var te *TurnError
	switch {
	case errors.As(err, &te):
		r := tools.Errorf("the subagent failed: %s\n\n%s", te.Message, link)
		r.Structured = TaskResult{SessionID: clog.ID()}
		return r, nil
	case err != nil:
		return tools.Errorf("the subagent failed: %v\n\n%s", err, link), nil
	}
	r := tools.Text(res.Text + "\n\n" + link)
	r.Structured = TaskResult{SessionID: clog.ID()}
	return r, nil
}
