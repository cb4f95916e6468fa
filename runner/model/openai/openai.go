// Package openai is the model provider for OpenAI's Chat Completions API
// and every server that speaks it (vLLM, llama.cpp's server, ollama,
// LiteLLM, ...), built on the official SDK github.com/openai/openai-go/v3.
//
// Each Generate is one streamed POST /chat/completions with the tools
// and stream_options.include_usage: text deltas go to onDelta as they
// arrive, tool calls are assembled from the chunks they are split across,
// and the usage comes from the last chunk.
//
// # Configuration
//
// The key is Options.APIKey, else OPENAI_API_KEY; the server is
// Options.BaseURL, else OPENAI_BASE_URL, else https://api.openai.com/v1.
// New refuses a missing key for OpenAI's own server, before any request.
// With a base URL of its own (a local vLLM, llama.cpp or ollama) the key
// may be empty and no Authorization header is sent.
//
// # Messages
//
// The system prompt is a system message. User messages carry text and
// images (as base64 data: URLs). An assistant message carries its text and
// tool calls, arguments as the model wrote them. Chat Completions' tool
// messages are text only, so each tool result is a tool message with its
// text (prefixed "Error: " when IsError), and the images any result
// returned follow in one user message after the last tool message, each
// introduced by the call id it answers. Usage: InputTokens counts the
// prompt tokens neither read from nor written to the cache (prompt_tokens
// less cached_tokens and cache_write_tokens), so that input, cache read
// and cache write add up to the prompt for OpenAI and Anthropic alike;
// OutputTokens is completion_tokens, reasoning included, and
// ReasoningTokens the reasoning part of it.
//
// # Errors and retries
//
// The SDK's own retries are off: Generate retries 408, 409, 429, 5xx and
// dropped connections itself (honouring Retry-After-Ms and Retry-After,
// else backoff from 0.5 s doubling to 8 s), at most Options.MaxRetries
// times (0: 4; negative: none), and never once text has been streamed to
// onDelta. What it does not retry, or still fails, is a
// *model.ProviderError with the HTTP status and the server's message. A
// cancelled ctx ends the call, including a wait, with an error that
// errors.Is ctx.Err(). Tool-call arguments that are not valid JSON are
// returned as they came, for the agent loop to answer with a tool error.
//
// # Concurrency
//
// A Model is safe for concurrent use; each Generate has its own stream.
package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/internal/retry"
	"github.com/julyfs/julyfs/runner/model/internal/streamguard"
)

// Provider is the provider's name in model specs and errors.
const Provider = "openai"

// DefaultBaseURL is OpenAI's own server.
const DefaultBaseURL = "https://api.openai.com/v1"

// Model is an OpenAI-compatible chat model.
type Model struct {
	model    string
	client   openai.Client
	policy   retry.Policy
	idle     time.Duration
	maxReply int64
}

var _ model.Model = (*Model)(nil)

