package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeros is an endless reader of spaces: a body that never fits.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// postBig POSTs n bytes (a JSON-RPC request padded with spaces) to url,
// with a Content-Length when sized, else chunked, and returns the status,
// the content type and the body of the answer.
func postBig(t *testing.T, url string, n int64, sized bool) (int, string, []byte) {
	t.Helper()
	head := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	body := io.MultiReader(strings.NewReader(head), io.LimitReader(zeros{}, n-int64(len(head))))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	require.NoError(t, err)
	if sized {
		req.ContentLength = n
	} else {
		req.ContentLength = -1 // chunked
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "POST of %d bytes: the connection must not drop", n)
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), data
}

// TestHTTPBodyOverLimit sends 200 MB to the HTTP handler, with a
// Content-Length and chunked: the answer is 413 with a JSON-RPC error
// naming the limit, not a dropped connection, and the server keeps
// serving.
func TestHTTPBodyOverLimit(t *testing.T) {
	srv := openServer(t, fixtureAgent(t))
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	for _, sized := range []bool{true, false} {
		status, ctype, data := postBig(t, hs.URL, 200<<20, sized)
		assert.Equal(t, http.StatusRequestEntityTooLarge, status, "sized=%v: %s", sized, data)
		assert.Equal(t, "application/json", ctype, "sized=%v: %s", sized, data)
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(data, &m), "sized=%v: body %q", sized, data)
		assert.Equal(t, "2.0", m.JSONRPC)
		assert.Equal(t, "null", string(m.ID))
		assert.Equal(t, int64(-32600), m.Error.Code, "sized=%v: %s", sized, data)
		assert.Contains(t, m.Error.Message, "4194304-byte limit", "sized=%v", sized)
		assert.Contains(t, m.Error.Message, "--max-request-bytes", "sized=%v: the message says how to raise the bound", sized)
	}
	// Still serving: a request of normal size is answered.
	status, _, data := postBig(t, hs.URL, 4096, true)
	assert.NotEqual(t, http.StatusRequestEntityTooLarge, status, "%s", data)
	assert.Less(t, status, 500, "%s", data)
}
