// Package model is the small interface between the agent loop and a
// language model: a conversation of messages (text, images, tool calls,
// tool results) goes in, one assistant message comes out, with its text
// streamed as it is generated and the tokens it used.
//
// Providers live in sub-packages (script, openai, anthropic), each with a
// constructor New(name string, opts Options) (Model, error); [ParseSpec]
// splits a --model value into its provider and model name.
//
// # Errors
//
// A provider error that retrying will not fix (a rejected model, a bad
// key, a 400) is returned as a *ProviderError naming the provider and the
// HTTP status; providers retry 429, 5xx and connection resets themselves
// (honouring Retry-After) before giving up. A missing API key is reported
// by New, before any request.
//
// # Bounds
//
// A provider that talks to a server bounds what the server can do to it
// (Options.IdleTimeout, Options.MaxReplyBytes): a server silent for the
// idle timeout fails the attempt like a dropped connection (retried, then
// "the model's server sent nothing for 2m0s ..."); a reply over the limit
// fails the call with "model reply over N bytes ..."; a streaming request
// answered with something that is not an event stream fails at once,
// naming the content type and the first bytes. Each message says how to
// raise the bound.
//
// # Concurrency
//
// A Model is safe for concurrent use; Generate calls are independent.
package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Role says who wrote a message.
type Role string

const (
	// RoleUser is the person's message (and, for providers that want it
	// so, the tool results that answer the previous assistant message).
	RoleUser Role = "user"
	// RoleAssistant is the model's message.
	RoleAssistant Role = "assistant"
	// RoleTool carries tool results: every result answering the previous
	// assistant message's tool calls, in that message's order.
	RoleTool Role = "tool"
)

// Part is a piece of message content: text, or an image whose Data is the
// raw bytes (providers encode them as their API wants).
type Part struct {
	// Type is "text" or "image".
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Type: "text", Text: s} }

// ToolCall is one call the model asks for.
type ToolCall struct {
	// ID is the provider's call id; the result must carry it back.
	ID string `json:"id"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Args is the arguments as the model wrote them. It may be malformed
	// JSON: the loop answers that with a tool error, not a failed turn.
	Args json.RawMessage `json:"args,omitempty"`
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string `json:"callId"`
	Name    string `json:"name"`
	Content []Part `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

// Message is one entry of the conversation. A user message has Content; an
// assistant message has Content (its text) and/or ToolCalls; a tool message
// has ToolResults.
type Message struct {
	Role        Role         `json:"role"`
	Content     []Part       `json:"content,omitempty"`
	ToolCalls   []ToolCall   `json:"toolCalls,omitempty"`
	ToolResults []ToolResult `json:"toolResults,omitempty"`
}

// Text joins the message's text parts.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Content {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Schema is the JSON schema of the arguments (an object schema).
	Schema json.RawMessage `json:"schema"`
}

// Request is one model call.
type Request struct {
	// System is the system prompt (instructions and environment brief).
	System string
	// Messages is the conversation so far, oldest first.
	Messages []Message
	// Tools are the tools the model may call, in listing order.
	Tools []ToolSpec
	// MaxTokens bounds the reply; 0 lets the provider choose.
	MaxTokens int
}

// Usage is the tokens one call used.
type Usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens"`
	CacheWriteTokens int64 `json:"cacheWriteTokens"`
	ReasoningTokens  int64 `json:"reasoningTokens,omitempty"`
}

// Add adds u2 to u.
func (u *Usage) Add(u2 Usage) {
	u.InputTokens += u2.InputTokens
	u.OutputTokens += u2.OutputTokens
	u.CacheReadTokens += u2.CacheReadTokens
	u.CacheWriteTokens += u2.CacheWriteTokens
	u.ReasoningTokens += u2.ReasoningTokens
}

// Response is the model's answer to one Request.
type Response struct {
	// Message is the assistant message (RoleAssistant).
	Message Message
	// Usage is what the call cost.
	Usage Usage
	// StopReason is the provider's reason, as it said it ("end_turn",
	// "tool_use", "stop", "tool_calls", "max_tokens", ...).
	StopReason string
}

