// Package anthropic is the model provider for Anthropic's Messages API,
// built on the official SDK github.com/anthropics/anthropic-sdk-go/v2.
//
// Each Generate is one streamed POST /v1/messages with the tools: text
// deltas go to onDelta as they arrive, tool_use blocks are assembled from
// their input_json_delta pieces, and the usage is message_start's, updated
// by message_delta's.
//
// # Configuration
//
// The key is Options.APIKey, else ANTHROPIC_API_KEY; the server is
// Options.BaseURL, else ANTHROPIC_BASE_URL, else https://api.anthropic.com.
// New refuses a missing key for Anthropic's own server, before any
// request; with a base URL of its own (a proxy or gateway) the key may be
// empty and no credential is sent. No other ANTHROPIC_* variable or
// profile file is read.
//
// # Messages and prompt caching
//
// The system prompt is one system text block. User messages carry text and
// base64 images. An assistant message carries its text and tool_use
// blocks; arguments that are not a JSON object (the model's malformed
// output, answered by the loop with a tool error) go back as an empty
// object, since the API accepts nothing else there. Tool results are
// tool_result blocks (text and images, is_error) in one user message;
// a user message that follows them joins that message, since the API wants
// user and assistant to alternate. Three cache breakpoints (cache_control
// ephemeral) mark the system prompt, the last tool, and the last block of
// the conversation, so each step of a turn reads the earlier ones from the
// cache. Usage: InputTokens is input_tokens (the tokens after the last
// cache breakpoint, neither read from nor written to the cache),
// CacheReadTokens cache_read_input_tokens, CacheWriteTokens
// cache_creation_input_tokens, OutputTokens output_tokens and
// ReasoningTokens output_tokens_details.thinking_tokens.
// MaxTokens 0 asks for DefaultMaxTokens.
//
// # Errors and retries
//
// The SDK's own retries are off: Generate retries 408, 409, 429, 5xx
// (529 "overloaded" among them), an error event in the stream
// (overloaded_error, api_error, rate_limit_error) and dropped connections
// itself, honouring Retry-After-Ms and Retry-After (else backoff from
// 0.5 s doubling to 8 s), at most Options.MaxRetries times (0: 4;
// negative: none), and never once text has been streamed to onDelta. What
// it does not retry, or still fails, is a *model.ProviderError with the
// HTTP status and the server's message. A cancelled ctx ends the call,
// including a wait, with an error that errors.Is ctx.Err().
//
// # Bounds
//
// Requests go through package streamguard (see model's # Bounds): an idle
// timeout (Options.IdleTimeout) retried like a dropped connection, a
// reply limit (Options.MaxReplyBytes; by default from max_tokens, so
// 1 MiB for DefaultMaxTokens) over the text and every tool_use block's
// id, name and input, and a 2xx answer that is not an event stream
// refused without a retry.
//
// # Concurrency
//
// A Model is safe for concurrent use; each Generate has its own stream.
package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/internal/retry"
	"github.com/julyfs/julyfs/runner/model/internal/streamguard"
)

// Provider is the provider's name in model specs and errors.
const Provider = "anthropic"

// DefaultBaseURL is Anthropic's own server.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens bounds a reply when the request does not (the API
// requires a bound).
const DefaultMaxTokens = 8192

// Model is an Anthropic Messages model.
type Model struct {
	model    string
	client   anthropic.Client
	policy   retry.Policy
	idle     time.Duration
	maxReply int64
}

var _ model.Model = (*Model)(nil)

