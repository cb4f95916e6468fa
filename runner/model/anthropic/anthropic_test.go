package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/internal/fakeapi"
)

// fake is a loopback Messages API server (see fakeapi).
type fake = fakeapi.Server

func newFake(t *testing.T, handlers ...http.HandlerFunc) *fake { return fakeapi.New(t, handlers...) }

// newModel returns a model on f with the environment given and the waits
// recorded instead of slept.
func newModel(t *testing.T, f *fake, env map[string]string, maxRetries int) (*Model, *[]time.Duration) {
	t.Helper()
	if env == nil {
		env = map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test"}
	}
	if _, ok := env["ANTHROPIC_BASE_URL"]; !ok {
		env["ANTHROPIC_BASE_URL"] = f.Srv.URL
	}
	m, err := New("claude-sonnet-4-5", model.Options{Getenv: func(k string) string { return env[k] }, MaxRetries: maxRetries})
	require.NoError(t, err)
	om := m.(*Model)
	var mu sync.Mutex
	waits := &[]time.Duration{}
	om.policy.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return om, waits
}

// sse answers with a 200 event stream of the given events, each a
// (name, data) pair as the Messages API sends them.
func sse(events ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for i := 0; i+1 < len(events); i += 2 {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", events[i], events[i+1])
			w.(http.Flusher).Flush()
		}
	}
}

// status answers with an error status and Anthropic's error body.
func status(code int, header map[string]string, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[code]
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`, typ, message)
	}
}

// reset accepts the request and drops the connection with a TCP RST.
func reset(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// The events below follow the Messages API's documented stream:
// message_start with the input usage, per block a content_block_start,
// deltas and content_block_stop, pings anywhere, message_delta with the
// stop reason and output usage, message_stop.

func msgStart(input, cacheWrite, cacheRead int) []string {
	return []string{"message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":%d,"cache_read_input_tokens":%d,"output_tokens":1}}}`, input, cacheWrite, cacheRead)}
}

func textStart(i int) []string {
	return []string{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i)}
}

func textDelta(i int, s string) []string {
	b, _ := json.Marshal(s)
	return []string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, b)}
}

func toolStart(i int, id, name string) []string {
	return []string{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, id, name)}
}

func jsonDelta(i int, frag string) []string {
	b, _ := json.Marshal(frag)
	return []string{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, b)}
}

func blockStop(i int) []string {
	return []string{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)}
}

func msgDelta(reason string, output int) []string {
	return []string{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, reason, output)}
}

var (
	ping    = []string{"ping", `{"type": "ping"}`}
	msgStop = []string{"message_stop", `{"type":"message_stop"}`}
)

func events(groups ...[]string) http.HandlerFunc {
	var all []string
	for _, g := range groups {
		all = append(all, g...)
	}
	return sse(all...)
}

// textReply is a whole stream answering text.
func textReply(text string) http.HandlerFunc {
	return events(msgStart(10, 0, 0), textStart(0), textDelta(0, text), blockStop(0), msgDelta("end_turn", 2), msgStop)
}

func split(s string, n int) []string {
	// Cut on rune boundaries: each piece travels as a JSON string, which
	// holds whole characters.
	var out []string
	r := []rune(s)
	for len(r) > n {
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return append(out, string(r))
}

var readTool = model.ToolSpec{
	Name:        "Read",
	Description: "Read a file",
	Schema:      json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`),
}

var grepTool = model.ToolSpec{
	Name:        "Grep",
	Description: "Search files",
	Schema:      json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`),
}

func simpleRequest() *model.Request {
	return &model.Request{
		System:   "You are a careful agent.",
		Messages: []model.Message{{Role: model.RoleUser, Content: []model.Part{model.TextPart("Summarize /a.txt")}}},
		Tools:    []model.ToolSpec{readTool, grepTool},
	}
}

var ephemeral = map[string]any{"type": "ephemeral"}

