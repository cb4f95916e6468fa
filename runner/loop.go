package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/tools"
)

// This file is the agent loop: a turn asks the model, runs the tool calls
// it requests through the turn's dispatcher, gives the results back, and
// repeats until the model answers with text and no calls, the step limit is
// reached, or something fails. Every step is an event in the session's log
// before the loop goes on.

// DefaultMaxSteps is the default bound on model calls in one turn.
const DefaultMaxSteps = 50

// LoopOptions configure a Loop.
type LoopOptions struct {
	// Model answers the turns. Required.
	Model model.Model
	// MaxSteps bounds the model calls in one turn (default
	// DefaultMaxSteps); reaching it fails the turn with a message naming
	// the limit.
	MaxSteps int
	// MaxTokens bounds each reply; 0 lets the provider choose.
	MaxTokens int
	// Commit, when set, runs on the final text before the turn completes
	// (the spec's end-of-turn result hook): an error, or an empty final
	// text, fails the turn. A dry run skips it.
	Commit func(ctx context.Context, text string) error
	// OnEvent, when set, is called with each event once it is durable, in
	// order, from the goroutine running the turn.
	OnEvent func(sessions.Event)
	// OnDelta, when set, receives the assistant's text as it streams.
	OnDelta func(model.Delta)
	// Checkpoint, when set, runs at the end of every turn (completed,
	// failed or interrupted) before its last event, which names what it
	// returns: a copy-on-write session's checkpoint (turn is the turn's
	// number, the n-th turn.started of the log).
	Checkpoint func(ctx context.Context, turn int, turnID string) *sessions.Checkpoint
}

// Loop runs the turns of one durable session on one bound tree. One turn
// runs at a time; Run serializes callers.
type Loop struct {
	s    *Session
	log  *sessions.Log
	opts LoopOptions

	mu      sync.Mutex
	specs   []model.ToolSpec // the tools as the model sees them, from the first turn
	system  string
	history []model.Message
	first   bool // no message yet: the next one gets the AGENTS.md preamble
	// restored reports that the session's temp mounts have been put back
	// (done before the first turn this Loop runs).
	restored bool
}

// TurnResult is a completed turn.
type TurnResult struct {
	// TurnID is the turn's id in the log.
	TurnID string
	// Text is the final assistant text.
	Text string
	// Usage sums the turn's model calls.
	Usage model.Usage
	// Steps counts the turn's model calls.
	Steps int
}

// TurnError is a turn that failed: the message recorded in its
// turn.failed event.
type TurnError struct {
	TurnID  string
	Message string
	// Err is the cause, when there is one (a model error, the context's).
	Err error
}

func (e *TurnError) Error() string { return e.Message }

func (e *TurnError) Unwrap() error { return e.Err }

// Interrupted reports a turn cut short by cancellation.
func (e *TurnError) Interrupted() bool { return e.Message == sessions.MessageInterrupted }

// NewLoop returns a loop over the session s that records in log, with the
// conversation so far replayed from log's events.
func NewLoop(s *Session, log *sessions.Log, opts LoopOptions) (*Loop, error) {
	if opts.Model == nil {
		return nil, errors.New("runner: a loop needs a model")
	}
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	s.setSessionID(log.ID())
	events := log.Events()
	l := &Loop{s: s, log: log, opts: opts, system: s.agent.SystemPrompt(), history: Replay(ActiveEvents(events)), first: true}
	for _, ev := range events {
		if ev.Type == sessions.TypeMessageReceived {
			l.first = false
			break
		}
	}
	return l, nil
}

// History returns the conversation as the model sees it. The slice is the
// caller's.
func (l *Loop) History() []model.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]model.Message(nil), l.history...)
}

// System returns the system prompt.
func (l *Loop) System() string { return l.system }

// turnState is one running turn.
type turnState struct {
	id    string
	num   int // the turn's number: the n-th turn.started of the log
	usage model.Usage
	steps int
}

// Run runs one turn on the person's message text. A turn that fails
// (model error, step limit, cancellation: "turn interrupted", commit) is
// recorded with turn.failed and returned as a *TurnError; the session
// stays usable. Any other error is the log's (a write that failed), or
// keeping the temp mounts' files with the session (see tempstate.go) — a
// completed turn then returns its result with that error.
func (l *Loop) Run(ctx context.Context, text string) (*TurnResult, error) {
	return l.RunTurn(ctx, TurnInput{Text: text})
}

// TurnInput is one turn's message.
type TurnInput struct {
	// ID is the turn's id; "" gets a new one (sessions.NewTurnID). A
	// server gives the id out before the turn starts.
	ID string
	// Text is the person's message.
	Text string
	// Data is merged into message.received's data next to text (a
	// reminder's {"reminderId", "fireCount"}); it cannot replace text or
	// preamble.
	Data map[string]any
}