// New returns the model name ("claude-sonnet-4-5", or
// "anthropic:claude-sonnet-4-5") served by the configured server. It fails,
// before any request, when the key is missing for Anthropic's own server
// or the base URL is not an http(s) URL.
func New(name string, opts model.Options) (model.Model, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), Provider+":")
	if name == "" {
		return nil, fmt.Errorf("anthropic: no model name")
	}
	key, base, err := retry.Endpoint(Provider, opts, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	ropts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(&http.Client{Transport: &streamguard.Transport{}}),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	if key != "" {
		ropts = append(ropts, option.WithAPIKey(key))
	}
	return &Model{
		model:    name,
		client:   anthropic.NewClient(ropts...),
		policy:   retry.New(opts.MaxRetries),
		idle:     opts.IdleTimeout,
		maxReply: opts.MaxReplyBytes,
	}, nil
}

// Name returns "anthropic:" and the model name.
func (m *Model) Name() string { return Provider + ":" + m.model }

// Generate streams one message; see the package doc.
func (m *Model) Generate(ctx context.Context, req *model.Request, onDelta func(model.Delta)) (*model.Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	ctx = streamguard.WithLimits(ctx, streamguard.Limits{
		Idle: m.idle, Reply: streamguard.ReplyLimit(m.maxReply, int(params.MaxTokens)), Stream: true})
	return retry.Stream(ctx, m.policy, Provider, func(ctx context.Context) (*model.Response, bool, error) {
		return m.once(ctx, params, onDelta)
	}, verdict, providerError)
}

// block is a content block being assembled from the stream.
type block struct {
	typ  string
	text strings.Builder
	id   string
	name string
	json strings.Builder
}

// once is one attempt; streamed reports whether onDelta saw any text.
func (m *Model) once(ctx context.Context, params anthropic.MessageNewParams, onDelta func(model.Delta)) (resp *model.Response, streamed bool, err error) {
	stream := m.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var (
		blocks  = map[int64]*block{}
		stop    string
		usage   model.Usage
		stopped bool
		budget  = streamguard.NewBudget(streamguard.LimitsFrom(ctx).Reply)
	)
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			usage = model.Usage{
				InputTokens:      u.InputTokens,
				OutputTokens:     u.OutputTokens,
				CacheReadTokens:  u.CacheReadInputTokens,
				CacheWriteTokens: u.CacheCreationInputTokens,
				ReasoningTokens:  u.OutputTokensDetails.ThinkingTokens,
			}
		case "content_block_start":
			cb := ev.ContentBlock
			if err := budget.Take(len(cb.ID) + len(cb.Name) + len(cb.Text)); err != nil {
				return nil, streamed, err
			}
			b := &block{typ: cb.Type, id: cb.ID, name: cb.Name}
			if cb.Text != "" {
				b.text.WriteString(cb.Text)
				if onDelta != nil {
					streamed = true
					onDelta(model.Delta{Text: cb.Text})
				}
			}
			blocks[ev.Index] = b
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				return nil, streamed, fmt.Errorf("content_block_delta for block %d that did not start", ev.Index)
			}
			if err := budget.Take(len(ev.Delta.Text) + len(ev.Delta.PartialJSON)); err != nil {
				return nil, streamed, err
			}
			switch ev.Delta.Type {
			case "text_delta":
				b.text.WriteString(ev.Delta.Text)
				if onDelta != nil && ev.Delta.Text != "" {
					streamed = true
					onDelta(model.Delta{Text: ev.Delta.Text})
				}
			case "input_json_delta":
				b.json.WriteString(ev.Delta.PartialJSON)
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				stop = string(ev.Delta.StopReason)
			}
			// message_delta's usage is cumulative; the input counts are
			// there only when the server revised them.
			u := ev.Usage
			usage.OutputTokens = u.OutputTokens
			if u.JSON.InputTokens.Valid() && u.InputTokens > 0 {
				usage.InputTokens = u.InputTokens
			}
			if u.JSON.CacheReadInputTokens.Valid() && u.CacheReadInputTokens > 0 {
				usage.CacheReadTokens = u.CacheReadInputTokens
			}
			if u.JSON.CacheCreationInputTokens.Valid() && u.CacheCreationInputTokens > 0 {
				usage.CacheWriteTokens = u.CacheCreationInputTokens
			}
			if u.OutputTokensDetails.ThinkingTokens > 0 {
				usage.ReasoningTokens = u.OutputTokensDetails.ThinkingTokens
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := stream.Err(); err != nil {
		return nil, streamed, err
	}
	if !stopped {
		return nil, streamed, errTruncated
	}
	msg := model.Message{Role: model.RoleAssistant}
	idx := make([]int64, 0, len(blocks))
	for i := range blocks {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	var text strings.Builder
	for _, i := range idx {
		b := blocks[i]
		switch b.typ {
		case "text":
			text.WriteString(b.text.String())
		case "tool_use":
			args := b.json.String()
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: b.id, Name: b.name, Args: json.RawMessage(args)})
		}
	}
	if text.Len() > 0 {
		msg.Content = []model.Part{model.TextPart(text.String())}
	}
	return &model.Response{Message: msg, Usage: usage, StopReason: stop}, streamed, nil
}

