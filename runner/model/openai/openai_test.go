package openai

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

// fake is a loopback Chat Completions server (see fakeapi).
type fake = fakeapi.Server

func newFake(t *testing.T, handlers ...http.HandlerFunc) *fake { return fakeapi.New(t, handlers...) }

// newModel returns a model on f with the environment given and the waits
// recorded instead of slept.
func newModel(t *testing.T, f *fake, env map[string]string, maxRetries int) (*Model, *[]time.Duration) {
	t.Helper()
	if env == nil {
		env = map[string]string{"OPENAI_API_KEY": "sk-test"}
	}
	if _, ok := env["OPENAI_BASE_URL"]; !ok {
		env["OPENAI_BASE_URL"] = f.Srv.URL + "/v1"
	}
	m, err := New("gpt-4.1", model.Options{Getenv: func(k string) string { return env[k] }, MaxRetries: maxRetries})
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

// sse answers with a 200 event stream of the given data lines, then
// "data: [DONE]".
func sse(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// status answers with an error status and OpenAI's error body.
func status(code int, header map[string]string, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","param":null,"code":null}}`, message)
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

// The chunks below follow OpenAI's documented stream: a role chunk, content
// or tool_call deltas, a finish_reason chunk, and with include_usage a last
// chunk with empty choices and the usage.
const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_1","choices":[`

func chunk(choice string) string { return head + choice + `],"usage":null}` }

func textChunk(s string) string {
	b, _ := json.Marshal(s)
	return chunk(`{"index":0,"delta":{"content":` + string(b) + `},"logprobs":null,"finish_reason":null}`)
}

func finish(reason string) string {
	return chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"` + reason + `"}`)
}

const roleChunk = head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`

func usageChunk(prompt, cached, completion, reasoning int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":%d,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
		prompt, completion, prompt+completion, cached, reasoning)
}

func toolStart(index int, id, name string) string {
	return chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]},"logprobs":null,"finish_reason":null}`, index, id, name))
}

func toolArgs(index int, frag string) string {
	b, _ := json.Marshal(frag)
	return chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]},"logprobs":null,"finish_reason":null}`, index, b))
}

// split cuts s into pieces of at most n characters.
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
	Schema:      json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
}

func simpleRequest() *model.Request {
	return &model.Request{
		System:   "You are a careful agent.",
		Messages: []model.Message{{Role: model.RoleUser, Content: []model.Part{model.TextPart("Summarize /a.txt")}}},
		Tools:    []model.ToolSpec{readTool},
	}
}

func TestStreamsText(t *testing.T) {
	f := newFake(t, sse(roleChunk, textChunk("Hel"), textChunk("lo, "), textChunk("world"), finish("stop"), usageChunk(20, 0, 3, 0)))
	m, waits := newModel(t, f, nil, 0)
	var deltas []string
	resp, err := m.Generate(context.Background(), simpleRequest(), func(d model.Delta) { deltas = append(deltas, d.Text) })
	require.NoError(t, err)
	assert.Equal(t, []string{"Hel", "lo, ", "world"}, deltas)
	assert.Equal(t, model.Message{Role: model.RoleAssistant, Content: []model.Part{model.TextPart("Hello, world")}}, resp.Message)
	assert.Equal(t, "stop", resp.StopReason)
	assert.Equal(t, model.Usage{InputTokens: 20, OutputTokens: 3}, resp.Usage)
	assert.Empty(t, *waits)
	assert.Equal(t, "openai:gpt-4.1", m.Name())

	// What the client sent: the model, streaming with usage, the system
	// prompt first, the user message, the tool with its schema.
	assert.Equal(t, []string{"/v1/chat/completions"}, f.Paths)
	assert.Equal(t, "Bearer sk-test", f.Headers[0].Get("Authorization"))
	sent := f.Body(0)
	assert.Equal(t, "gpt-4.1", sent["model"])
	assert.Equal(t, true, sent["stream"])
	assert.Equal(t, map[string]any{"include_usage": true}, sent["stream_options"])
	assert.Equal(t, []any{
		map[string]any{"role": "system", "content": "You are a careful agent."},
		map[string]any{"role": "user", "content": "Summarize /a.txt"},
	}, sent["messages"])
	assert.Equal(t, []any{map[string]any{
		"type": "function",
		"function": map[string]any{
			"name":        "Read",
			"description": "Read a file",
			"parameters": map[string]any{
				"type":       "object",
				"properties": map[string]any{"path": map[string]any{"type": "string"}},
				"required":   []any{"path"},
			},
		},
	}}, sent["tools"])
	assert.NotContains(t, sent, "max_completion_tokens")
}

