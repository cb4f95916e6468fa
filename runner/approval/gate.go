package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/julyfs/julyfs/runner/sessions"
	"github.com/julyfs/julyfs/runner/tools"
)

// Request is a call put to an Asker.
type Request struct {
	// SessionID and CallID name the call (CallID is the model's).
	SessionID, CallID string
	// ToolName is the model-facing name.
	ToolName string
	// Args are the call's arguments after alias mapping.
	Args json.RawMessage
	// Summary is the question as a person reads it ("StrReplace on
	// /src/x.go"), control characters escaped.
	Summary string
	// Rule is the approvals: entry that asks.
	Rule Rule
	// Waiting, when set, is called by an Asker that puts the call to a
	// person once the call waits and before it can be answered (the Gate
	// records approval.requested in it, so a client that sees the event
	// finds the call waiting); an error from it ends Ask with that error.
	Waiting func() error
}

// Answer is an Asker's decision.
type Answer struct {
	// Allow runs the call; false denies it.
	Allow bool
	// Always allows the tool without asking for the rest of the session.
	Always bool
	// By is who decided: sessions.DecidedByUser, DecidedByFlag or
	// DecidedByTimeout.
	By string
	// Reason, for a denial, says why for the model ("the user denied
	// it"); empty: the Gate says it.
	Reason string
}

// Asker decides the calls a Rules asks for. Ask returns an error only
// when ctx ends (or Request.Waiting fails); the call then fails with it.
// An Asker that asks a person calls Request.Waiting first.
type Asker interface {
	Ask(ctx context.Context, req Request) (Answer, error)
}

// Flag decides every asked call without asking anyone (july run
// --approve=never|always, or no terminal): no approval.requested event
// is written for it.
type Flag struct {
	// Allow runs the calls; false denies them.
	Allow bool
	// Reason is given to the model for a denial ("approvals are denied in
	// this run (--approve=never)").
	Reason string
}

// Ask answers by the flag.
func (f Flag) Ask(context.Context, Request) (Answer, error) {
	return Answer{Allow: f.Allow, By: sessions.DecidedByFlag, Reason: f.Reason}, nil
}

// Call is what the Gate knows of the call it decides, from its context
// (WithCall): the agent loop sets it for each tool call.
type Call struct {
	// SessionID is the session's id; CallID the model's id of the call.
	SessionID, CallID string
	// Emit, when set, records an event in the session's log (typ is
	// sessions.TypeApprovalRequested or TypeApprovalDecided). It is
	// called from the goroutine running the call, possibly concurrently
	// with other calls of the same step.
	Emit func(typ string, data any) error
}

type callKey struct{}

// WithCall returns ctx carrying c for the Gate.
func WithCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) Call {
	c, _ := ctx.Value(callKey{}).(Call)
	return c
}

// Gate is the decision point of one session: it wraps the tools its
// rules ask for or deny, and remembers the "always" answers.
type Gate struct {
	rules *Rules
	asker Asker
	names func(tool string) []string

	mu     sync.Mutex
	always map[string]bool // tool names allowed for the rest of the session
}

// NewGate returns the gate of rules, asking asker (nil: every asked call
// is denied, as Flag{}). names returns every name a tool answers to (its
// model-facing name first); nil: the model-facing name only.
func NewGate(rules *Rules, asker Asker, names func(tool string) []string) *Gate {
	if asker == nil {
		asker = Flag{Reason: "nobody can be asked in this run"}
	}
	if names == nil {
		names = func(tool string) []string { return []string{tool} }
	}
	return &Gate{rules: rules, asker: asker, names: names, always: map[string]bool{}}
}

// Remember replays a session's log: each "always" answer in it allows
// its tool without asking again.
func (g *Gate) Remember(events []sessions.Event) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ev := range events {
		if ev.Type != sessions.TypeApprovalDecided {
			continue
		}
		var d sessions.ApprovalDecided
		if json.Unmarshal(ev.Data, &d) == nil && d.Always && d.Decision == sessions.DecisionAllow {
			g.always[d.ToolName] = true
		}
	}
}

// Policy returns the rule deciding the tool called name, and whether one
// does.
func (g *Gate) Policy(name string) (Rule, bool) { return g.rules.Match(g.names(name)) }

// Wrap returns the tools with each one the rules ask for or deny wrapped
// in the gate; the others (and the slice) are returned as they are.
func (g *Gate) Wrap(ts []*tools.Tool) []*tools.Tool {
	if g.rules.Empty() {
		return ts
	}
	out := make([]*tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = g.wrap(t)
	}
	return out
}