// errTruncated is a stream that ended without message_stop.
var errTruncated = errors.New("the stream ended before the model finished (no message_stop)")

// streamErrorStatus is the HTTP status each error type of an in-stream
// error event stands for.
var streamErrorStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"overloaded_error":      529,
}

// httpStatus is the HTTP status of an API error: the response's, or for
// an error event inside a 200 stream, the one its type stands for.
func httpStatus(ae *anthropic.Error) int {
	if ae.StatusCode >= 300 {
		return ae.StatusCode
	}
	if s, ok := streamErrorStatus[string(ae.Type())]; ok {
		return s
	}
	return 500
}

// verdict says whether err is worth another attempt.
func verdict(err error) retry.Verdict {
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		var h http.Header
		if ae.Response != nil && ae.StatusCode >= 300 {
			h = ae.Response.Header
			switch h.Get("X-Should-Retry") {
			case "true":
				return retry.Verdict{Retry: true, Header: h}
			case "false":
				return retry.Verdict{}
			}
		}
		return retry.Verdict{Retry: retry.Status(httpStatus(ae)), Header: h}
	}
	if errors.Is(err, errTruncated) {
		return retry.Verdict{Retry: true}
	}
	return retry.Verdict{Retry: retry.Transport(err)}
}

// providerError names the provider, the status and the server's message.
func providerError(err error) *model.ProviderError {
	pe := &model.ProviderError{Provider: Provider, Err: err}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		pe.Status = httpStatus(ae)
		pe.Message = ae.Message
		if pe.Message == "" {
			pe.Message = bodyMessage(pe.Status, ae.RawJSON())
		}
		return pe
	}
	pe.Message = err.Error()
	return pe
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
func (m *Model) params(req *model.Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(m.model),
		MaxTokens: DefaultMaxTokens,
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = int64(req.MaxTokens)
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	for _, t := range req.Tools {
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: anthropic.ToolInputSchemaParam{}}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		if len(t.Schema) > 0 {
			schema, err := inputSchema(t.Schema)
			if err != nil {
				return p, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
			}
			tp.InputSchema = schema
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: &tp})
	}
	if n := len(p.Tools); n > 0 {
		p.Tools[n-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	for i, msg := range req.Messages {
		mp, err := convertMessage(msg)
		if err != nil {
			return p, fmt.Errorf("anthropic: message %d: %w", i, err)
		}
		if mp == nil {
			continue
		}
		// Consecutive user messages (tool results, then the person's
		// next message) join into one.
		if n := len(p.Messages); n > 0 && mp.OfUser != nil && p.Messages[n-1].OfUser != nil {
			p.Messages[n-1].OfUser.Content = append(p.Messages[n-1].OfUser.Content, mp.OfUser.Content...)
			continue
		}
		p.Messages = append(p.Messages, *mp)
	}
	if n := len(p.Messages); n > 0 {
		markLast(p.Messages[n-1])
	}
	return p, nil
}

// markLast puts a cache breakpoint on a message's last block.
func markLast(mp anthropic.MessageParam) {
	var blocks []anthropic.ContentBlockParamUnion
	switch {
	case mp.OfUser != nil:
		blocks = mp.OfUser.Content
	case mp.OfAssistant != nil:
		blocks = mp.OfAssistant.Content
	}
	if len(blocks) == 0 {
		return
	}
	if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
		*cc = anthropic.NewCacheControlEphemeralParam()
	}
}