// New returns the model name ("gpt-4.1", or "openai:gpt-4.1") served by
// the configured server. It fails, before any request, when the key is
// missing for OpenAI's own server or the base URL is not an http(s) URL.
func New(name string, opts model.Options) (model.Model, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), Provider+":")
	if name == "" {
		return nil, fmt.Errorf("openai: no model name")
	}
	key, base, err := retry.Endpoint(Provider, opts, "OPENAI_API_KEY", "OPENAI_BASE_URL", DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	ropts := []option.RequestOption{
		option.WithHTTPClient(&http.Client{Transport: &streamguard.Transport{}}),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	// Always set: the SDK's defaults read OPENAI_API_KEY from the process
	// environment, and an empty key must stay empty (no Authorization).
	ropts = append(ropts, option.WithAPIKey(key))
	return &Model{
		model:    name,
		client:   openai.NewClient(ropts...),
		policy:   retry.New(opts.MaxRetries),
		idle:     opts.IdleTimeout,
		maxReply: opts.MaxReplyBytes,
	}, nil
}

// Name returns "openai:" and the model name.
func (m *Model) Name() string { return Provider + ":" + m.model }

// Generate streams one chat completion; see the package doc.
func (m *Model) Generate(ctx context.Context, req *model.Request, onDelta func(model.Delta)) (*model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	ctx = streamguard.WithLimits(ctx, streamguard.Limits{
		Idle: m.idle, Reply: streamguard.ReplyLimit(m.maxReply, req.MaxTokens), Stream: true})
	return retry.Stream(ctx, m.policy, Provider, func(ctx context.Context) (*model.Response, bool, error) {
		return m.once(ctx, params, onDelta)
	}, verdict, providerError)
}

// once is one attempt; streamed reports whether onDelta saw any text.
func (m *Model) once(ctx context.Context, params openai.ChatCompletionNewParams, onDelta func(model.Delta)) (resp *model.Response, streamed bool, err error) {
	var res *http.Response
	stream := m.client.Chat.Completions.NewStreaming(ctx, params, option.WithResponseInto(&res))
	defer stream.Close()
	var (
		text strings.Builder
		// calls in the order they started; open maps a chunk's index to
		// the call it continues.
		calls  []*model.ToolCall
		open   = map[int64]*model.ToolCall{}
		stop   string
		usage  model.Usage
		budget = streamguard.NewBudget(streamguard.LimitsFrom(ctx).Reply)
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			usage = convertUsage(chunk.Usage)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			d := ch.Delta
			for _, s := range []string{d.Content, d.Refusal} {
				if s == "" {
					continue
				}
				if err := budget.Take(len(s)); err != nil {
					return nil, streamed, err
				}
				text.WriteString(s)
				if onDelta != nil {
					streamed = true
					onDelta(model.Delta{Text: s})
				}
			}
			for _, tc := range d.ToolCalls {
				if err := budget.Take(len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments)); err != nil {
					return nil, streamed, err
				}
				// A new id at an index already in use starts another
				// call: servers that leave out the index (older ollama)
				// send every call as index 0.
				c := open[tc.Index]
				if c == nil || tc.ID != "" && c.ID != "" && tc.ID != c.ID {
					c = &model.ToolCall{}
					open[tc.Index] = c
					calls = append(calls, c)
				}
				if tc.ID != "" {
					c.ID = tc.ID
				}
				if n := tc.Function.Name; n != "" && n != c.Name {
					c.Name += n
				}
				c.Args = append(c.Args, tc.Function.Arguments...)
			}
			if ch.FinishReason != "" {
				stop = ch.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		var ae *openai.Error
		if !errors.As(err, &ae) && res != nil && res.StatusCode >= 400 {
			// The SDK could not read the error body (a compatible server's
			// own shape, {"error":"..."}): keep the status and the body.
			body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
			return nil, streamed, &statusError{status: res.StatusCode, header: res.Header, body: body, err: err}
		}
		return nil, streamed, err
	}
	if stop == "" {
		return nil, streamed, errTruncated
	}
	msg := model.Message{Role: model.RoleAssistant}
	if text.Len() > 0 {
		msg.Content = []model.Part{model.TextPart(text.String())}
	}
	for n, cp := range calls {
		c := *cp
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", n)
		}
		if len(c.Args) == 0 {
			c.Args = json.RawMessage("{}")
		}
		msg.ToolCalls = append(msg.ToolCalls, c)
	}
	return &model.Response{Message: msg, Usage: usage, StopReason: stop}, streamed, nil
}

// statusError is an error response the SDK could not decode.
type statusError struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %v", e.status, e.err) }
func (e *statusError) Unwrap() error { return e.err }

// errTruncated is a stream that ended without a finish_reason.
var errTruncated = errors.New("the stream ended before the model finished (no finish_reason)")

func convertUsage(u openai.CompletionUsage) model.Usage {
	cr := u.PromptTokensDetails.CachedTokens
	cw := u.PromptTokensDetails.CacheWriteTokens
	return model.Usage{
		InputTokens:      max(u.PromptTokens-cr-cw, 0),
		OutputTokens:     u.CompletionTokens,
		CacheReadTokens:  cr,
		CacheWriteTokens: cw,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
	}
}

// verdict says whether err is worth another attempt.
func verdict(err error) retry.Verdict {
	var ae *openai.Error
	if errors.As(err, &ae) {
		var h http.Header
		if ae.Response != nil {
			h = ae.Response.Header
			switch h.Get("X-Should-Retry") {
			case "true":
				return retry.Verdict{Retry: true, Header: h}
			case "false":
				return retry.Verdict{}
			}
		}
		return retry.Verdict{Retry: retry.Status(ae.StatusCode), Header: h}
	}
	var he *statusError
	if errors.As(err, &he) {
		return retry.Verdict{Retry: retry.Status(he.status), Header: he.header}
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) || errors.Is(err, errTruncated) {
		return retry.Verdict{Retry: true}
	}
	return retry.Verdict{Retry: retry.Transport(err)}
}