func TestToolCallSplitAcrossChunks(t *testing.T) {
	args := `{"path":"/notes/a \"b\".txt","limit":20,"note":"héllo ✓"}`
	for _, n := range []int{1, 2, 3, 7, len(args)} {
		chunks := []string{roleChunk, toolStart(0, "call_abc", "Read")}
		for _, frag := range split(args, n) {
			chunks = append(chunks, toolArgs(0, frag))
		}
		chunks = append(chunks, finish("tool_calls"), usageChunk(50, 0, 12, 0))
		f := newFake(t, sse(chunks...))
		m, _ := newModel(t, f, nil, 0)
		var deltas int
		resp, err := m.Generate(context.Background(), simpleRequest(), func(model.Delta) { deltas++ })
		require.NoError(t, err)
		assert.Zero(t, deltas, "a tool call streams no text")
		assert.Equal(t, "tool_calls", resp.StopReason)
		assert.Empty(t, resp.Message.Content)
		assert.Equal(t, []model.ToolCall{{ID: "call_abc", Name: "Read", Args: json.RawMessage(args)}}, resp.Message.ToolCalls, "pieces of %d characters", n)
	}
}

func TestTwoToolCallsInOneMessage(t *testing.T) {
	// Text first, then two calls whose argument chunks interleave: each
	// chunk names its call by index.
	f := newFake(t, sse(roleChunk, textChunk("Reading both."),
		toolStart(0, "call_1", "Read"), toolArgs(0, `{"pa`),
		toolStart(1, "call_2", "Grep"), toolArgs(1, `{"pattern":`),
		toolArgs(0, `th":"/a"}`), toolArgs(1, `"x"}`),
		finish("tool_calls"), usageChunk(10, 0, 30, 0)))
	m, _ := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "Reading both.", resp.Message.Text())
	assert.Equal(t, []model.ToolCall{
		{ID: "call_1", Name: "Read", Args: json.RawMessage(`{"path":"/a"}`)},
		{ID: "call_2", Name: "Grep", Args: json.RawMessage(`{"pattern":"x"}`)},
	}, resp.Message.ToolCalls)
}

func TestWholeToolCallsWithoutIndex(t *testing.T) {
	// Servers that send each call whole in one chunk and leave out the
	// index (older ollama) give every call index 0; a new id is a new
	// call. A call without an id gets one to be answered by.
	f := newFake(t, sse(roleChunk,
		chunk(`{"index":0,"delta":{"tool_calls":[{"id":"call_a","type":"function","function":{"name":"Read","arguments":"{\"path\":\"/a\"}"}},{"id":"call_b","type":"function","function":{"name":"Read","arguments":"{\"path\":\"/b\"}"}}]},"finish_reason":null}`),
		chunk(`{"index":0,"delta":{"tool_calls":[{"index":1,"type":"function","function":{"name":"LS","arguments":""}}]},"finish_reason":null}`),
		finish("tool_calls")))
	m, _ := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, []model.ToolCall{
		{ID: "call_a", Name: "Read", Args: json.RawMessage(`{"path":"/a"}`)},
		{ID: "call_b", Name: "Read", Args: json.RawMessage(`{"path":"/b"}`)},
		{ID: "call_2", Name: "LS", Args: json.RawMessage(`{}`)},
	}, resp.Message.ToolCalls)
}

func TestUsageWithCacheAndReasoningTokens(t *testing.T) {
	f := newFake(t, sse(roleChunk, textChunk("ok"), finish("stop"), usageChunk(2006, 1920, 300, 192)))
	m, _ := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, model.Usage{InputTokens: 86, OutputTokens: 300, CacheReadTokens: 1920, ReasoningTokens: 192}, resp.Usage)
}

func TestRetryAfterIsHonoured(t *testing.T) {
	f := newFake(t,
		status(429, map[string]string{"Retry-After": "7"}, "Rate limit reached for gpt-4.1"),
		sse(roleChunk, textChunk("done"), finish("stop"), usageChunk(1, 0, 1, 0)))
	m, waits := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "done", resp.Message.Text())
	assert.Equal(t, []time.Duration{7 * time.Second}, *waits, "the wait the server asked for")
	assert.Equal(t, 2, f.Attempts())
	assert.Equal(t, f.Body(0), f.Body(1), "the retry sends the same request")
}

