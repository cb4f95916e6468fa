package openai

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/internal/fakeapi"
)

// The bounds of package streamguard, on this provider's wire.

func event(data string) string { return "data: " + data + "\n\n" }

func TestStallAfterHeadersTimesOut(t *testing.T) {
	f := newFake(t, fakeapi.Stall)
	m, waits := newModel(t, f, nil, 2)
	m.idle = 50 * time.Millisecond
	_, err := m.Generate(t.Context(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "openai: the model's server sent nothing for 50ms (the idle timeout: raise it with --model-timeout or agent.yaml's modelTimeout)", err.Error())
	assert.Equal(t, 3, f.Attempts(), "retried like a dropped connection")
	assert.Len(t, *waits, 2)
}

func TestStallAfterTextIsNotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, event(roleChunk)+event(textChunk("Hel")))
		w.(http.Flusher).Flush()
		fakeapi.Wait(r)
	})
	m, _ := newModel(t, f, nil, 2)
	m.idle = 50 * time.Millisecond
	var got strings.Builder
	_, err := m.Generate(t.Context(), simpleRequest(), func(d model.Delta) { got.WriteString(d.Text) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sent nothing for 50ms")
	assert.Equal(t, "Hel", got.String())
	assert.Equal(t, 1, f.Attempts())
}

func TestEndlessTextIsCut(t *testing.T) {
	f := newFake(t, fakeapi.Endless(event(roleChunk), event(textChunk(strings.Repeat("x", 1000))), 64<<20))
	m, _ := newModel(t, f, nil, 2)
	m.maxReply = 100_000
	_, err := m.Generate(t.Context(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "openai: model reply over 100000 bytes (the reply limit: raise it with --model-max-reply or agent.yaml's modelMaxReply)", err.Error())
	assert.Equal(t, 1, f.Attempts(), "not retried")
}

func TestEndlessToolArgumentsAreCut(t *testing.T) {
	f := newFake(t, fakeapi.Endless(event(roleChunk)+event(toolStart(0, "call_1", "Read")), event(toolArgs(0, strings.Repeat("a", 1000))), 64<<20))
	m, _ := newModel(t, f, nil, 2)
	m.maxReply = 100_000
	_, err := m.Generate(t.Context(), simpleRequest(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model reply over 100000 bytes")
	assert.Equal(t, 1, f.Attempts())
}

// TestEndlessEventIsCut sends one event whose data lines never end: the
// SDK's decoder would buffer it all.
func TestEndlessEventIsCut(t *testing.T) {
	f := newFake(t, fakeapi.Endless(event(roleChunk), "data: "+strings.Repeat("x", 1000)+"\n", 64<<20))
	m, _ := newModel(t, f, nil, 2)
	m.maxReply = 100_000
	_, err := m.Generate(t.Context(), simpleRequest(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model reply over 100000 bytes")
	assert.Equal(t, 1, f.Attempts())
}

// TestEndlessStreamMemory streams text forever under the default limit
// (4 MiB for a request without max tokens): the call fails with the limit
// and the heap stays bounded.
func TestEndlessStreamMemory(t *testing.T) {
	f := newFake(t, fakeapi.Endless(event(roleChunk), event(textChunk(strings.Repeat("x", 1000))), 512<<20))
	m, _ := newModel(t, f, nil, 0)
	var err error
	peak := fakeapi.HeapPeak(func(sample func()) {
		n := 0
		_, err = m.Generate(t.Context(), simpleRequest(), func(model.Delta) {
			if n++; n%500 == 0 {
				sample()
			}
		})
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model reply over 4194304 bytes")
	assert.Less(t, peak, uint64(48<<20), "heap grew by %d MiB", peak>>20)
	t.Logf("heap peak: %.1f MiB over the start", float64(peak)/(1<<20))
}

func TestNotAStreamIsNotRetried(t *testing.T) {
	const body = `{"id":"chatcmpl-1","object":"chat.completion","created":1730000000,"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":"Hel`
	f := newFake(t, fakeapi.Body("application/json", body))
	m, waits := newModel(t, f, nil, 4)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, `openai: the server answered a streaming request with HTTP 200, Content-Type "application/json", not an event stream; it began `+strconv.Quote(body[:120])+"...", err.Error())
	assert.NotContains(t, err.Error(), "finish_reason")
	assert.Equal(t, 1, f.Attempts())
	assert.Empty(t, *waits)
}
