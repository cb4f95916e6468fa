package anthropic

import (
	"context"
	"fmt"
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

func event(ev []string) string { return fmt.Sprintf("event: %s\ndata: %s\n\n", ev[0], ev[1]) }

func TestStallAfterHeadersTimesOut(t *testing.T) {
	f := newFake(t, fakeapi.Stall)
	m, waits := newModel(t, f, nil, 2)
	m.idle = 50 * time.Millisecond
	_, err := m.Generate(t.Context(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "anthropic: the model's server sent nothing for 50ms (the idle timeout: raise it with --model-timeout or agent.yaml's modelTimeout)", err.Error())
	assert.Equal(t, 3, f.Attempts(), "retried like a dropped connection")
	assert.Len(t, *waits, 2)
}

func TestStallAfterPingIsRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, event(msgStart(10, 0, 0))+event(ping))
		w.(http.Flusher).Flush()
		fakeapi.Wait(r)
	}, textReply("Hello"))
	m, _ := newModel(t, f, nil, 2)
	m.idle = 50 * time.Millisecond
	resp, err := m.Generate(t.Context(), simpleRequest(), nil)
	require.NoError(t, err)
	assert.Equal(t, "Hello", resp.Message.Text())
	assert.Equal(t, 2, f.Attempts())
}

func TestStallAfterTextIsNotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, event(msgStart(10, 0, 0))+event(textStart(0))+event(textDelta(0, "Hel")))
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
	f := newFake(t, fakeapi.Endless(event(msgStart(10, 0, 0))+event(textStart(0)), event(textDelta(0, strings.Repeat("x", 1000))), 64<<20))
	m, _ := newModel(t, f, nil, 2)
	m.maxReply = 100_000
	_, err := m.Generate(t.Context(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "anthropic: model reply over 100000 bytes (the reply limit: raise it with --model-max-reply or agent.yaml's modelMaxReply)", err.Error())
	assert.Equal(t, 1, f.Attempts(), "not retried")
}

func TestEndlessToolArgumentsAreCut(t *testing.T) {
	f := newFake(t, fakeapi.Endless(event(msgStart(10, 0, 0))+event(toolStart(0, "toolu_1", "Read")), event(jsonDelta(0, strings.Repeat("a", 1000))), 64<<20))
	m, _ := newModel(t, f, nil, 2)
	m.maxReply = 100_000
	_, err := m.Generate(t.Context(), simpleRequest(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model reply over 100000 bytes")
	assert.Equal(t, 1, f.Attempts())
}

func TestEndlessEventIsCut(t *testing.T) {
	f := newFake(t, fakeapi.Endless(event(msgStart(10, 0, 0)), "data: "+strings.Repeat("x", 1000)+"\n", 64<<20))
	m, _ := newModel(t, f, nil, 2)
	m.maxReply = 100_000
	_, err := m.Generate(t.Context(), simpleRequest(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model reply over 100000 bytes")
	assert.Equal(t, 1, f.Attempts())
}

// TestEndlessStreamMemory streams text forever under the default limit
// (1 MiB for DefaultMaxTokens): the call fails with the limit and the
// heap stays bounded.
func TestEndlessStreamMemory(t *testing.T) {
	f := newFake(t, fakeapi.Endless(event(msgStart(10, 0, 0))+event(textStart(0)), event(textDelta(0, strings.Repeat("x", 1000))), 512<<20))
	m, _ := newModel(t, f, nil, 0)
	var err error
	peak := fakeapi.HeapPeak(func(sample func()) {
		n := 0
		_, err = m.Generate(t.Context(), simpleRequest(), func(model.Delta) {
			if n++; n%200 == 0 {
				sample()
			}
		})
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model reply over 1048576 bytes")
	assert.Less(t, peak, uint64(32<<20), "heap grew by %d MiB", peak>>20)
	t.Logf("heap peak: %.1f MiB over the start", float64(peak)/(1<<20))
}

func TestNotAStreamIsNotRetried(t *testing.T) {
	const body = `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hel`
	f := newFake(t, fakeapi.Body("application/json", body))
	m, waits := newModel(t, f, nil, 4)
	_, err := m.Generate(context.Background(), simpleRequest(), nil)
	var pe *model.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, `anthropic: the server answered a streaming request with HTTP 200, Content-Type "application/json", not an event stream; it began `+strconv.Quote(body[:120])+"...", err.Error())
	assert.NotContains(t, err.Error(), "message_stop")
	assert.Equal(t, 1, f.Attempts())
	assert.Empty(t, *waits)
}