func TestStreamsText(t *testing.T) {
	f := newFake(t, events(msgStart(25, 0, 0), textStart(0), ping, textDelta(0, "Hel"), textDelta(0, "lo, "), textDelta(0, "world"), blockStop(0), msgDelta("end_turn", 15), msgStop))
	m, waits := newModel(t, f, nil, 0)
	var deltas []string
	resp, err := m.Generate(context.Background(), simpleRequest(), func(d model.Delta) { deltas = append(deltas, d.Text) })
	require.NoError(t, err)
	assert.Equal(t, []string{"Hel", "lo, ", "world"}, deltas)
	assert.Equal(t, model.Message{Role: model.RoleAssistant, Content: []model.Part{model.TextPart("Hello, world")}}, resp.Message)
	assert.Equal(t, "end_turn", resp.StopReason)
	assert.Equal(t, model.Usage{InputTokens: 25, OutputTokens: 15}, resp.Usage)
	assert.Empty(t, *waits)
	assert.Equal(t, "anthropic:claude-sonnet-4-5", m.Name())

	// What the client sent: the model, a bound, streaming, the system
	// prompt and the last tool and the last block as cache breakpoints,
	// the schemas whole.
	assert.Equal(t, []string{"/v1/messages"}, f.Paths)
	assert.Equal(t, "Bearer sk-ant-test", f.Headers[0].Get("Authorization"), "the SDK sends the key as a bearer token")
	assert.NotEmpty(t, f.Headers[0].Get("Anthropic-Version"))
	sent := f.Body(0)
	assert.Equal(t, "claude-sonnet-4-5", sent["model"])
	assert.Equal(t, float64(DefaultMaxTokens), sent["max_tokens"])
	assert.Equal(t, true, sent["stream"])
	assert.Equal(t, []any{map[string]any{"type": "text", "text": "You are a careful agent.", "cache_control": ephemeral}}, sent["system"])
	assert.Equal(t, []any{
		map[string]any{"name": "Read", "description": "Read a file", "input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}},
			"required": []any{"path"}, "additionalProperties": false,
		}},
		map[string]any{"name": "Grep", "description": "Search files", "input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"pattern": map[string]any{"type": "string"}},
			"required": []any{"pattern"},
		}, "cache_control": ephemeral},
	}, sent["tools"])
	assert.Equal(t, []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "Summarize /a.txt", "cache_control": ephemeral},
	}}}, sent["messages"])
}

func TestToolCallSplitAcrossChunks(t *testing.T) {
	args := `{"path": "/notes/a \"b\".txt", "limit": 20, "note": "héllo ✓"}`
	for _, n := range []int{1, 2, 5, len(args)} {
		groups := [][]string{msgStart(40, 0, 0), textStart(0), textDelta(0, "Let me read it."), blockStop(0), toolStart(1, "toolu_01A09q90qw90lq917835lq9", "Read"), jsonDelta(1, "")}
		for _, frag := range split(args, n) {
			groups = append(groups, jsonDelta(1, frag))
		}
		groups = append(groups, blockStop(1), msgDelta("tool_use", 89), msgStop)
		f := newFake(t, events(groups...))
		m, _ := newModel(t, f, nil, 0)
		resp, err := m.Generate(context.Background(), simpleRequest(), nil)
		require.NoError(t, err)
		assert.Equal(t, "tool_use", resp.StopReason)
		assert.Equal(t, "Let me read it.", resp.Message.Text())
		assert.Equal(t, []model.ToolCall{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "Read", Args: json.RawMessage(args)}}, resp.Message.ToolCalls, "pieces of %d characters", n)
	}
}

func TestTwoToolCallsInOneMessage(t *testing.T) {
	f := newFake(t, events(msgStart(40, 0, 0),
		toolStart(0, "toolu_1", "Read"), jsonDelta(0, `{"pa`), jsonDelta(0, `th":"/a"}`), blockStop(0),
		toolStart(1, "toolu_2", "Grep"), jsonDelta(1, `{"pattern":`), ping, jsonDelta(1, `"x"}`), blockStop(1),
		toolStart(2, "toolu_3", "Ls"), blockStop(2),
		msgDelta("tool_use", 60), msgStop))
	m, _ := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Empty(t, resp.Message.Content)
	assert.Equal(t, []model.ToolCall{
		{ID: "toolu_1", Name: "Read", Args: json.RawMessage(`{"path":"/a"}`)},
		{ID: "toolu_2", Name: "Grep", Args: json.RawMessage(`{"pattern":"x"}`)},
		{ID: "toolu_3", Name: "Ls", Args: json.RawMessage(`{}`)},
	}, resp.Message.ToolCalls)
}