// Delta is a piece of the reply, streamed while it is generated.
type Delta struct {
	// Text is assistant text appended since the previous delta.
	Text string
}

// Model is a language model.
type Model interface {
	// Name is the model's spec as the user wrote it ("openai:gpt-4.1").
	Name() string
	// Generate runs one call. onDelta, when non-nil, is called with text as
	// it streams, from the calling goroutine, before Generate returns.
	Generate(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// Options configure a provider constructor.
type Options struct {
	// APIKey overrides the provider's key variable (OPENAI_API_KEY,
	// ANTHROPIC_API_KEY).
	APIKey string
	// BaseURL overrides the provider's base URL variable (OPENAI_BASE_URL,
	// ANTHROPIC_BASE_URL).
	BaseURL string
	// Getenv reads the environment; nil means os.Getenv. Tests inject it.
	Getenv func(string) string
	// MaxRetries bounds retries of 429, 5xx and connection resets; 0 means
	// the provider's default, a negative value none.
	MaxRetries int
	// Dir is the directory relative paths resolve against (script files).
	Dir string
	// IdleTimeout is how long a provider's server may send nothing (before
	// the response, or within the stream) before the attempt fails, like
	// a dropped connection; 0 means 120 s.
	IdleTimeout time.Duration
	// MaxReplyBytes bounds one reply: its text, and its tool calls' names
	// and arguments, in bytes; past it the call fails with "model reply
	// over N bytes". 0 means 32 bytes per token of the request's maximum
	// output (128 Ki tokens when neither the request nor the provider
	// bounds it), at least 1 MiB.
	MaxReplyBytes int64
}

// ProviderError is a call a provider refused or could not serve.
type ProviderError struct {
	// Provider is "openai", "anthropic", ...
	Provider string
	// Status is the HTTP status, 0 when there was no response.
	Status int
	// Message is the provider's own message.
	Message string
	// Err is the underlying error, if any.
	Err error
}

func (e *ProviderError) Error() string {
	switch {
	case e.Status != 0:
		return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.Status, e.Message)
	case e.Err != nil:
		return fmt.Sprintf("%s: %s", e.Provider, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Provider, e.Message)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// ParseSpec splits a model spec into its provider and model name:
// "openai:gpt-4.1" is ("openai", "gpt-4.1"); "script:demo.yaml" is
// ("script", "demo.yaml"). A bare name picks the provider by its prefix
// ("claude-*" is anthropic; "gpt-*", "o1*", "o3*", "o4*" are openai) and
// reports inferred true. Anything else is an error naming the spec.
func ParseSpec(spec string) (provider, name string, inferred bool, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return "", "", false, fmt.Errorf("no model: give --model or agent.yaml's model (openai:NAME, anthropic:NAME or script:FILE)")
	}
	if p, n, ok := strings.Cut(spec, ":"); ok {
		switch p {
		case "openai", "anthropic", "script":
			if n == "" {
				return "", "", false, fmt.Errorf("model %q: no name after %q", spec, p+":")
			}
			return p, n, false, nil
		}
		return "", "", false, fmt.Errorf("model %q: unknown provider %q (want openai, anthropic or script)", spec, p)
	}
	switch {
	case strings.HasPrefix(spec, "claude-"):
		return "anthropic", spec, true, nil
	case strings.HasPrefix(spec, "gpt-"), isOSeries(spec):
		return "openai", spec, true, nil
	}
	return "", "", false, fmt.Errorf("model %q: cannot tell its provider; write openai:%s or anthropic:%s", spec, spec, spec)
}

// isOSeries reports OpenAI's o-series names: o1, o3-mini, o4-mini, ...
func isOSeries(s string) bool {
	if len(s) < 2 || s[0] != 'o' || s[1] < '0' || s[1] > '9' {
		return false
	}
	return true
}
