package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openAIChunk is one Chat Completions stream event carrying text.
func openAIChunk(text string) string {
	return fmt.Sprintf(`data: {"id":"c1","object":"chat.completion.chunk","created":1730000000,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", text)
}

// endlessOpenAI is a Chat Completions server whose every answer streams
// text until the client goes away (or 1 GiB has gone).
func endlessOpenAI(t *testing.T) *httptest.Server {
	chunk := openAIChunk(strings.Repeat("x", 2000))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		var sent int64
		for sent < 1<<30 && r.Context().Err() == nil {
			n, err := io.WriteString(w, chunk)
			if err != nil {
				return
			}
			sent += int64(n)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runWithServer runs july run on a host-default agent whose model is
// openai:m at base, with extra agent.yaml lines; it returns stderr, the
// exit code and the process's peak RSS in bytes.
func runWithServer(t *testing.T, base, yaml string, args ...string) (string, int, int64) {
	t.Helper()
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	require.NoError(t, os.MkdirAll(agent, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(agent, "agent.yaml"), []byte("name: bounded\nmodel: openai:m\ntools: []\n"+yaml), 0o644))
	cmd := julyCommand(t, append([]string{"run", agent, "-m", "hello", "--state-root", filepath.Join(dir, "state")}, args...)...)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+base+"/v1", "OPENAI_API_KEY=sk-test")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	return errOut.String(), code, rss
}

// TestRunEndlessStreamIsBounded answers july run with a stream of text
// that never ends: the turn fails naming the reply limit, and the
// process's peak RSS stays bounded (measured, not trusted).
func TestRunEndlessStreamIsBounded(t *testing.T) {
	srv := endlessOpenAI(t)
	errOut, code, rss := runWithServer(t, srv.URL, "")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "july: turn failed: openai: model reply over 4194304 bytes (the reply limit: raise it with --model-max-reply or agent.yaml's modelMaxReply)")
	t.Logf("peak RSS: %.1f MiB", float64(rss)/(1<<20))
	if !raceEnabled {
		assert.Less(t, rss, int64(100<<20), "peak RSS %d MiB", rss>>20)
	}

	errOut, code, _ = runWithServer(t, srv.URL, "modelMaxReply: 100000\n")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "turn failed: openai: model reply over 100000 bytes")
	errOut, code, _ = runWithServer(t, srv.URL, "modelMaxReply: 100000\n", "--model-max-reply", "50000")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "turn failed: openai: model reply over 50000 bytes", "the flag wins")
}

// TestRunStalledServerTimesOut answers july run with the stream's
// headers and then nothing: each attempt ends at agent.yaml's
// modelTimeout, and after the retries the turn fails naming the timeout
// and how to raise it.
func TestRunStalledServerTimesOut(t *testing.T) {
	var attempts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts++
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	t.Cleanup(srv.Close)
	errOut, code, _ := runWithServer(t, srv.URL, "modelTimeout: 1s\n")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, errOut, "july: turn failed: openai: the model's server sent nothing for 1s (the idle timeout: raise it with --model-timeout or agent.yaml's modelTimeout)")
	assert.Equal(t, 5, attempts, "one attempt and four retries")
}

func TestRunModelBoundsAreChecked(t *testing.T) {
	srv := endlessOpenAI(t)
	errOut, code, _ := runWithServer(t, srv.URL, "modelTimeout: 500ms\n")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "modelTimeout: 500ms is under a second: give a duration such as 120s")
	errOut, code, _ = runWithServer(t, srv.URL, "modelTimeout: 120\n")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "cannot unmarshal !!int `120` into time.Duration")
	errOut, code, _ = runWithServer(t, srv.URL, "", "--model-timeout", "10ms")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "--model-timeout must be at least 1s")
}

// TestRunMessageBound refuses a message over --max-message before any
// session exists, on -m and on stdin, and refuses --session "".
func TestRunMessageBound(t *testing.T) {
	agent, state := runAgent(t, "turns:\n  - replies:\n      - text: ok\n")
	_, errOut, code := julyRun(t, "run", agent, "--state-root", state, "--max-message", "10", "-m", "eleven byte")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "message of 11 bytes is over the limit of 10 bytes (raise it with july run --max-message BYTES)")
	_, err := os.Stat(filepath.Join(state, "sessions"))
	assert.True(t, os.IsNotExist(err), "nothing written: %v", err)

	cmd := julyCommand(t, "run", agent, "--state-root", state, "--max-message", "10")
	cmd.Stdin = strings.NewReader(strings.Repeat("x", 1<<20))
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	require.Error(t, cmd.Run())
	assert.Contains(t, errBuf.String(), "message on stdin is over the limit of 10 bytes")
	_, err = os.Stat(filepath.Join(state, "sessions"))
	assert.True(t, os.IsNotExist(err), "nothing written: %v", err)

	out, errOut, code := julyRun(t, "run", agent, "--state-root", state, "--max-message", "10", "-m", "0123456789")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "ok\n", out)

	_, errOut, code = julyRun(t, "run", agent, "--state-root", state, "--session", "", "-m", "hi")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "--session is empty")
}

// TestRunMetaUnwritable makes session.json impossible to replace (its
// temporary file's name is taken by a directory, as a full disk would
// fail it): the turn's reply is printed, the metadata is a warning, and
// the exit status is 0.
func TestRunMetaUnwritable(t *testing.T) {
	agent, state := runAgent(t, "turns:\n  - replies:\n      - text: first\n  - replies:\n      - text: second\n")
	_, errOut, code := julyRun(t, "run", agent, "--state-root", state, "-m", "one")
	require.Equal(t, 0, code, errOut)
	dirs, err := filepath.Glob(filepath.Join(state, "sessions", "ses_*"))
	require.NoError(t, err)
	require.Len(t, dirs, 1)
	id := filepath.Base(dirs[0])
	require.NoError(t, os.Mkdir(filepath.Join(dirs[0], "session.json.tmp"), 0o755))
	out, errOut, code := julyRun(t, "run", agent, "--state-root", state, "--session", id, "-m", "two")
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "second\n", out)
	assert.Contains(t, errOut, "july: warning: session "+id+": writing session.json: ")
	assert.Contains(t, errOut, "the turn is kept in events.ndjson")
}