func TestRetryAfterMsIsHonoured(t *testing.T) {
	f := newFake(t,
		status(429, map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, "slow down"),
		sse(roleChunk, textChunk("done"), finish("stop")))
	m, waits := newModel(t, f, nil, 0)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{250 * time.Millisecond}, *waits)
}

func TestServerErrorThenSuccess(t *testing.T) {
	f := newFake(t,
		status(500, nil, "The server had an error while processing your request."),
		sse(roleChunk, textChunk("fine"), finish("stop")))
	m, waits := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "fine", resp.Message.Text())
	assert.Equal(t, 2, f.Attempts())
	require.Len(t, *waits, 1)
	assert.InDelta(t, float64(500*time.Millisecond), float64((*waits)[0]), float64(125*time.Millisecond), "first backoff")
}

func TestRetriesAreBounded(t *testing.T) {
	f := newFake(t, status(503, nil, "overloaded"))
	m, waits := newModel(t, f, nil, 2)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 503, pe.Status)
	assert.Equal(t, "openai: HTTP 503: overloaded", err.Error())
	assert.Equal(t, 3, f.Attempts(), "one attempt and two retries")
	assert.Len(t, *waits, 2)

	f2 := newFake(t, status(503, nil, "overloaded"))
	m2, waits2 := newModel(t, f2, nil, -1)
	_, err = m2.Generate(context.Background(), simpleRequest(), nil)
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 1, f2.Attempts(), "a negative MaxRetries retries nothing")
	assert.Empty(t, *waits2)
}

func TestRetryAfterTooLongGivesUp(t *testing.T) {
	f := newFake(t, status(429, map[string]string{"Retry-After": "86400"}, "daily quota"))
	m, waits := newModel(t, f, nil, 0)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 429, pe.Status)
	assert.Equal(t, "daily quota", pe.Message)
	assert.Equal(t, 1, f.Attempts())
	assert.Empty(t, *waits)
}

func TestBadRequestIsProviderError(t *testing.T) {
	f := newFake(t, status(400, nil, "The model `gpt-9` does not exist or you do not have access to it."))
	m, waits := newModel(t, f, nil, 0)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "openai", pe.Provider)
	assert.Equal(t, 400, pe.Status)
	assert.Equal(t, "The model `gpt-9` does not exist or you do not have access to it.", pe.Message)
	assert.Equal(t, 1, f.Attempts(), "a 400 is not retried")
	assert.Empty(t, *waits)
}

func TestConnectionResetIsRetried(t *testing.T) {
	f := newFake(t, reset, sse(roleChunk, textChunk("back"), finish("stop")))
	m, waits := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "back", resp.Message.Text())
	assert.Equal(t, 2, f.Attempts())
	assert.Len(t, *waits, 1)
}

func TestResetMidStream(t *testing.T) {
	// Dropped after a tool-call chunk: nothing reached onDelta, so the
	// call is retried.
	partial := func(chunks ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			for _, c := range chunks {
				fmt.Fprintf(w, "data: %s\n\n", c)
			}
			w.(http.Flusher).Flush()
			reset(w, r)
		}
	}
	f := newFake(t, partial(roleChunk, toolStart(0, "call_1", "Read")),
		sse(roleChunk, toolStart(0, "call_1", "Read"), toolArgs(0, `{"path":"/a"}`), finish("tool_calls")))
	m, _ := newModel(t, f, nil, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), func(model.Delta) {})
	require.NoError(t, err)
	assert.Equal(t, 2, f.Attempts())
	assert.Equal(t, json.RawMessage(`{"path":"/a"}`), resp.Message.ToolCalls[0].Args)

	// Dropped after text reached onDelta: retrying would repeat it, so the
	// call fails.
	f2 := newFake(t, partial(roleChunk, textChunk("Half a sen")), sse(roleChunk, textChunk("never"), finish("stop")))
	m2, waits := newModel(t, f2, nil, 0)
	var got strings.Builder
	_, err = m2.Generate(context.Background(), simpleRequest(), func(d model.Delta) { got.WriteString(d.Text) })
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 0, pe.Status)
	assert.Equal(t, "Half a sen", got.String())
	assert.Equal(t, 1, f2.Attempts())
	assert.Empty(t, *waits)
}

func TestStreamWithoutFinishIsAnError(t *testing.T) {
	f := newFake(t, sse(roleChunk, textChunk("cut")))
	m, _ := newModel(t, f, nil, -1)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.Error(), "ended before the model finished")
}