// providerError names the provider, the status and the server's message.
func providerError(err error) *model.ProviderError {
	pe := &model.ProviderError{Provider: Provider, Err: err}
	var ae *openai.Error
	var se *ssestream.StreamError
	var he *statusError
	switch {
	case errors.As(err, &he):
		pe.Status = he.status
		pe.Message = foreignMessage(he.body)
		if pe.Message == "" {
			pe.Message = bodyMessage(he.status, string(he.body))
		}
	case errors.As(err, &ae):
		pe.Status = ae.StatusCode
		pe.Message = ae.Message
		if pe.Message == "" && ae.Response != nil && ae.Response.Body != nil {
			// Not OpenAI's error shape: vLLM's {"object":"error",
			// "message":...}, {"error":"..."}, FastAPI's {"detail":...},
			// a gateway's text or HTML page.
			body, _ := io.ReadAll(io.LimitReader(ae.Response.Body, 64<<10))
			pe.Message = foreignMessage(body)
			if pe.Message == "" {
				pe.Message = bodyMessage(pe.Status, string(body))
			}
		}
		if pe.Message == "" {
			pe.Message = bodyMessage(pe.Status, "")
		}
	case errors.As(err, &se):
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(se.Event.Data, &body) == nil && body.Error.Message != "" {
			pe.Message = body.Error.Message
		} else {
			pe.Message = se.Message
		}
	default:
		pe.Message = err.Error()
	}
	return pe
}

// foreignMessage finds the message in the error bodies of compatible
// servers that do not use OpenAI's {"error":{"message":...}}.
func foreignMessage(body []byte) string {
	var v struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if v.Message != "" {
		return v.Message
	}
	for _, raw := range []json.RawMessage{v.Error, v.Detail} {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &o) == nil && o.Message != "" {
			return o.Message
		}
	}
	return ""
}

// bodyMessage is the message for an error response without one in the
// API's error shape: its body when that is a short line of text (a
// gateway's "upstream connect error"), else the status text (an HTML error
// page says no more than that).
func bodyMessage(status int, body string) string {
	body = strings.TrimSpace(body)
	if body == "" || strings.HasPrefix(body, "<") || strings.ContainsAny(body, "\r\n") || len(body) > 200 {
		if t := http.StatusText(status); t != "" {
			return t
		}
		return "no message"
	}
	return body
}

// params converts a request to the SDK's.
func (m *Model) params(req *model.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	if req.MaxTokens > 0 {
		p.MaxCompletionTokens = param.NewOpt(int64(req.MaxTokens))
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		ms, err := convertMessage(msg)
		if err != nil {
			return p, fmt.Errorf("openai: message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, ms...)
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		if len(t.Schema) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Schema, &schema); err != nil {
				return p, fmt.Errorf("openai: tool %s: schema is not a JSON object: %w", t.Name, err)
			}
			fd.Parameters = shared.FunctionParameters(schema)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	return p, nil
}

// convertMessage turns one message into Chat Completions messages: a tool
// message becomes one tool message per result and, if any result has
// images, a user message carrying them.
func convertMessage(msg model.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	switch msg.Role {
	case model.RoleUser:
		parts := userParts(msg.Content)
		if len(parts) == 1 && parts[0].OfText != nil {
			return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(parts[0].OfText.Text)}, nil
		}
		if len(parts) == 0 {
			return []openai.ChatCompletionMessageParamUnion{openai.UserMessage("")}, nil
		}
		return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(parts)}, nil
	case model.RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if t := msg.Text(); t != "" {
			a.Content.OfString = param.NewOpt(t)
		}
		for _, c := range msg.ToolCalls {
			args := string(c.Args)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
				},
			})
		}
		if param.IsOmitted(a.Content.OfString) && len(a.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt("")
		}
		return []openai.ChatCompletionMessageParamUnion{{OfAssistant: &a}}, nil
	case model.RoleTool:
		var out []openai.ChatCompletionMessageParamUnion
		var images []openai.ChatCompletionContentPartUnionParam
		for _, r := range msg.ToolResults {
			var text strings.Builder
			if r.IsError {
				text.WriteString("Error: ")
			}
			var imgs []openai.ChatCompletionContentPartUnionParam
			for _, p := range r.Content {
				switch p.Type {
				case "text":
					text.WriteString(p.Text)
				case "image":
					imgs = append(imgs, imagePart(p))
				}
			}
			if len(imgs) > 0 {
				fmt.Fprintf(&text, "\n[%d image(s) follow in the next user message]", len(imgs))
				images = append(images, openai.TextContentPart(fmt.Sprintf("Image(s) returned by tool call %s (%s):", r.CallID, r.Name)))
				images = append(images, imgs...)
			}
			out = append(out, openai.ToolMessage(text.String(), r.CallID))
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("a tool message without results")
		}
		if len(images) > 0 {
			out = append(out, openai.UserMessage(images))
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown role %q", msg.Role)
}

func userParts(parts []model.Part) []openai.ChatCompletionContentPartUnionParam {
	var out []openai.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		switch p.Type {
		case "text":
			out = append(out, openai.TextContentPart(p.Text))
		case "image":
			out = append(out, imagePart(p))
		}
	}
	return out
}

func imagePart(p model.Part) openai.ChatCompletionContentPartUnionParam {
	mt := p.MIMEType
	if mt == "" {
		mt = http.DetectContentType(p.Data)
	}
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
		URL: "data:" + mt + ";base64," + base64.StdEncoding.EncodeToString(p.Data),
	})
}