func TestUsageWithCacheTokens(t *testing.T) {
	f := newFake(t, events(msgStart(12, 1500, 2048), textStart(0), textDelta(0, "ok"), blockStop(0),
		[]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":503,"output_tokens_details":{"thinking_tokens":400}}}`}, msgStop))
	m, _ := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, model.Usage{InputTokens: 12, OutputTokens: 503, CacheReadTokens: 2048, CacheWriteTokens: 1500, ReasoningTokens: 400}, resp.Usage)
}

func TestMessageDeltaRevisesInputUsage(t *testing.T) {
	// Newer servers repeat the cumulative input counts in message_delta.
	f := newFake(t, events(msgStart(0, 0, 0), textStart(0), textDelta(0, "ok"), blockStop(0),
		[]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":30,"cache_creation_input_tokens":100,"cache_read_input_tokens":200,"output_tokens":7}}`}, msgStop))
	m, _ := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, model.Usage{InputTokens: 30, OutputTokens: 7, CacheReadTokens: 200, CacheWriteTokens: 100}, resp.Usage)
}

func TestRetryAfterIsHonoured(t *testing.T) {
	f := newFake(t, status(429, map[string]string{"Retry-After": "7"}, "Number of request tokens has exceeded your per-minute rate limit"), textReply("done"))
	m, waits := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "done", resp.Message.Text())
	assert.Equal(t, []time.Duration{7 * time.Second}, *waits)
	assert.Equal(t, 2, f.Attempts())
	assert.Equal(t, f.Body(0), f.Body(1), "the retry sends the same request")
}

func TestServerErrorThenSuccess(t *testing.T) {
	f := newFake(t, status(529, nil, "Overloaded"), status(500, nil, "Internal server error"), textReply("fine"))
	m, waits := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "fine", resp.Message.Text())
	assert.Equal(t, 3, f.Attempts())
	require.Len(t, *waits, 2)
	assert.InDelta(t, float64(500*time.Millisecond), float64((*waits)[0]), float64(125*time.Millisecond))
	assert.InDelta(t, float64(time.Second), float64((*waits)[1]), float64(250*time.Millisecond), "the backoff doubles")
}

func TestOverloadedEventInStreamIsRetried(t *testing.T) {
	overloaded := events(msgStart(10, 0, 0), []string{"error", `{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}`})
	f := newFake(t, overloaded, textReply("after"))
	m, waits := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "after", resp.Message.Text())
	assert.Len(t, *waits, 1)

	f2 := newFake(t, overloaded)
	m2, _ := newModel(t, f2, nil, -1)
	_, err = m2.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 529, pe.Status)
	assert.Equal(t, "anthropic: HTTP 529: Overloaded", err.Error())
}

func TestRetriesAreBounded(t *testing.T) {
	f := newFake(t, status(529, nil, "Overloaded"))
	m, waits := newModel(t, f, nil, 2)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 529, pe.Status)
	assert.Equal(t, 3, f.Attempts())
	assert.Len(t, *waits, 2)
}

func TestBadRequestIsProviderError(t *testing.T) {
	f := newFake(t, status(404, nil, "model: claude-9"))
	m, waits := newModel(t, f, nil, 0)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "anthropic", pe.Provider)
	assert.Equal(t, 404, pe.Status)
	assert.Equal(t, "model: claude-9", pe.Message)
	assert.Equal(t, "anthropic: HTTP 404: model: claude-9", err.Error())
	assert.Equal(t, 1, f.Attempts())
	assert.Empty(t, *waits)

	f400 := newFake(t, status(400, nil, "messages.1.content.0.tool_use.input: Input should be a valid dictionary"))
	m400, _ := newModel(t, f400, nil, 0)
	_, err = m400.Generate(context.Background(), simpleRequest(), nil)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 400, pe.Status)
	assert.Equal(t, 1, f400.Attempts())
}

func TestConnectionResetIsRetried(t *testing.T) {
	f := newFake(t, reset, textReply("back"))
	m, waits := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "back", resp.Message.Text())
	assert.Equal(t, 2, f.Attempts())
	assert.Len(t, *waits, 1)
}

func TestResetAfterTextIsNotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, g := range [][]string{msgStart(1, 0, 0), textStart(0), textDelta(0, "Half a sen")} {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", g[0], g[1])
		}
		w.(http.Flusher).Flush()
		reset(w, r)
	}, textReply("never"))
	m, waits := newModel(t, f, nil, 0)
	var got strings.Builder
	_, err := m.Generate(context.Background(), simpleRequest(), func(d model.Delta) { got.WriteString(d.Text) })
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "Half a sen", got.String())
	assert.Equal(t, 1, f.Attempts())
	assert.Empty(t, *waits)
}

func TestStreamWithoutStopIsAnError(t *testing.T) {
	f := newFake(t, events(msgStart(1, 0, 0), textStart(0), textDelta(0, "cut")))
	m, _ := newModel(t, f, nil, -1)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.Error(), "ended before the model finished")
}

