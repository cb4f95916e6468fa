package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/anthropic"
)

// A model asking for a tool: the call's input arrives in pieces and comes
// back whole. Here a stand-in server plays Anthropic.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range [][2]string{
			{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":1200,"output_tokens":1}}}`},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": "}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"/a.txt\"}"}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`},
			{"message_stop", `{"type":"message_stop"}`},
		} {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e[0], e[1])
		}
	}))
	defer srv.Close()

	m, err := anthropic.New("claude-sonnet-4-5", model.Options{APIKey: "sk-ant-example", BaseURL: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := m.Generate(context.Background(), &model.Request{
		System:   "You read files.",
		Messages: []model.Message{{Role: model.RoleUser, Content: []model.Part{model.TextPart("What is in /a.txt?")}}},
		Tools:    []model.ToolSpec{{Name: "Read", Description: "Read a file", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range resp.Message.ToolCalls {
		fmt.Println(c.ID, c.Name, string(c.Args))
	}
	fmt.Println(resp.StopReason, resp.Usage.CacheReadTokens, resp.Usage.OutputTokens)
	// Output:
	// toolu_1 Read {"path": "/a.txt"}
	// tool_use 1200 20
}