func TestErrorEventInStream(t *testing.T) {
	f := newFake(t, sse(roleChunk, `{"error":{"message":"The server had an error processing your request.","type":"server_error"}}`))
	m, _ := newModel(t, f, nil, -1)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "The server had an error processing your request.", pe.Message)
}

func TestMalformedToolArgumentsPassThrough(t *testing.T) {
	bad := `{"path": "/a.txt", "limit": }`
	f := newFake(t, sse(roleChunk, toolStart(0, "call_bad", "Read"), toolArgs(0, bad[:10]), toolArgs(0, bad[10:]), finish("tool_calls")),
		sse(roleChunk, textChunk("sorry"), finish("stop")))
	m, _ := newModel(t, f, nil, 0)
	req := simpleRequest()
	resp, err := m.Generate(context.Background(), req, nil)
	require.NoError(t, err)
	require.Len(t, resp.Message.ToolCalls, 1)
	assert.Equal(t, bad, string(resp.Message.ToolCalls[0].Args))
	assert.False(t, json.Valid(resp.Message.ToolCalls[0].Args))

	// The loop answers it with a tool error; the malformed call goes back
	// to the server exactly as the model wrote it.
	req.Messages = append(req.Messages, resp.Message, model.Message{Role: model.RoleTool, ToolResults: []model.ToolResult{{
		CallID: "call_bad", Name: "Read", IsError: true, Content: []model.Part{model.TextPart("arguments are not valid JSON")},
	}}})
	_, err = m.Generate(context.Background(), req, nil)
	require.NoError(t, err)
	msgs := f.Body(1)["messages"].([]any)
	assert.Equal(t, map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{
		"id": "call_bad", "type": "function", "function": map[string]any{"name": "Read", "arguments": bad},
	}}}, msgs[2])
	assert.Equal(t, map[string]any{"role": "tool", "tool_call_id": "call_bad", "content": "Error: arguments are not valid JSON"}, msgs[3])
}

func TestToolResultsAndImagesRoundTrip(t *testing.T) {
	f := newFake(t, sse(roleChunk, textChunk("seen"), finish("stop")))
	m, _ := newModel(t, f, nil, 0)
	png := []byte("\x89PNG\r\n\x1a\nfake")
	req := &model.Request{
		System:    "sys",
		MaxTokens: 1000,
		Messages: []model.Message{
			{Role: model.RoleUser, Content: []model.Part{model.TextPart("Look:"), {Type: "image", Data: []byte("GIF89a"), MIMEType: "image/gif"}}},
			{Role: model.RoleAssistant, Content: []model.Part{model.TextPart("Reading.")}, ToolCalls: []model.ToolCall{
				{ID: "call_1", Name: "Read", Args: json.RawMessage(`{"path":"/a.txt"}`)},
				{ID: "call_2", Name: "Read", Args: json.RawMessage(`{"path":"/p.png"}`)},
			}},
			{Role: model.RoleTool, ToolResults: []model.ToolResult{
				{CallID: "call_1", Name: "Read", Content: []model.Part{model.TextPart("     1\thi")}},
				{CallID: "call_2", Name: "Read", Content: []model.Part{model.TextPart("an image"), {Type: "image", Data: png}}},
			}},
		},
	}
	_, err := m.Generate(context.Background(), req, nil)
	require.NoError(t, err)
	sent := f.Body(0)
	assert.Equal(t, float64(1000), sent["max_completion_tokens"])
	assert.Equal(t, []any{
		map[string]any{"role": "system", "content": "sys"},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Look:"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/gif;base64,R0lGODlh"}},
		}},
		map[string]any{"role": "assistant", "content": "Reading.", "tool_calls": []any{
			map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "Read", "arguments": `{"path":"/a.txt"}`}},
			map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "Read", "arguments": `{"path":"/p.png"}`}},
		}},
		map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "     1\thi"},
		map[string]any{"role": "tool", "tool_call_id": "call_2", "content": "an image\n[1 image(s) follow in the next user message]"},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Image(s) returned by tool call call_2 (Read):"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgpmYWtl"}},
		}},
	}, sent["messages"])
}

