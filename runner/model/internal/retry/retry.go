// Package retry is the retry policy the model providers share: which
// failures are worth another attempt, how long to wait before it (the
// server's Retry-After when it sends one, else exponential backoff with
// jitter) and how many attempts to make.
//
// The providers turn their SDK's own retries off and loop here instead, so
// that a retry also covers a stream that breaks before its first token and
// so that tests can see the waits through an injected Sleep rather than by
// timing them. [Stream] is the attempt loop both Generate methods run, and
// [Endpoint] resolves the key and base URL both constructors take.
//
// # Concurrency
//
// A Policy is a value; Do may be called from many goroutines at once.
package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/julyfs/julyfs/runner/model"
	"github.com/julyfs/julyfs/runner/model/internal/streamguard"
)

// DefaultMaxRetries is the number of retries when the caller asks for the
// provider's default (model.Options.MaxRetries == 0).
const DefaultMaxRetries = 4

// MaxWait is the longest Retry-After a provider waits for; a server asking
// for more gets its error returned instead.
const MaxWait = 2 * time.Minute

// Policy says how often and how long to retry.
type Policy struct {
	// MaxRetries is the number of retries after the first attempt.
	MaxRetries int
	// Base is the first backoff (0: 500ms); each retry doubles it, up to
	// Cap (0: 8s), less up to a quarter of jitter.
	Base, Cap time.Duration
	// Sleep waits d or until ctx is done; nil uses a timer. Tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock for HTTP-date Retry-After values; nil is time.Now.
	Now func() time.Time
}

// New returns the policy for model.Options.MaxRetries: 0 is the default,
// a negative value no retries.
func New(maxRetries int) Policy {
	switch {
	case maxRetries == 0:
		maxRetries = DefaultMaxRetries
	case maxRetries < 0:
		maxRetries = 0
	}
	return Policy{MaxRetries: maxRetries}
}

// Verdict is what an attempt says about its failure.
type Verdict struct {
	// Retry says another attempt may succeed.
	Retry bool
	// Header is the failed response's header (nil without a response),
	// read for Retry-After-Ms and Retry-After.
	Header http.Header
}

// Do calls attempt until it succeeds, its failure is not worth retrying,
// the retries are used up, or ctx is done. It returns the last attempt's
// error, or ctx's error if ctx ended a wait. A server asking to wait longer
// than [MaxWait] ends the loop with that attempt's error.
func (p Policy) Do(ctx context.Context, attempt func(ctx context.Context) (Verdict, error)) error {
	for n := 0; ; n++ {
		v, err := attempt(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !v.Retry || n >= p.MaxRetries {
			return err
		}
		wait, ok := p.RetryAfter(v.Header)
		if ok && wait > MaxWait {
			return err
		}
		if !ok {
			wait = p.Backoff(n)
		}
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// Backoff is the wait before retry n+1 (n from 0) when the server named
// none: Base·2ⁿ capped at Cap, less up to a quarter of jitter.
func (p Policy) Backoff(n int) time.Duration {
	base, capd := p.Base, p.Cap
	if base <= 0 {
		base = 500 * time.Millisecond
	}
	if capd <= 0 {
		capd = 8 * time.Second
	}
	d := capd
	if n < 30 && base<<n < capd {
		d = base << n
	}
	if j := int64(d / 4); j > 0 {
		d -= time.Duration(rand.Int64N(j))
	}
	return d
}

// RetryAfter reads the server's wait from h: Retry-After-Ms (milliseconds)
// first, then Retry-After (seconds, or an HTTP date). ok is false when
// neither is there or parses.
func (p Policy) RetryAfter(h http.Header) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < float64(1<<53) {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case f < 0:
			return 0, false
		case f > MaxWait.Seconds():
			return MaxWait + time.Second, true
		}
		return time.Duration(f * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	return max(t.Sub(now()), 0), true
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Status reports whether an HTTP status is worth retrying: 408, 409, 429,
// and every 5xx (Anthropic's 529 "overloaded" among them).
func Status(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusConflict ||
		code == http.StatusTooManyRequests || code >= 500
}

// Transport reports whether err is a transport failure worth retrying: the
// connection was refused, reset or closed before the response was whole,
// or a read timed out. A host name that does not resolve, a malformed URL
// and context errors are not.
func Transport(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.IsTemporary || dns.IsTimeout
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Stream runs attempt under p until it succeeds or may not be retried: an
// attempt that streamed text to the caller is never retried (that would
// repeat the text). verdict classifies an attempt's error, except for the
// errors of package streamguard, which decide themselves (an idle timeout
// is retried, a reply over the limit or an answer that is not a stream is
// not); failure turns the last attempt's error into the provider's error,
// again except for streamguard's, reported with their own message. A cancelled context
// is the provider's error carrying ctx.Err().
func Stream(ctx context.Context, p Policy, provider string,
	attempt func(ctx context.Context) (resp *model.Response, streamed bool, err error),
	verdict func(error) Verdict, failure func(error) *model.ProviderError) (*model.Response, error) {
	var resp *model.Response
	var last error
	err := p.Do(ctx, func(ctx context.Context) (Verdict, error) {
		r, streamed, err := attempt(ctx)
		if err != nil {
			last = err
			v := verdict(err)
			if r, ok := streamguard.Retryable(err); ok {
				v.Retry = r
			}
			v.Retry = v.Retry && !streamed
			return v, err
		}
		resp = r
		return Verdict{}, nil
	})
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		return nil, &model.ProviderError{Provider: provider, Err: ctx.Err(), Message: ctx.Err().Error()}
	}
	if last == nil {
		last = err
	}
	if ge := streamguard.Find(last); ge != nil {
		return nil, &model.ProviderError{Provider: provider, Message: ge.Error(), Err: ge}
	}
	return nil, failure(last)
}

// Endpoint resolves a provider's API key and base URL: opts first, then
// the environment variables keyVar and baseVar (through opts.Getenv, else
// os.Getenv), else defaultBase. The base URL must be http(s) with a host.
// A missing key is an error only for the vendor's own server: a base URL
// of the user's own may do without one.
func Endpoint(provider string, opts model.Options, keyVar, baseVar, defaultBase string) (key, base string, err error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	key = opts.APIKey
	if key == "" {
		key = getenv(keyVar)
	}
	base = opts.BaseURL
	if base == "" {
		base = getenv(baseVar)
	}
	custom := base != ""
	if !custom {
		base = defaultBase
	}
	if u, perr := url.Parse(base); perr != nil {
		return "", "", fmt.Errorf("%s: base URL %q: %w", provider, base, perr)
	} else if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", "", fmt.Errorf("%s: base URL %q: want an http:// or https:// URL with a host", provider, base)
	}
	if key == "" && !custom {
		return "", "", fmt.Errorf("%s: no API key: set %s (a server of your own set in %s may do without one)", provider, keyVar, baseVar)
	}
	return key, base, nil
}
