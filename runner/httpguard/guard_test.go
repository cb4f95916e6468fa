package httpguard

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListen: loopback listens without a token; every interface needs
// one, and the refusal names the flag and the variable.
func TestListen(t *testing.T) {
	ln, err := Listen("127.0.0.1:0", "", ListenOptions{Flag: "--addr", Env: "TOK", What: "the agents"})
	require.NoError(t, err)
	ln.Close()
	_, err = Listen("0.0.0.0:0", "", ListenOptions{Flag: "--addr", Env: "TOK", What: "the agents"})
	var ne *NeedTokenError
	require.True(t, errors.As(err, &ne), "%v", err)
	assert.Contains(t, err.Error(), "--addr 0.0.0.0:0 listens on ")
	assert.Contains(t, err.Error(), "anyone who can reach it could use the agents. Set a bearer token with --token-file FILE or $TOK, or listen on 127.0.0.1")
	ln, err = Listen("0.0.0.0:0", "t", ListenOptions{Flag: "--addr"})
	require.NoError(t, err)
	ln.Close()
}

// TestReadToken: the file's first line, trimmed; an empty file is an
// error; without a file, the environment.
func TestReadToken(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tok")
	require.NoError(t, os.WriteFile(f, []byte("  abc \nrest\n"), 0o600))
	tok, err := ReadToken(f, "X")
	require.NoError(t, err)
	assert.Equal(t, "abc", tok)
	require.NoError(t, os.WriteFile(f, []byte("\n"), 0o600))
	_, err = ReadToken(f, "X")
	assert.ErrorContains(t, err, "empty token")
	_, err = ReadToken(filepath.Join(t.TempDir(), "none"), "X")
	assert.Error(t, err)
	t.Setenv("HTTPGUARD_TEST_TOKEN", " e ")
	tok, err = ReadToken("", "HTTPGUARD_TEST_TOKEN")
	require.NoError(t, err)
	assert.Equal(t, "e", tok)
}

// TestHandler: each refusal goes through Deny with its status and code.
func TestHandler(t *testing.T) {
	var got []string
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }), Options{Token: "k",
		Deny: func(w http.ResponseWriter, _ *http.Request, status int, code, msg string) {
			got = append(got, code)
			w.WriteHeader(status)
		}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	do := func(hdr map[string]string, host string) int {
		// POST: cross-origin protection lets safe methods (GET, HEAD)
		// through, as a browser cannot read their answer without CORS.
		req, _ := http.NewRequest("POST", srv.URL, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, 401, do(nil, ""))
	assert.Equal(t, 401, do(map[string]string{"Authorization": "Bearer x"}, ""))
	assert.Equal(t, 403, do(map[string]string{"Authorization": "Bearer k", "Sec-Fetch-Site": "cross-site"}, ""))
	assert.Equal(t, 403, do(map[string]string{"Authorization": "Bearer k"}, "attacker.example:80"))
	assert.Equal(t, 204, do(map[string]string{"Authorization": "Bearer k"}, "localhost:1"))
	assert.Equal(t, 204, do(map[string]string{"Authorization": "Bearer k"}, ""))
	assert.Equal(t, []string{"unauthorized", "unauthorized", "forbidden", "forbidden"}, got)
}
