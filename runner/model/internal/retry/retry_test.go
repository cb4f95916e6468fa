package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestNew(t *testing.T) {
	assert.Equal(t, DefaultMaxRetries, New(0).MaxRetries)
	assert.Equal(t, 0, New(-1).MaxRetries)
	assert.Equal(t, 7, New(7).MaxRetries)
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC)
	p := Policy{Now: func() time.Time { return now }}
	for _, tc := range []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{nil, 0, false},
		{map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{map[string]string{"Retry-After": "0"}, 0, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After-Ms": "junk", "Retry-After": "9"}, 9 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(42 * time.Second).Format(http.TimeFormat)}, 42 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "-3"}, 0, false},
		{map[string]string{"Retry-After": "1e300"}, MaxWait + time.Second, true},
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if tc.header == nil {
			h = nil
		}
		got, ok := p.RetryAfter(h)
		assert.Equal(t, tc.ok, ok, "RetryAfter(%v) ok", tc.header)
		assert.Equal(t, tc.want, got, "RetryAfter(%v)", tc.header)
	}
}

func TestBackoff(t *testing.T) {
	var p Policy
	for n, want := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		for range 50 {
			d := p.Backoff(n)
			assert.True(t, d > want*3/4-1 && d <= want, "Backoff(%d) = %v, want in (%v, %v]", n, d, want*3/4, want)
		}
	}
	assert.LessOrEqual(t, p.Backoff(1000), 8*time.Second)
}

func TestDo(t *testing.T) {
	var waits []time.Duration
	p := Policy{MaxRetries: 3, Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	h := http.Header{"Retry-After": {"3"}}
	calls := 0
	err := p.Do(context.Background(), func(context.Context) (Verdict, error) {
		calls++
		if calls < 3 {
			return Verdict{Retry: true, Header: h}, fmt.Errorf("attempt %d", calls)
		}
		return Verdict{}, nil
	})
	assert.NoError(t, err)
	assert.Equal(t, 3, calls)
	assert.Equal(t, []time.Duration{3 * time.Second, 3 * time.Second}, waits)

	// Not retryable: the first error comes back.
	calls = 0
	err = p.Do(context.Background(), func(context.Context) (Verdict, error) { calls++; return Verdict{}, errors.New("400") })
	assert.EqualError(t, err, "400")
	assert.Equal(t, 1, calls)

	// Exhausted: the last error comes back after MaxRetries retries.
	calls = 0
	err = p.Do(context.Background(), func(context.Context) (Verdict, error) {
		calls++
		return Verdict{Retry: true}, fmt.Errorf("503 #%d", calls)
	})
	assert.EqualError(t, err, "503 #4")

	// The real timer stops for a cancelled context.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Policy{MaxRetries: 1}.Do(ctx, func(context.Context) (Verdict, error) { return Verdict{Retry: true}, errors.New("x") })
	assert.ErrorIs(t, err, context.Canceled)
}

func TestTransport(t *testing.T) {
	op := func(err error) error {
		return &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{op(syscall.ECONNREFUSED), true},
		{op(syscall.ECONNRESET), true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{&url.Error{Op: "Post", URL: "http://x", Err: io.EOF}, true},
		{&url.Error{Op: "Post", URL: "http://nohost.invalid", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "nohost.invalid", IsNotFound: true}}}, false},
		{&url.Error{Op: "Post", URL: "gopher://x", Err: errors.New("unsupported protocol scheme")}, false},
		{context.Canceled, false},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), false},
		{errors.New("invalid character '}' looking for beginning of value"), false},
	} {
		assert.Equal(t, tc.want, Transport(tc.err), "Transport(%v)", tc.err)
	}
}

func TestStatus(t *testing.T) {
	for code, want := range map[int]bool{400: false, 401: false, 404: false, 408: true, 409: true, 413: false, 429: true, 500: true, 502: true, 503: true, 529: true} {
		assert.Equal(t, want, Status(code), "Status(%d)", code)
	}
}
