package streamguard

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplyLimit(t *testing.T) {
	for _, c := range []struct {
		configured int64
		maxTokens  int
		want       int64
	}{
		{0, 0, AssumedMaxTokens * BytesPerToken},
		{0, -1, AssumedMaxTokens * BytesPerToken},
		{0, 8192, MinReplyLimit},
		{0, 64000, 64000 * BytesPerToken},
		{5000, 64000, 5000},
	} {
		got := ReplyLimit(c.configured, c.maxTokens)
		assert.Equal(t, c.want, got, "ReplyLimit(%d, %d) = %d, want %d", c.configured, c.maxTokens, got, c.want)
	}
}

func TestBudget(t *testing.T) {
	b := NewBudget(10)
	require.NoError(t, b.Take(4))
	require.NoError(t, b.Take(6))
	err := b.Take(1)
	var re *ReplyTooLargeError
	require.ErrorAs(t, err, &re)
	assert.EqualValues(t, 10, re.Limit)
	assert.Equal(t, "model reply over 10 bytes (the reply limit: raise it with --model-max-reply or agent.yaml's modelMaxReply)", err.Error())
}

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		in              string
		whole           bool
		stream, decided bool
	}{
		{"data: {}\n\n", true, true, true},
		{"event: message_start\n", false, true, true},
		{": keep-alive\n", false, true, true},
		{"\xef\xbb\xbfdata:x", false, true, true},
		{"\r\n\r\nid: 1\n", false, true, true},
		{"retry: 3000\n", false, true, true},
		{"data\n", false, true, true},
		{"data", true, true, true},
		{"dat", false, false, false},
		{"dat", true, false, true},
		{"\xef\xbb", false, false, false},
		{"\n\n", false, false, false},
		{"\n\n", true, false, true},
		{"", true, false, true},
		{`{"id":"chatcmpl-1","object":"chat.completion"`, false, false, true},
		{"<html>", false, false, true},
		{"database", false, false, true},
		{"data2: x", false, false, true},
	} {
		s, d := sniff([]byte(c.in), c.whole)
		assert.Equal(t, [2]bool{c.stream, c.decided}, [2]bool{s, d}, "sniff(%q, %v) = %v, %v", c.in, c.whole, s, d)
	}
}

// FuzzSniff checks that sniff decides for good: once a start decides, a
// longer start (or the whole body) decides the same, and a whole body is
// always decided.
func FuzzSniff(f *testing.F) {
	for _, s := range []string{"data: {}\n\n", "event: x\n", ": ping\n", `{"error":1}`, "\xef\xbb\xbfid:1", "\r\n\r\ndata"} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, cut uint8) {
		n := min(int(cut), len(b))
		ws, wd := sniff(b, true)
		require.True(t, wd, "sniff(%q, whole) undecided", b)
		if s, d := sniff(b[:n], false); d {
			ls, ld := sniff(b, false)
			assert.True(t, ld, "sniff(%q) decided, sniff(%q) not", b[:n], b)
			assert.Equal(t, s, ls, "sniff(%q) = %v, sniff(%q) = %v", b[:n], s, b, ls)
			assert.Equal(t, s, ws, "sniff(%q) = %v, sniff(%q, whole) = %v", b[:n], s, b, ws)
		}
	})
}

func TestScanner(t *testing.T) {
	for _, c := range []struct {
		in      string
		largest int64
		events  int
	}{
		{"data: ab\n\n", 8, 1},
		{"data: ab\r\n\r\ndata: abcd\r\n\r\n", 10, 2},
		{"data: a\rdata: b\r\r", 14, 1},
		{"data: a\ndata: b\n", 14, 0},
		{"\n\n\n\n", 0, 0},
		{": ping\n\nevent: x\ndata: y\n\n", 15, 2},
	} {
		var s scanner
		got := s.feed([]byte(c.in))
		assert.Equal(t, [2]int64{c.largest, int64(c.events)}, [2]int64{got, int64(s.events)}, "feed(%q)", c.in)
	}
}

// FuzzScanner checks that the measure of a stream does not depend on how
// its bytes are split across reads.
func FuzzScanner(f *testing.F) {
	f.Add([]byte("data: ab\r\n\r\ndata: abcd\r\n\r\n"), uint16(11))
	f.Add([]byte("data: a\rdata: b\r\r\n"), uint16(8))
	f.Fuzz(func(t *testing.T, b []byte, cut uint16) {
		n := min(int(cut), len(b))
		var whole, split scanner
		w := whole.feed(b)
		split.feed(b[:n])
		s := split.feed(b[n:])
		assert.Equal(t, whole, split, "split at %d of %q", n, b)
		assert.Equal(t, w, s)
		assert.LessOrEqual(t, w, int64(len(b)))
	})
}

