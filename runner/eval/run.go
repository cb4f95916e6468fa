package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/runner/checkpoint"
	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/vfs"
	"github.com/julyfs/julyfs/vfs/cow"
)

// Options configure Run.
type Options struct {
	// Store is where the cases' sessions go. Required.
	Store *sessions.Store
	// Model, when set, is the model spec every case runs, over its own
	// and the agent's (july eval --model); a script:FILE in it is
	// relative to ModelDir. A case's own script:FILE is relative to the
	// agent directory.
	Model, ModelDir string
	// MaxSteps bounds each turn's model calls (default
	// runner.DefaultMaxSteps).
	MaxSteps int
}

// Result is one case's outcome.
type Result struct {
	// Name, File and Line are the case's.
	Name string `json:"name"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Passed reports every assertion held.
	Passed bool `json:"passed"`
	// Failures say what did not hold, one per assertion (or why the case
	// could not run).
	Failures []string `json:"failures,omitempty"`
	// SessionID is the case's session ("" when it was not made).
	SessionID string `json:"sessionId,omitempty"`
	// Model is the spec the case ran.
	Model string `json:"model,omitempty"`
	// Turns counts the turns run; Steps their model calls.
	Turns int `json:"turns"`
	Steps int `json:"steps"`
	// Usage sums the turns' usage; Tokens is its input plus output.
	Usage  model.Usage `json:"usage"`
	Tokens int64       `json:"tokens"`
	// Reply is the last turn's reply.
	Reply string `json:"reply,omitempty"`
	// Called lists the tools the model called, in first-call order.
	Called []string `json:"called,omitempty"`
	// Duration is the case's wall time.
	Duration time.Duration `json:"durationNs"`
}

// Run runs case c on a fresh eval session of agent a over a copy-on-write
// layer of its tree, and checks its assertions. It never returns nil; a
// case that cannot run is a failed Result saying why.
func Run(ctx context.Context, a *runner.Agent, c *Case, opts Options) *Result {
	start := time.Now()
	r := &Result{Name: c.Name, File: c.File, Line: c.Line}
	defer func() {
		r.Passed = len(r.Failures) == 0
		r.Duration = time.Since(start)
	}()
	fail := func(format string, args ...any) { r.Failures = append(r.Failures, fmt.Sprintf(format, args...)) }

	if a.Plan.Shell {
		// OpenBase refuses it too, but only once the session is made.
		fail("the agent has the host shell, which writes the host directly, past the copy-on-write layer a case runs on: leave shell out of tools:, or give the agent a root")
		return r
	}
	spec, dir := c.Model, a.Dir
	switch {
	case opts.Model != "":
		spec, dir = opts.Model, opts.ModelDir
	case spec == "":
		spec = a.Config.Model
	}
	r.Model = spec
	if spec == "" {
		fail("no model: give the case model:, agent.yaml model:, or july eval --model")
		return r
	}
	m, err := runner.ResolveModel(spec, model.Options{Dir: dir, IdleTimeout: a.Config.ModelTimeout, MaxReplyBytes: a.Config.ModelMaxReply})
	if err != nil {
		fail("model: %v", err)
		return r
	}

	called := map[string]bool{}
	lopts := runner.LoopOptions{Model: m, MaxSteps: opts.MaxSteps, OnEvent: func(ev sessions.Event) {
		if ev.Type != sessions.TypeActionsRequested {
			return
		}
		var d sessions.ActionsRequested
		if json.Unmarshal(ev.Data, &d) == nil {
			for _, call := range d.Calls {
				if !called[call.ToolName] {
					called[call.ToolName] = true
					r.Called = append(r.Called, call.ToolName)
				}
			}
		}
	}}
	sl, err := a.OpenLoop(ctx, runner.OpenOptions{
		Store: opts.Store,
		Meta:  sessions.Meta{Purpose: Purpose},
		Loop:  lopts,
		Layer: layer(a),
	})
	if err != nil {
		fail("starting the session: %v", err)
		return r
	}
	defer sl.Close()
	r.SessionID = sl.Log.ID()

	var failed *runner.TurnError
	for _, text := range c.Turns {
		r.Turns++
		res, err := sl.Loop.Run(ctx, text)
		if errors.As(err, &failed) {
			break
		}
		if err != nil {
			fail("turn %d: %v", r.Turns, err)
			return r
		}
		r.Steps += res.Steps
		r.Reply = res.Text
	}
	r.Usage = sl.Log.Meta().Usage
	r.Tokens = r.Usage.InputTokens + r.Usage.OutputTokens
	if failed != nil {
		// A failed turn's steps are its tool-call rounds (the reply that
		// would have ended it never came).
		r.Steps += countSteps(sl.Log.Events(), failed.TurnID)
	}

	e := &c.Expect
	wantOK := e.Succeeded == nil || *e.Succeeded
	switch {
	case failed != nil && wantOK:
		fail("succeeded: turn %d failed: %s", r.Turns, failed.Message)
	case failed == nil && !wantOK:
		fail("succeeded: false, but all %d turn(s) completed", r.Turns)
	}
	if e.Reply != nil {
		if msg := e.Reply.check(r.Reply); msg != "" {
			fail("reply %s: %q", msg, preview(r.Reply))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(e.Files)) {
		fc := e.Files[p]
		data, err := sl.Session.FS().Read(ctx, p)
		switch {
		case fc.Absent && err == nil:
			fail("files: %s exists (%d bytes), want it absent", p, len(data))
		case fc.Absent && errors.Is(err, vfs.ErrNotFound):
		case err != nil:
			fail("files: %s: %v", p, err)
		default:
			if msg := fc.check(string(data)); msg != "" {
				fail("files: %s %s: %q", p, msg, preview(string(data)))
			}
		}
	}
	for _, name := range e.Called {
		if !called[name] {
			fail("called: %s was not called (called: %s)", name, list(r.Called))
		}
	}
	for _, name := range e.NotCalled {
		if called[name] {
			fail("notCalled: %s was called", name)
		}
	}
	if e.MaxSteps > 0 && r.Steps > e.MaxSteps {
		fail("maxSteps: %d model calls, over %d", r.Steps, e.MaxSteps)
	}
	if e.MaxTokens > 0 && r.Tokens > e.MaxTokens {
		fail("maxTokens: %d tokens, over %d", r.Tokens, e.MaxTokens)
	}
	return r
}

// layer is the OpenLoop hook that puts the session's tree on a
// copy-on-write layer in the session's directory, with a checkpoint at
// each turn's end (as july run --cow does).
func layer(a *runner.Agent) func(context.Context, *sessions.Log, *runner.SessionOptions, *runner.LoopOptions) (func(), error) {
	return func(ctx context.Context, log *sessions.Log, sopts *runner.SessionOptions, lopts *runner.LoopOptions) (func(), error) {
		base, closeBase, err := a.OpenBase(ctx, log.ID())
		if err != nil {
			return nil, err
		}
		c, err := cow.Open(base, filepath.Join(log.Dir(), checkpoint.LayerDir))
		if err != nil {
			closeBase()
			return nil, err
		}
		sopts.Root, sopts.NoIndex = c.Tree(), true
		prev := c.Entries()
		lopts.Checkpoint = func(_ context.Context, turn int, turnID string) *sessions.Checkpoint {
			ref, es, err := checkpoint.Take(c, log.Dir(), turn, turnID, prev)
			if err != nil {
				ref.Error = err.Error()
			} else {
				prev = es
			}
			return &ref
		}
		return func() { c.Close(); closeBase() }, nil
	}
}

// countSteps counts the actions.requested events of turn.
func countSteps(events []sessions.Event, turn string) int {
	n := 0
	for _, ev := range events {
		if ev.TurnID == turn && ev.Type == sessions.TypeActionsRequested {
			n++
		}
	}
	return n
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// preview cuts s for a failure message.
func preview(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
