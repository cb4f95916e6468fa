package openai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/openai"
)

// A local OpenAI-compatible server (vLLM, llama.cpp, ollama) needs only its
// base URL; here a stand-in streams two chunks.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"id":"1","object":"chat.completion.chunk","created":0,"model":"local","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":0,"model":"local","choices":[{"index":0,"delta":{"content":", world"},"finish_reason":"stop"}]}`,
			`{"id":"1","object":"chat.completion.chunk","created":0,"model":"local","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
	}))
	defer srv.Close()

	m, err := openai.New("local", model.Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := m.Generate(context.Background(), &model.Request{
		Messages: []model.Message{{Role: model.RoleUser, Content: []model.Part{model.TextPart("Say hello")}}},
	}, func(d model.Delta) { fmt.Printf("delta %q\n", d.Text) })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Name(), resp.StopReason, resp.Message.Text())
	fmt.Printf("%+v\n", resp.Usage)
	// Output:
	// delta "Hello"
	// delta ", world"
	// openai:local stop Hello, world
	// {InputTokens:9 OutputTokens:4 CacheReadTokens:0 CacheWriteTokens:0 ReasoningTokens:0}
}
