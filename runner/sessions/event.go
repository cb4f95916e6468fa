package sessions

import (
	"encoding/json"
	"time"

	"github.com/julyfs/julyfs/runner/model"
)

// The event types a session's log holds: the spec's vocabulary.
const (
	// TypeMessageReceived is the person's message ([MessageReceived]).
	TypeMessageReceived = "message.received"
	// TypeTurnStarted opens a turn ([TurnStarted]).
	TypeTurnStarted = "turn.started"
	// TypeMessageCompleted is one finished assistant message
	// ([MessageCompleted]): the final reply, or text that came with tool
	// calls.
	TypeMessageCompleted = "message.completed"
	// TypeActionsRequested lists the tool calls of one assistant message
	// ([ActionsRequested]).
	TypeActionsRequested = "actions.requested"
	// TypeActionResult is one tool call's result ([ActionResult]).
	TypeActionResult = "action.result"
	// TypeTurnCompleted ends a turn that produced its reply
	// ([TurnCompleted]).
	TypeTurnCompleted = "turn.completed"
	// TypeTurnFailed ends a turn without one ([TurnFailed]).
	TypeTurnFailed = "turn.failed"
)

// Event is one line of events.ndjson: the spec's envelope.
type Event struct {
	// Type is one of the Type constants.
	Type string `json:"type"`
	// Index is the event's position in the log, from 0, without gaps.
	Index int64 `json:"index"`
	// SessionID is the session's id.
	SessionID string `json:"sessionId"`
	// TurnID is the turn the event belongs to.
	TurnID string `json:"turnId,omitempty"`
	// At is when the event was appended (UTC).
	At time.Time `json:"at"`
	// Data is the payload, a JSON object whose shape the Type decides.
	Data json.RawMessage `json:"data"`
}

// MessageReceived is message.received's data.
type MessageReceived struct {
	// Text is the message as the person wrote it.
	Text string `json:"text"`
	// Preamble is what the runner put before the text on the session's
	// first turn (the tree's AGENTS.md), so a replay gives the model the
	// same message.
	Preamble string `json:"preamble,omitempty"`
}

// TurnStarted is turn.started's data.
type TurnStarted struct {
	// Model is the model spec the turn runs.
	Model string `json:"model,omitempty"`
	// Agent is the agent's name, so that session.json can be rebuilt
	// from the log alone.
	Agent string `json:"agent,omitempty"`
	// DryRun reports a dry run: writes are stubbed and no commit runs.
	DryRun bool `json:"dryRun,omitempty"`
}

// MessageCompleted is message.completed's data.
type MessageCompleted struct {
	Text string `json:"text"`
}

// Call is one requested tool call.
type Call struct {
	CallID   string          `json:"callId"`
	ToolName string          `json:"toolName"`
	Args     json.RawMessage `json:"args,omitempty"`
	// RawArgs holds arguments that are not valid JSON, as the model wrote
	// them (Args is then empty).
	RawArgs string `json:"rawArgs,omitempty"`
}

// ActionsRequested is actions.requested's data.
type ActionsRequested struct {
	Calls []Call `json:"calls"`
}

// ActionResult is action.result's data.
type ActionResult struct {
	CallID   string `json:"callId"`
	ToolName string `json:"toolName"`
	// Output is the result's text (an image described in brackets).
	Output string `json:"output"`
	// Images are the result's image parts, when it has any.
	Images  []model.Part `json:"images,omitempty"`
	IsError bool         `json:"isError"`
	// Stubbed marks a write a dry run answered without running it.
	Stubbed bool `json:"stubbed,omitempty"`
}

