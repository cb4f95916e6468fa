// Package fakeapi is the loopback HTTP server the provider tests stand up
// in place of a vendor's API: it records every request and answers each
// with the next handler in order. Tests only.
package fakeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Server is a loopback API server: each request is recorded and answered
// by the next handler in order (the last one repeats). Hold Mu to read the
// recorded slices while requests may still arrive.
type Server struct {
	T        *testing.T
	Srv      *httptest.Server
	Mu       sync.Mutex
	Bodies   []map[string]any
	Headers  []http.Header
	Paths    []string
	handlers []http.HandlerFunc
}

// New starts a Server answering with handlers; it is closed when t ends.
func New(t *testing.T, handlers ...http.HandlerFunc) *Server {
	f := &Server{T: t, handlers: handlers}
	f.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if !assert.NoError(t, err) {
			return
		}
		var body map[string]any
		assert.NoError(t, json.Unmarshal(raw, &body), "request body %s", raw)
		f.Mu.Lock()
		n := len(f.Bodies)
		f.Bodies = append(f.Bodies, body)
		f.Headers = append(f.Headers, r.Header.Clone())
		f.Paths = append(f.Paths, r.URL.Path)
		h := f.handlers[min(n, len(f.handlers)-1)]
		f.Mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(f.Srv.Close)
	return f
}

// Attempts is the number of requests received.
func (f *Server) Attempts() int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return len(f.Bodies)
}

// Body is the i'th request's decoded JSON body.
func (f *Server) Body(i int) map[string]any {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	require.Greater(f.T, len(f.Bodies), i)
	return f.Bodies[i]
}

// Stall answers 200 with an event stream's headers and then sends
// nothing, until the client goes away (or a minute passes).
func Stall(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	Wait(r)
}

// Wait blocks until r's client goes away, or a minute passes.
func Wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
}

// Endless answers 200 with an event stream: first, then chunk again and
// again until the client goes away or max bytes are written (a bound for
// a client that never stops reading: the stream then ends unfinished).
func Endless(first, chunk string, max int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		n, err := io.WriteString(w, first)
		written := int64(n)
		for err == nil && written < max && r.Context().Err() == nil {
			n, err = io.WriteString(w, chunk)
			written += int64(n)
		}
	}
}

// Body answers 200 with body as contentType.
func Body(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, body)
	}
}

// HeapPeak runs f, which calls sample now and then (every so many
// deltas, say), and returns the largest heap in use at a sample or after
// f, less the heap in use before f.
func HeapPeak(f func(sample func())) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	f(sample)
	sample()
	return peak - base
}