// server starts h and returns a client whose transport is the guard's.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *http.Client) {
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s, &http.Client{Transport: &Transport{}}
}

func get(t *testing.T, c *http.Client, url string, l Limits) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(WithLimits(t.Context(), l), 30*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	require.NoError(t, err)
	return c.Do(req)
}

// wait blocks until the client goes away, at most a minute.
func wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
}

func TestIdleBeforeHeaders(t *testing.T) {
	s, c := server(t, func(w http.ResponseWriter, r *http.Request) { wait(r) })
	_, err := get(t, c, s.URL, Limits{Idle: 50 * time.Millisecond, Stream: true})
	var ie *IdleError
	require.ErrorAs(t, err, &ie, "%v", err)
	assert.Equal(t, 50*time.Millisecond, ie.After)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())
	retry, ok := Retryable(err)
	assert.True(t, ok)
	assert.True(t, retry)
	ge := Find(err)
	require.Error(t, ge)
	assert.Equal(t, "the model's server sent nothing for 50ms (the idle timeout: raise it with --model-timeout or agent.yaml's modelTimeout)", ge.Error())
}

func TestIdleWithinStream(t *testing.T) {
	s, c := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"a\":1}\n\n")
		w.(http.Flusher).Flush()
		wait(r)
	})
	resp, err := get(t, c, s.URL, Limits{Idle: 50 * time.Millisecond, Stream: true})
	require.NoError(t, err)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "data: {\"a\":1}\n", line)
	_, err = io.ReadAll(br)
	var ie *IdleError
	require.ErrorAs(t, err, &ie, "%v", err)
}

// TestBusyStreamIsNotIdle sends an event more often than the idle
// timeout, for longer than it: the stream is whole.
func TestBusyStreamIsNotIdle(t *testing.T) {
	const idle = time.Second
	s, c := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 8 {
			io.WriteString(w, "data: x\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(idle / 4)
		}
	})
	resp, err := get(t, c, s.URL, Limits{Idle: idle, Stream: true})
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, strings.Repeat("data: x\n\n", 8), string(b))
}

func TestNotStream(t *testing.T) {
	attempts := 0
	s, c := server(t, func(w http.ResponseWriter, r *http.Request) {
		attempts++
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assi`)
	})
	_, err := get(t, c, s.URL, Limits{Stream: true})
	var ne *NotStreamError
	require.ErrorAs(t, err, &ne, "%v", err)
	assert.Equal(t, "application/json", ne.ContentType)
	msg := Find(err).Error()
	assert.Equal(t, `the server answered a streaming request with HTTP 200, Content-Type "application/json", not an event stream; it began "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assi"`, msg)
	retry, ok := Retryable(err)
	assert.True(t, ok)
	assert.False(t, retry)

	// Not a stream request: passed through.
	resp, err := get(t, c, s.URL, Limits{})
	require.NoError(t, err)
	resp.Body.Close()
}

func TestNotStreamEmptyAndLong(t *testing.T) {
	body := ""
	s, c := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	_, err := get(t, c, s.URL, Limits{Stream: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "and an empty body, not an event stream")

	body = "<html>" + strings.Repeat("x", 1000)
	_, err = get(t, c, s.URL, Limits{Stream: true})
	require.Error(t, err)
	msg := Find(err).Error()
	assert.Contains(t, msg, `Content-Type "text/html; charset=utf-8"`)
	assert.True(t, strings.HasSuffix(msg, `xxx"...`), msg)
	assert.Less(t, len(msg), 300)
}

// TestEventLimit sends one event that never ends: the read fails at
// twice the reply limit and its slack, having read no more.
func TestEventLimit(t *testing.T) {
	s, c := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, "data: "+strings.Repeat("x", 1000)+"\n"); err != nil {
				return
			}
		}
	})
	resp, err := get(t, c, s.URL, Limits{Reply: 10000, Stream: true})
	require.NoError(t, err)
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	var re *ReplyTooLargeError
	require.ErrorAs(t, err, &re, "%v", err)
	assert.EqualValues(t, 10000, re.Limit)
	assert.Less(t, n, int64(2*10000+eventSlack+8192))
}

func TestErrorBodyIsCut(t *testing.T) {
	s, c := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		for r.Context().Err() == nil {
			if _, err := io.WriteString(w, strings.Repeat("e", 4096)); err != nil {
				return
			}
		}
	})
	resp, err := get(t, c, s.URL, Limits{Stream: true})
	require.NoError(t, err)
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	assert.EqualValues(t, MaxErrorBody, n)
}

func TestOtherErrorsAreNotTheGuards(t *testing.T) {
	_, ok := Retryable(errors.New("x"))
	assert.False(t, ok)
	assert.NoError(t, Find(io.ErrUnexpectedEOF))
}