// RunTurn is Run with the turn's id and message.received's extra data.
func (l *Loop) RunTurn(ctx context.Context, in TurnInput) (*TurnResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.restore(ctx); err != nil {
		return nil, err
	}
	res, err := l.run(ctx, in)
	if serr := l.s.saveTemp(context.WithoutCancel(ctx), l.log.Dir()); serr != nil && err == nil {
		return res, serr
	}
	return res, err
}

// Restore puts the session's temp mounts back as its last turn left
// them, which RunTurn does before its first turn, so that the tree can be
// read before a turn runs (a file browser). Once done it does nothing.
func (l *Loop) Restore(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.restore(ctx)
}

// restore is Restore with l.mu held.
func (l *Loop) restore(ctx context.Context) error {
	if l.restored {
		return nil
	}
	if err := l.s.restoreTemp(ctx, l.log.Dir()); err != nil {
		return err
	}
	l.restored = true
	return nil
}

// run is Run without the temp mounts' keeping.
func (l *Loop) run(ctx context.Context, in TurnInput) (*TurnResult, error) {
	text := in.Text
	ts := &turnState{id: in.ID}
	if ts.id == "" {
		ts.id = sessions.NewTurnID()
	}
	preamble := ""
	if l.first {
		var err error
		if preamble, err = l.s.FirstTurnPreamble(ctx); err != nil {
			preamble = ""
		}
	}
	if err := l.emit(ts, sessions.TypeMessageReceived, receivedData(text, preamble, in.Data)); err != nil {
		return nil, err
	}
	l.first = false
	l.history = append(l.history, userMessage(text, preamble))
	if err := l.emit(ts, sessions.TypeTurnStarted, sessions.TurnStarted{Model: l.opts.Model.Name(), Agent: l.log.Meta().Agent, DryRun: l.s.opts.DryRun}); err != nil {
		return nil, err
	}
	ts.num = TurnCount(l.log.Events())
	turn, err := l.s.loopTurn(l)
	if err != nil {
		return nil, l.fail(ts, "binding the turn's tree: "+err.Error(), err)
	}
	if l.specs == nil {
		// Every turn of a session has the same tools; their schemas are
		// marshalled once.
		l.specs = toolSpecs(turn.Tools())
	}
	specs := l.specs
	var final string
	for {
		if err := ctx.Err(); err != nil {
			return nil, l.fail(ts, sessions.MessageInterrupted, err)
		}
		if ts.steps == l.opts.MaxSteps {
			return nil, l.fail(ts, fmt.Sprintf("step limit reached: %d model calls without a final reply (max steps %d)", ts.steps, l.opts.MaxSteps), nil)
		}
		ts.steps++
		req := &model.Request{System: l.system, Messages: l.history, Tools: specs, MaxTokens: l.opts.MaxTokens}
		resp, err := l.opts.Model.Generate(ctx, req, l.opts.OnDelta)
		if err != nil {
			if ctx.Err() != nil {
				return nil, l.fail(ts, sessions.MessageInterrupted, ctx.Err())
			}
			return nil, l.fail(ts, err.Error(), err)
		}
		ts.usage.Add(resp.Usage)
		// The assistant message as the log records it (one text part), so
		// a replay gives the model the same conversation.
		text := resp.Message.Text()
		msg := model.Message{Role: model.RoleAssistant, ToolCalls: slices.Clone(resp.Message.ToolCalls)}
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				// Some compatible servers send none; a result needs one.
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", ts.steps, i+1)
			}
		}
		if text != "" {
			msg.Content = []model.Part{model.TextPart(text)}
		}
		if text != "" || len(msg.ToolCalls) == 0 {
			if err := l.emit(ts, sessions.TypeMessageCompleted, sessions.MessageCompleted{Text: text}); err != nil {
				return nil, err
			}
		}
		if len(msg.ToolCalls) == 0 {
			l.history = append(l.history, msg)
			final = text
			break
		}
		calls := make([]sessions.Call, len(msg.ToolCalls))
		for i, c := range msg.ToolCalls {
			calls[i] = eventCall(c)
		}
		if err := l.emit(ts, sessions.TypeActionsRequested, sessions.ActionsRequested{Calls: calls}); err != nil {
			return nil, err
		}
		l.history = append(l.history, msg)
		results, err := l.runCalls(ctx, ts, turn, msg.ToolCalls)
		if err != nil {
			return nil, err
		}
		l.history = append(l.history, model.Message{Role: model.RoleTool, ToolResults: results})
	}
	if err := ctx.Err(); err != nil {
		return nil, l.fail(ts, sessions.MessageInterrupted, err)
	}
	if l.opts.Commit != nil && !l.s.opts.DryRun {
		if final == "" {
			return nil, l.fail(ts, "the final reply is empty: a turn with a commit needs text", nil)
		}
		if err := l.opts.Commit(ctx, final); err != nil {
			return nil, l.fail(ts, "commit: "+err.Error(), err)
		}
	}
	if err := l.emit(ts, sessions.TypeTurnCompleted, sessions.TurnCompleted{Result: final, Usage: ts.usage, Checkpoint: l.checkpoint(ctx, ts)}); err != nil {
		return nil, err
	}
	return &TurnResult{TurnID: ts.id, Text: final, Usage: ts.usage, Steps: ts.steps}, nil
}