func (g *Gate) wrap(t *tools.Tool) *tools.Tool {
	rule, ok := g.Policy(t.Name)
	if !ok || rule.Policy == Allow {
		return t
	}
	w := *t
	run := t.Run
	w.Run = func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
		allowed, why, err := g.decide(ctx, t.Name, rule, args)
		if err != nil {
			return nil, err
		}
		if !allowed {
			return tools.Errorf("%s was not run: %s (agent.yaml approvals: %s)", t.Name, why, rule), nil
		}
		return run(ctx, args)
	}
	return &w
}

// decide decides one call and records the decision.
func (g *Gate) decide(ctx context.Context, tool string, rule Rule, args json.RawMessage) (bool, string, error) {
	call := callFrom(ctx)
	emit := func(typ string, data any) error {
		if call.Emit == nil {
			return nil
		}
		return call.Emit(typ, data)
	}
	decided := sessions.ApprovalDecided{CallID: call.CallID, ToolName: tool, Rule: rule.String()}
	if rule.Policy == Deny {
		decided.Decision, decided.By, decided.Reason = sessions.DecisionDeny, sessions.DecidedByPolicy, "the approval policy denies it"
		return false, decided.Reason, emit(sessions.TypeApprovalDecided, decided)
	}
	g.mu.Lock()
	always := g.always[tool]
	g.mu.Unlock()
	if always {
		decided.Decision, decided.By, decided.Always = sessions.DecisionAllow, sessions.DecidedByUser, true
		return true, "", emit(sessions.TypeApprovalDecided, decided)
	}
	req := Request{SessionID: call.SessionID, CallID: call.CallID, ToolName: tool, Args: args, Summary: Summary(tool, args), Rule: rule}
	requested := false
	req.Waiting = func() error {
		requested = true
		return emit(sessions.TypeApprovalRequested, sessions.ApprovalRequested{CallID: call.CallID, ToolName: tool, Args: args, Summary: req.Summary, Rule: rule.String()})
	}
	ans, err := g.asker.Ask(ctx, req)
	if err != nil {
		if requested && ctx.Err() != nil {
			// The turn ends before an answer: the call is denied, and the
			// log says so (the turn is recorded as interrupted).
			decided.Decision, decided.By, decided.Reason = sessions.DecisionDeny, sessions.DecidedByInterrupt, interruptReason(ctx)
			if eerr := emit(sessions.TypeApprovalDecided, decided); eerr != nil {
				return false, "", eerr
			}
		}
		return false, "", err
	}
	decided.Decision, decided.By, decided.Always = sessions.DecisionDeny, ans.By, false
	if !ans.Allow {
		decided.Reason = ans.Reason
		if decided.Reason == "" {
			decided.Reason = "approval was denied"
		}
	}
	if ans.Allow {
		decided.Decision, decided.Always = sessions.DecisionAllow, ans.Always
		if ans.Always {
			g.mu.Lock()
			g.always[tool] = true
			g.mu.Unlock()
		}
	}
	if err := emit(sessions.TypeApprovalDecided, decided); err != nil {
		return false, "", err
	}
	return ans.Allow, decided.Reason, nil
}

// interruptReason says why a call waiting for an answer was denied when
// its turn's ctx ended: the context's cause when it has one beyond the
// plain cancellation ("the server is stopping").
func interruptReason(ctx context.Context) string {
	const why = "the turn was interrupted before anyone answered"
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return why + " (" + cause.Error() + ")"
	}
	return why
}

// MaxSummary bounds a Summary's argument text, in bytes.
const MaxSummary = 200

// Summary is the question about a call as a person reads it: the tool
// and what it acts on ("StrReplace on /src/x.go", "Shell: rm -rf
// build", "WebFetch of https://…"), else its arguments as compact JSON,
// cut at MaxSummary bytes, with control characters escaped (a model's
// arguments must not drive the terminal).
func Summary(tool string, args json.RawMessage) string {
	var m map[string]any
	json.Unmarshal(args, &m)
	str := func(k string) (string, bool) {
		s, ok := m[k].(string)
		return s, ok && s != ""
	}
	if s, ok := str("path"); ok {
		return tool + " on " + clean(s)
	}
	if s, ok := str("command"); ok {
		return tool + ": " + clean(s)
	}
	if s, ok := str("url"); ok {
		return tool + " of " + clean(s)
	}
	if len(m) == 0 {
		return tool
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		v, _ := json.Marshal(m[k])
		fmt.Fprintf(&b, "%s=%s", k, v)
	}
	return tool + " with " + clean(b.String())
}

// clean cuts s at MaxSummary bytes (on a rune boundary) and escapes its
// control characters.
func clean(s string) string {
	cut := false
	if len(s) > MaxSummary {
		n := MaxSummary
		for n > 0 && !utf8Start(s[n]) {
			n--
		}
		s, cut = s[:n], true
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	if cut {
		b.WriteString("…")
	}
	return b.String()
}

func utf8Start(c byte) bool { return c&0xc0 != 0x80 }
