// Package fakeapi is the loopback HTTP server the provider tests stand up
// in place of a vendor's API: it records every request and answers each
// with the next handler in order. Tests only.
package fakeapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