func TestMalformedToolArgumentsPassThrough(t *testing.T) {
	bad := `{"path": "/a.txt", "limit": `
	f := newFake(t, events(msgStart(5, 0, 0), toolStart(0, "toolu_bad", "Read"), jsonDelta(0, bad[:9]), jsonDelta(0, bad[9:]), blockStop(0), msgDelta("tool_use", 9), msgStop),
		textReply("sorry"))
	m, _ := newModel(t, f, nil, 0)
	req := simpleRequest()
	resp, err := m.Generate(context.Background(), req, nil)
	require.NoError(t, err)
	require.Len(t, resp.Message.ToolCalls, 1)
	assert.Equal(t, bad, string(resp.Message.ToolCalls[0].Args))

	// Answered with a tool error; the API takes only an object as input,
	// so the malformed call goes back as {}.
	req.Messages = append(req.Messages, resp.Message, model.Message{Role: model.RoleTool, ToolResults: []model.ToolResult{{
		CallID: "toolu_bad", Name: "Read", IsError: true, Content: []model.Part{model.TextPart("arguments are not valid JSON")},
	}}})
	_, err = m.Generate(context.Background(), req, nil)
	require.NoError(t, err)
	msgs := f.Body(1)["messages"].([]any)
	assert.Equal(t, map[string]any{"role": "assistant", "content": []any{
		map[string]any{"type": "tool_use", "id": "toolu_bad", "name": "Read", "input": map[string]any{}},
	}}, msgs[1])
	assert.Equal(t, map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "tool_result", "tool_use_id": "toolu_bad", "is_error": true, "cache_control": ephemeral,
			"content": []any{map[string]any{"type": "text", "text": "arguments are not valid JSON"}}},
	}}, msgs[2])
}

func TestToolResultsAndImagesRoundTrip(t *testing.T) {
	f := newFake(t, textReply("seen"))
	m, _ := newModel(t, f, nil, 0)
	png := []byte("\x89PNG\r\n\x1a\nfake")
	req := &model.Request{
		System:    "sys",
		MaxTokens: 1000,
		Messages: []model.Message{
			{Role: model.RoleUser, Content: []model.Part{model.TextPart("Look:"), {Type: "image", Data: []byte("GIF89a"), MIMEType: "image/gif"}}},
			{Role: model.RoleAssistant, Content: []model.Part{model.TextPart("Reading.")}, ToolCalls: []model.ToolCall{
				{ID: "toolu_1", Name: "Read", Args: json.RawMessage(`{"path":"/a.txt"}`)},
				{ID: "toolu_2", Name: "Read", Args: json.RawMessage(`{"path":"/p.png"}`)},
			}},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{
				{CallID: "toolu_1", Name: "Read", Content: []model.Part{model.TextPart("     1\thi")}},
				{CallID: "toolu_2", Name: "Read", Content: []model.Part{model.TextPart("an image"), {Type: "image", Data: png}}},
			}},
			{Role: model.RoleUser, Content: []model.Part{model.TextPart("Now shorter.")}},
		},
	}
	_, err := m.Generate(context.Background(), req, nil)
	require.NoError(t, err)
	sent := f.Body(0)
	assert.Equal(t, float64(1000), sent["max_tokens"])
	assert.Equal(t, []any{
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Look:"},
			map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/gif", "data": "R0lGODlh"}},
		}},
		map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "text", "text": "Reading."},
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": map[string]any{"path": "/a.txt"}},
			map[string]any{"type": "tool_use", "id": "toolu_2", "name": "Read", "input": map[string]any{"path": "/p.png"}},
		}},
		// The tool results and the next user message are one user turn,
		// results first; the last block is the conversation's breakpoint.
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{map[string]any{"type": "text", "text": "     1\thi"}}},
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "content": []any{
				map[string]any{"type": "text", "text": "an image"},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgpmYWtl"}},
			}},
			map[string]any{"type": "text", "text": "Now shorter.", "cache_control": ephemeral},
		}},
	}, sent["messages"])
}

func TestCancelMidStream(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, g := range [][]string{msgStart(1, 0, 0), textStart(0), textDelta(0, "first")} {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", g[0], g[1])
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	m, waits := newModel(t, f, nil, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx, stop := context.WithCancel(ctx)
	_, err := m.Generate(ctx, simpleRequest(), func(d model.Delta) {
		assert.Equal(t, "first", d.Text)
		stop()
	})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, f.Attempts())
	assert.Empty(t, *waits)
}

func TestCancelDuringRetryWait(t *testing.T) {
	f := newFake(t, status(429, map[string]string{"Retry-After": "30"}, "slow down"))
	m, _ := newModel(t, f, nil, 0)
	ctx, cancel := context.WithCancel(context.Background())
	m.policy.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}
	_, err := m.Generate(ctx, simpleRequest(), nil)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, f.Attempts())
}