// TurnCompleted is turn.completed's data.
type TurnCompleted struct {
	// Result is the final assistant text.
	Result string      `json:"result"`
	Usage  model.Usage `json:"usage"`
	// Checkpoint is the turn's checkpoint, in a copy-on-write session.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// TurnFailed is turn.failed's data.
type TurnFailed struct {
	// Message says why; "turn interrupted" for a turn cut short (Ctrl-C,
	// or a process that ended mid-turn, closed on the next open).
	Message string `json:"message"`
	// Usage is what the turn's model calls cost before it failed.
	Usage *model.Usage `json:"usage,omitempty"`
	// Checkpoint is the turn's checkpoint, in a copy-on-write session.
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// MessageInterrupted is TurnFailed.Message for a turn cut short.
const MessageInterrupted = "turn interrupted"

// dataTypes is the shape of each known type's data: an event whose data
// does not decode into it is corrupt.
var dataTypes = map[string]func() any{
	TypeMessageReceived:   func() any { return new(MessageReceived) },
	TypeTurnStarted:       func() any { return new(TurnStarted) },
	TypeMessageCompleted:  func() any { return new(MessageCompleted) },
	TypeActionsRequested:  func() any { return new(ActionsRequested) },
	TypeActionResult:      func() any { return new(ActionResult) },
	TypeTurnCompleted:     func() any { return new(TurnCompleted) },
	TypeTurnFailed:        func() any { return new(TurnFailed) },
	TypeSessionRewound:    func() any { return new(SessionRewound) },
	TypeApprovalRequested: func() any { return new(ApprovalRequested) },
	TypeApprovalDecided:   func() any { return new(ApprovalDecided) },
}

// Known reports whether typ is an event type this version knows.
func Known(typ string) bool { return dataTypes[typ] != nil }

// The approval events (package runner/approval): a tool call agent.yaml's
// approvals: asks for waits for a person's answer.
const (
	// TypeApprovalRequested is a call waiting for a person's answer
	// ([ApprovalRequested]).
	TypeApprovalRequested = "approval.requested"
	// TypeApprovalDecided is the decision on a call approvals: asks for
	// or denies ([ApprovalDecided]).
	TypeApprovalDecided = "approval.decided"
)

// ApprovalRequested is approval.requested's data.
type ApprovalRequested struct {
	CallID   string `json:"callId"`
	ToolName string `json:"toolName"`
	// Args are the call's arguments after alias mapping.
	Args json.RawMessage `json:"args,omitempty"`
	// Summary is the question as a person reads it ("StrReplace on
	// /src/x.go"), control characters escaped.
	Summary string `json:"summary,omitempty"`
	// Rule is the approvals: entry that asks ("edit: ask").
	Rule string `json:"rule,omitempty"`
}

// The values of ApprovalDecided.Decision and ApprovalDecided.By.
const (
	DecisionAllow = "allow"
	DecisionDeny  = "deny"

	// DecidedByPolicy: approvals: denies the tool outright.
	DecidedByPolicy = "policy"
	// DecidedByUser: a person answered (on the terminal, over HTTP), or
	// answered "always" earlier in the session.
	DecidedByUser = "user"
	// DecidedByFlag: july run --approve=never|always, or no terminal to
	// ask on (as --approve=never).
	DecidedByFlag = "flag"
	// DecidedByTimeout: no answer came in time (july serve
	// --approval-timeout); the call is denied.
	DecidedByTimeout = "timeout"
	// DecidedByInterrupt: the turn was cut short (Ctrl-C, a cancel, a
	// server stopping) while the call waited for an answer; it did not
	// run.
	DecidedByInterrupt = "interrupt"
	// DecidedByRestart: the process running the turn stopped (killed,
	// crashed) while the call waited; the next process to open the
	// session records the denial as it closes the turn as interrupted.
	DecidedByRestart = "restart"
)

// ApprovalDecided is approval.decided's data.
type ApprovalDecided struct {
	CallID   string `json:"callId"`
	ToolName string `json:"toolName"`
	// Decision is DecisionAllow or DecisionDeny.
	Decision string `json:"decision"`
	// By is DecidedByPolicy, DecidedByUser, DecidedByFlag,
	// DecidedByTimeout, DecidedByInterrupt or DecidedByRestart.
	By string `json:"by"`
	// Always reports an "always" answer: the tool is allowed without
	// asking for the rest of the session.
	Always bool `json:"always,omitempty"`
	// Rule is the approvals: entry that applied ("edit: ask").
	Rule string `json:"rule,omitempty"`
	// Reason says why a call was denied, as the model was told ("the
	// user denied it"); empty for an allowed call.
	Reason string `json:"reason,omitempty"`
}