// inputSchema splits a JSON schema object into the SDK's input schema:
// properties and required, everything else as extra fields.
func inputSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return anthropic.ToolInputSchemaParam{}, fmt.Errorf("schema is not a JSON object: %w", err)
	}
	var out anthropic.ToolInputSchemaParam
	if props, ok := s["properties"]; ok {
		out.Properties = props
	}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				out.Required = append(out.Required, name)
			}
		}
	}
	for k, v := range s {
		switch k {
		case "type", "properties", "required":
			continue
		}
		if out.ExtraFields == nil {
			out.ExtraFields = map[string]any{}
		}
		out.ExtraFields[k] = v
	}
	return out, nil
}

// convertMessage turns one message into the SDK's, or nil for an
// assistant message with nothing in it (the API refuses empty content).
func convertMessage(msg model.Message) (*anthropic.MessageParam, error) {
	switch msg.Role {
	case model.RoleUser:
		blocks := contentBlocks(msg.Content)
		if len(blocks) == 0 {
			blocks = []anthropic.ContentBlockParamUnion{anthropic.NewTextBlock("(empty message)")}
		}
		mp := anthropic.NewUserMessage(blocks...)
		return &mp, nil
	case model.RoleAssistant:
		blocks := contentBlocks(msg.Content)
		for _, c := range msg.ToolCalls {
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{
				ID: c.ID, Name: c.Name, Input: toolInput(c.Args),
			}})
		}
		if len(blocks) == 0 {
			return nil, nil
		}
		mp := anthropic.NewAssistantMessage(blocks...)
		return &mp, nil
	case model.RoleTool:
		var blocks []anthropic.ContentBlockParamUnion
		for _, r := range msg.ToolResults {
			tr := &anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
			if r.IsError {
				tr.IsError = param.NewOpt(true)
			}
			for _, p := range r.Content {
				switch p.Type {
				case "text":
					if p.Text != "" {
						tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: p.Text}})
					}
				case "image":
					tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: imageBlock(p)})
				}
			}
			blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: tr})
		}
		if len(blocks) == 0 {
			return nil, fmt.Errorf("a tool message without results")
		}
		mp := anthropic.NewUserMessage(blocks...)
		return &mp, nil
	}
	return nil, fmt.Errorf("unknown role %q", msg.Role)
}

// toolInput is a call's arguments as the API takes them: a JSON object.
// Anything else (the model's malformed output) goes back as {}.
func toolInput(args json.RawMessage) any {
	var obj map[string]json.RawMessage
	if len(args) > 0 && json.Unmarshal(args, &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	return map[string]any{}
}

// contentBlocks converts text and image parts, leaving out empty text
// (the API refuses empty text blocks).
func contentBlocks(parts []model.Part) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, p := range parts {
		switch p.Type {
		case "text":
			if p.Text != "" {
				out = append(out, anthropic.NewTextBlock(p.Text))
			}
		case "image":
			out = append(out, anthropic.ContentBlockParamUnion{OfImage: imageBlock(p)})
		}
	}
	return out
}

func imageBlock(p model.Part) *anthropic.ImageBlockParam {
	mt := p.MIMEType
	if mt == "" {
		mt = http.DetectContentType(p.Data)
	}
	return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
		Data:      base64.StdEncoding.EncodeToString(p.Data),
		MediaType: anthropic.Base64ImageSourceMediaType(mt),
	}}}
}
