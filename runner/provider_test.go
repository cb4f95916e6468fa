package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
)

// fakeProvider is a loopback server speaking one provider's streaming wire
// format: the first request gets a Read tool call for /a.txt, the second
// (which must carry the tool's result) gets the final text.
type fakeProvider struct {
	mu       sync.Mutex
	bodies   []string
	sseFirst []string // data lines (or "event:\ndata:" pairs) of the first reply
	sseFinal []string
}

func (f *fakeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	n := len(f.bodies)
	f.mu.Unlock()
	events := f.sseFirst
	if n > 1 {
		events = f.sseFinal
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		fmt.Fprintf(w, "%s\n\n", e)
		w.(http.Flusher).Flush()
	}
}

func openAIChunk(delta string, finish string) string {
	fin := "null"
	if finish != "" {
		fin = `"` + finish + `"`
	}
	return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + fin + `}]}`
}

const openAIUsage = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5,"total_tokens":17}}`

func anthropicEvent(typ, data string) string { return "event: " + typ + "\ndata: " + data }

// TestLoopWithRealProviders runs whole turns through the OpenAI and
// Anthropic adapters (their official SDKs) against wire-level fakes: the
// tool call the model streams in pieces reaches the tree, its result goes
// back in the next request, and the final text ends the turn.
func TestLoopWithRealProviders(t *testing.T) {
	cases := map[string]*fakeProvider{
		"openai": {
			sseFirst: []string{
				openAIChunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Read","arguments":""}}]}`, ""),
				openAIChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, ""),
				openAIChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"/a.txt\"}"}}]}`, ""),
				openAIChunk(`{}`, "tool_calls"), openAIUsage, "data: [DONE]",
			},
			sseFinal: []string{
				openAIChunk(`{"role":"assistant","content":"it says "}`, ""),
				openAIChunk(`{"content":"hi"}`, ""),
				openAIChunk(`{}`, "stop"), openAIUsage, "data: [DONE]",
			},
		},
		"anthropic": {
			sseFirst: []string{
				anthropicEvent("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`),
				anthropicEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}`),
				anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}`),
				anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"/a.txt\"}"}}`),
				anthropicEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
				anthropicEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}`),
				anthropicEvent("message_stop", `{"type":"message_stop"}`),
			},
			sseFinal: []string{
				anthropicEvent("message_start", `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":1}}}`),
				anthropicEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
				anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"it says "}}`),
				anthropicEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`),
				anthropicEvent("content_block_stop", `{"type":"content_block_stop","index":0}`),
				anthropicEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`),
				anthropicEvent("message_stop", `{"type":"message_stop"}`),
			},
		},
	}
	for provider, fake := range cases {
		t.Run(provider, func(t *testing.T) {
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			env := map[string]string{
				"OPENAI_BASE_URL":    srv.URL + "/v1",
				"ANTHROPIC_BASE_URL": srv.URL,
			}
			m, err := ResolveModel(provider+":m", model.Options{Getenv: func(k string) string { return env[k] }})
			require.NoError(t, err)
			f := newLoopFixture(t, "-- agent.yaml --\nname: x\nroot:\n  /:\n    temp:\n      /a.txt: \"hi\\n\"\n", SessionOptions{})
			l, err := NewLoop(f.sess, f.log, LoopOptions{Model: m})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 30*1e9)
			defer cancel()
			res, err := l.Run(ctx, "what does /a.txt say?")
			require.NoError(t, err)
			assert.Equal(t, "it says hi", res.Text)
			assert.Equal(t, 2, res.Steps)
			assert.Positive(t, res.Usage.InputTokens)

			require.Len(t, fake.bodies, 2)
			var first map[string]any
			require.NoError(t, json.Unmarshal([]byte(fake.bodies[0]), &first))
			assert.Contains(t, fake.bodies[0], `what does /a.txt say?`)
			assert.Contains(t, fake.bodies[0], `"Read"`, "the tools are offered")
			// The second request carries the tool's result: Read's numbered line.
			assert.True(t, strings.Contains(fake.bodies[1], `1\thi`), "tool result sent back: %s", fake.bodies[1])
			got := results(t, f.log.Events())
			require.Len(t, got, 1)
			assert.Equal(t, "Read", got[0].ToolName)
			assert.False(t, got[0].IsError)
		})
	}
}