// emit appends an event and hands it to OnEvent.
func (l *Loop) emit(ts *turnState, typ string, data any) error {
	ev, err := l.log.Append(typ, ts.id, data)
	if err != nil {
		return err
	}
	if l.opts.OnEvent != nil {
		l.opts.OnEvent(ev)
	}
	return nil
}

// checkpoint runs the Checkpoint option for the turn ending, if any.
func (l *Loop) checkpoint(ctx context.Context, ts *turnState) *sessions.Checkpoint {
	if l.opts.Checkpoint == nil || ts.num == 0 {
		return nil
	}
	return l.opts.Checkpoint(context.WithoutCancel(ctx), ts.num, ts.id)
}

// fail records turn.failed and returns the *TurnError (or the log's error).
func (l *Loop) fail(ts *turnState, msg string, cause error) error {
	usage := ts.usage
	if err := l.emit(ts, sessions.TypeTurnFailed, sessions.TurnFailed{Message: msg, Usage: &usage, Checkpoint: l.checkpoint(context.Background(), ts)}); err != nil {
		return err
	}
	return &TurnError{TurnID: ts.id, Message: msg, Err: cause}
}

// runCalls runs one assistant message's tool calls: a run of consecutive
// read calls (and unknown names) concurrently, each write call alone and
// in order, so a read after a write sees it. Results come back, and are
// recorded, in the model's order.
func (l *Loop) runCalls(ctx context.Context, ts *turnState, turn *Turn, calls []model.ToolCall) ([]model.ToolResult, error) {
	results := make([]*tools.Result, len(calls))
	out := make([]model.ToolResult, len(calls))
	isWrite := func(c model.ToolCall) bool {
		t := turn.Tool(c.Name)
		return t != nil && t.Effect == tools.EffectWrite
	}
	for i := 0; i < len(calls); {
		j := i + 1
		if !isWrite(calls[i]) {
			for j < len(calls) && !isWrite(calls[j]) {
				j++
			}
		}
		if j-i == 1 {
			results[i] = turn.Call(l.callContext(ctx, ts, calls[i]), calls[i].Name, calls[i].Args)
		} else {
			var wg sync.WaitGroup
			for k := i; k < j; k++ {
				wg.Go(func() { results[k] = turn.Call(l.callContext(ctx, ts, calls[k]), calls[k].Name, calls[k].Args) })
			}
			wg.Wait()
		}
		for k := i; k < j; k++ {
			ar := eventResult(calls[k], results[k])
			if err := l.emit(ts, sessions.TypeActionResult, ar); err != nil {
				return nil, err
			}
			out[k] = replayResult(ar)
		}
		i = j
	}
	return out, nil
}

// receivedData is message.received's data: the text and preamble, with
// extra merged in beside them.
func receivedData(text, preamble string, extra map[string]any) any {
	d := sessions.MessageReceived{Text: text, Preamble: preamble}
	if len(extra) == 0 {
		return d
	}
	m := make(map[string]any, len(extra)+2)
	for k, v := range extra {
		m[k] = v
	}
	m["text"] = d.Text
	if d.Preamble != "" {
		m["preamble"] = d.Preamble
	} else {
		delete(m, "preamble")
	}
	return m
}

// userMessage is the person's message, with the first turn's preamble as a
// part before the text.
func userMessage(text, preamble string) model.Message {
	m := model.Message{Role: model.RoleUser}
	if preamble != "" {
		m.Content = append(m.Content, model.TextPart(preamble))
	}
	m.Content = append(m.Content, model.TextPart(text))
	return m
}

// toolSpecs describes the turn's tools to the model.
func toolSpecs(ts []*tools.Tool) []model.ToolSpec {
	out := make([]model.ToolSpec, len(ts))
	for i, t := range ts {
		schema, err := json.Marshal(t.Schema)
		if err != nil {
			schema = []byte(`{"type":"object"}`)
		}
		out[i] = model.ToolSpec{Name: t.Name, Description: t.Description, Schema: schema}
	}
	return out
}

// eventCall records a call; arguments that are not JSON are kept as text.
func eventCall(c model.ToolCall) sessions.Call {
	ec := sessions.Call{CallID: c.ID, ToolName: c.Name}
	if len(c.Args) > 0 {
		if json.Valid(c.Args) {
			ec.Args = c.Args
		} else {
			ec.RawArgs = string(c.Args)
		}
	}
	return ec
}

// eventResult records a result.
func eventResult(c model.ToolCall, r *tools.Result) sessions.ActionResult {
	ar := sessions.ActionResult{CallID: c.ID, ToolName: c.Name, Output: r.String(), IsError: r.IsError, Stubbed: r.Stubbed}
	for _, p := range r.Content {
		if p.Type == "image" {
			ar.Images = append(ar.Images, model.Part{Type: p.Type, Data: p.Data, MIMEType: p.MIMEType})
		}
	}
	return ar
}