func TestNewNeedsAKey(t *testing.T) {
	env := func(m map[string]string) model.Options {
		return model.Options{Getenv: func(k string) string { return m[k] }}
	}
	_, err := New("claude-sonnet-4-5", env(nil))
	assert.EqualError(t, err, "anthropic: no API key: set ANTHROPIC_API_KEY (a server of your own set in ANTHROPIC_BASE_URL may do without one)")

	_, err = New("claude-sonnet-4-5", env(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "ftp://x"}))
	assert.EqualError(t, err, `anthropic: base URL "ftp://x": want an http:// or https:// URL with a host`)

	m, err := New("anthropic:claude-sonnet-4-5", model.Options{APIKey: "explicit", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	assert.Equal(t, "anthropic:claude-sonnet-4-5", m.Name())
}

func TestProxyWithoutKey(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-the-process")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "from-the-process")
	f := newFake(t, textReply("proxied"))
	m, _ := newModel(t, f, map[string]string{}, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "proxied", resp.Message.Text())
	assert.Empty(t, f.Headers[0].Get("X-Api-Key"))
	assert.Empty(t, f.Headers[0].Get("Authorization"))
}

func TestUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	m, err := New("claude-sonnet-4-5", model.Options{APIKey: "k", BaseURL: "http://" + addr, MaxRetries: 1, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	var waits int
	m.(*Model).policy.Sleep = func(ctx context.Context, d time.Duration) error { waits++; return nil }
	_, err = m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 0, pe.Status)
	assert.Contains(t, pe.Error(), "connection refused")
	assert.Regexp(t, `^anthropic: Post "http://127\.0\.0\.1:\d+/v1/messages": dial tcp .*: connect: connection refused$`, pe.Error())
	assert.Equal(t, 1, waits)
	assert.False(t, errors.Is(err, context.Canceled))
}

func TestBadRequestsFailBeforeSending(t *testing.T) {
	f := newFake(t, textReply("x"))
	m, _ := newModel(t, f, nil, 0)
	_, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleTool}}}, nil)
	assert.EqualError(t, err, "anthropic: message 0: a tool message without results")
	_, err = m.Generate(context.Background(), &model.Request{Tools: []model.ToolSpec{{Name: "X", Schema: json.RawMessage(`"s"`)}}}, nil)
	assert.ErrorContains(t, err, "anthropic: tool X: schema is not a JSON object")
	_, err = m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: "system"}}}, nil)
	assert.EqualError(t, err, `anthropic: message 0: unknown role "system"`)
	assert.Zero(t, f.Attempts())
}

func TestGatewayErrorPage(t *testing.T) {
	html := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>\n<body><h1>502 Bad Gateway</h1></body>\n</html>\n")
	}
	text := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "upstream connect error or disconnect/reset before headers\n")
	}
	f := newFake(t, html, text)
	m, waits := newModel(t, f, nil, 1)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 503, pe.Status)
	assert.Equal(t, "upstream connect error or disconnect/reset before headers", pe.Message)
	assert.Len(t, *waits, 1, "a gateway's 502 is retried")

	f = newFake(t, html)
	m, _ = newModel(t, f, nil, -1)
	_, err = m.Generate(context.Background(), simpleRequest(), nil)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 502, pe.Status)
	assert.Equal(t, "Bad Gateway", pe.Message)
}

func TestServerSaysWhetherToRetry(t *testing.T) {
	f := newFake(t, status(500, map[string]string{"X-Should-Retry": "false"}, "do not retry this"))
	m, waits := newModel(t, f, nil, 0)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 500, pe.Status)
	assert.Equal(t, 1, f.Attempts())
	assert.Empty(t, *waits)

	f = newFake(t, status(400, map[string]string{"X-Should-Retry": "true", "Retry-After": "2"}, "try again"), status(400, nil, "now it is final"))
	m, waits = newModel(t, f, nil, 0)
	_, err = m.Generate(context.Background(), simpleRequest(), nil)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "now it is final", pe.Message)
	assert.Equal(t, 2, f.Attempts())
	assert.Equal(t, []time.Duration{2 * time.Second}, *waits)
}