func TestCancelMidStream(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprintf(w, "data: %s\n\ndata: %s\n\n", roleChunk, textChunk("first"))
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

func TestNewNeedsAKey(t *testing.T) {
	env := func(m map[string]string) model.Options {
		return model.Options{Getenv: func(k string) string { return m[k] }}
	}
	_, err := New("gpt-4.1", env(nil))
	require.Error(t, err)
	assert.Equal(t, "openai: no API key: set OPENAI_API_KEY (a server of your own set in OPENAI_BASE_URL may do without one)", err.Error())

	_, err = New("gpt-4.1", env(map[string]string{"OPENAI_BASE_URL": "localhost:8000"}))
	assert.EqualError(t, err, `openai: base URL "localhost:8000": want an http:// or https:// URL with a host`)

	_, err = New("", env(map[string]string{"OPENAI_API_KEY": "k"}))
	assert.EqualError(t, err, "openai: no model name")

	m, err := New("openai:gpt-4.1", model.Options{APIKey: "explicit", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	assert.Equal(t, "openai:gpt-4.1", m.Name())
}

func TestLocalServerWithoutKey(t *testing.T) {
	// Only Options.Getenv is read: a key in the process environment is
	// not sent either.
	t.Setenv("OPENAI_API_KEY", "sk-from-the-process")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	f := newFake(t, sse(roleChunk, textChunk("local"), finish("stop")))
	m, _ := newModel(t, f, map[string]string{}, 0)
	resp, err := m.Generate(context.Background(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "local", resp.Message.Text())
	assert.Empty(t, f.Headers[0].Get("Authorization"), "no key, no Authorization header")
}

func TestUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	m, err := New("gpt-4.1", model.Options{APIKey: "k", BaseURL: "http://" + addr + "/v1", MaxRetries: 1, Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	var waits int
	m.(*Model).policy.Sleep = func(ctx context.Context, d time.Duration) error { waits++; return nil }
	_, err = m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 0, pe.Status)
	assert.Contains(t, pe.Error(), "connection refused")
	assert.Regexp(t, `^openai: Post "http://127\.0\.0\.1:\d+/v1/chat/completions": dial tcp .*: connect: connection refused$`, pe.Error())
	assert.Equal(t, 1, waits, "refused connections are retried")
	assert.False(t, errors.Is(err, context.Canceled))
}

func TestConcurrentGenerate(t *testing.T) {
	f := newFake(t, sse(roleChunk, textChunk("a"), textChunk("b"), finish("stop"), usageChunk(3, 0, 2, 0)))
	m, _ := newModel(t, f, nil, 0)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got strings.Builder
			resp, err := m.Generate(context.Background(), simpleRequest(), func(d model.Delta) { got.WriteString(d.Text) })
			if assert.NoError(t, err, "call %d", i) {
				assert.Equal(t, "ab", resp.Message.Text())
				assert.Equal(t, "ab", got.String())
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 8, f.Attempts())
}

func TestBadRequestsFailBeforeSending(t *testing.T) {
	f := newFake(t, sse(roleChunk, finish("stop")))
	m, _ := newModel(t, f, nil, 0)
	_, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleTool}}}, nil)
	assert.EqualError(t, err, "openai: message 0: a tool message without results")
	_, err = m.Generate(context.Background(), &model.Request{Tools: []model.ToolSpec{{Name: "X", Schema: json.RawMessage(`[1]`)}}}, nil)
	assert.ErrorContains(t, err, "openai: tool X: schema is not a JSON object")
	_, err = m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: "system"}}}, nil)
	assert.EqualError(t, err, `openai: message 0: unknown role "system"`)
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

func TestCompatibleServerErrorShapes(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"object":"error","message":"The model ` + "`llama9`" + ` does not exist.","type":"NotFoundError","param":null,"code":404}`, "The model `llama9` does not exist."}, // vLLM
		{`{"error":"model \"llama9\" not found, try pulling it first"}`, `model "llama9" not found, try pulling it first`},                                                   // ollama's native shape
		{`{"detail":"Not authenticated"}`, "Not authenticated"},                                                                                                              // FastAPI
		{`{"error":{"code":404,"message":"model not found","type":"not_found_error"}}`, "model not found"},                                                                   // llama.cpp
	} {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, tc.body)
		})
		m, _ := newModel(t, f, nil, 0)
		_, err := m.Generate(context.Background(), simpleRequest(), nil)
		var pe *model.ProviderError
		if assert.ErrorAs(t, err, &pe, tc.body) {
			assert.Equal(t, 404, pe.Status, tc.body)
			assert.Equal(t, tc.want, pe.Message, tc.body)
		}
	}
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
