// Package streamguard bounds what a model provider's server can make a
// provider do: how long it may stay silent, how large a reply may grow,
// and what it may answer a streaming request with. Every provider that
// speaks HTTP uses it, so that the bounds and their errors are the same
// for all of them:
//
//   - [Transport] wraps the provider's HTTP transport. Each request gets
//     an idle timer, restarted by every byte of the response: a server
//     that sends nothing for the idle timeout (before the headers, or
//     between two pieces of the body) has its request cancelled, and the
//     read fails with an [*IdleError]. A streaming request (one whose
//     context went through [WithLimits] with Stream set) answered 2xx
//     with a body that does not begin like an event stream fails at once
//     with a [*NotStreamError] naming the content type and the first
//     bytes. One event of a stream larger than twice the reply limit
//     (plus 64 KiB for its envelope) fails with a [*ReplyTooLargeError]
//     before the provider's decoder buffers it. An error response's body
//     is cut at [MaxErrorBody].
//   - [Budget] counts the bytes of one reply as the provider assembles it
//     (text, and each tool call's name, id and arguments) and fails with a
//     [*ReplyTooLargeError] past the limit.
//
// [Retryable] and [Find] tell the retry loop what to make of these
// errors: an idle timeout is retried like a connection reset; a reply over
// the limit and an answer that is not a stream are not.
//
// # Concurrency
//
// A Transport is safe for concurrent use; each request has its own timer.
// A Budget belongs to one attempt.
package streamguard

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultIdleTimeout is how long a server may send nothing before its
// request is cancelled, when the caller does not say.
const DefaultIdleTimeout = 120 * time.Second

// BytesPerToken is how many bytes of reply one token of the model's
// maximum output may stand for: a generous multiple of the three to four
// bytes a token is on average, so that JSON escapes, long whitespace
// tokens and non-Latin scripts stay well within it.
const BytesPerToken = 32

// MinReplyLimit is the smallest default reply limit, whatever the
// maximum output tokens.
const MinReplyLimit = 1 << 20

// AssumedMaxTokens is the maximum output the reply limit assumes when
// neither the request nor the provider bounds it.
const AssumedMaxTokens = 128 << 10

// MaxErrorBody is how much of an error response's body is read.
const MaxErrorBody = 1 << 20

// eventSlack is what one event may hold beyond twice the reply limit:
// its JSON envelope.
const eventSlack = 64 << 10

// ReplyLimit is the reply limit for a request: configured when positive,
// else BytesPerToken times maxTokens (AssumedMaxTokens when maxTokens is
// not positive), at least MinReplyLimit.
func ReplyLimit(configured int64, maxTokens int) int64 {
	if configured > 0 {
		return configured
	}
	if maxTokens <= 0 {
		maxTokens = AssumedMaxTokens
	}
	return max(int64(maxTokens)*BytesPerToken, MinReplyLimit)
}

// Limits are the bounds of one request.
type Limits struct {
	// Idle is the idle timeout; 0 is DefaultIdleTimeout.
	Idle time.Duration
	// Reply is the reply limit in bytes; 0 is ReplyLimit(0, 0).
	Reply int64
	// Stream says the request asks for an event stream: a 2xx answer that
	// is not one is refused.
	Stream bool
}

func (l Limits) resolved() Limits {
	if l.Idle <= 0 {
		l.Idle = DefaultIdleTimeout
	}
	if l.Reply <= 0 {
		l.Reply = ReplyLimit(0, 0)
	}
	return l
}

type limitsKey struct{}

// WithLimits returns ctx carrying l for the requests made with it.
func WithLimits(ctx context.Context, l Limits) context.Context {
	return context.WithValue(ctx, limitsKey{}, l.resolved())
}

// LimitsFrom returns the limits ctx carries, or the defaults.
func LimitsFrom(ctx context.Context) Limits {
	if l, ok := ctx.Value(limitsKey{}).(Limits); ok {
		return l
	}
	return Limits{}.resolved()
}

// IdleError is a server that sent nothing for the idle timeout. It is a
// net.Error whose Timeout is true, so retry loops treat it as a dropped
// connection.
type IdleError struct {
	// After is the idle timeout that passed.
	After time.Duration
}

func (e *IdleError) Error() string {
	return fmt.Sprintf("the model's server sent nothing for %s (the idle timeout: raise it with --model-timeout or agent.yaml's modelTimeout)", e.After)
}

// Timeout is true: the error is a timeout (a net.Error).
func (e *IdleError) Timeout() bool { return true }

// Temporary is true: another attempt may get an answer.
func (e *IdleError) Temporary() bool { return true }

// ReplyTooLargeError is a reply, or one event of its stream, over the
// reply limit.
type ReplyTooLargeError struct {
	Limit int64
}

func (e *ReplyTooLargeError) Error() string {
	return fmt.Sprintf("model reply over %d bytes (the reply limit: raise it with --model-max-reply or agent.yaml's modelMaxReply)", e.Limit)
}

// NotStreamError is a streaming request answered with something else.
type NotStreamError struct {
	// Status is the HTTP status (2xx).
	Status int
	// ContentType is the response's Content-Type ("" when it had none).
	ContentType string
	// Head is the first bytes of the body (at most headBytes).
	Head []byte
}

// headBytes is how much of a body that is not a stream an error quotes.
const headBytes = 120

func (e *NotStreamError) Error() string {
	ct := strconv.Quote(e.ContentType)
	if e.ContentType == "" {
		ct = "no Content-Type"
	} else {
		ct = "Content-Type " + ct
	}
	if len(e.Head) == 0 {
		return fmt.Sprintf("the server answered a streaming request with HTTP %d, %s and an empty body, not an event stream", e.Status, ct)
	}
	return fmt.Sprintf("the server answered a streaming request with HTTP %d, %s, not an event stream; it began %s", e.Status, ct, quoteHead(e.Head))
}

func quoteHead(b []byte) string {
	cut := len(b) > headBytes
	if cut {
		b = b[:headBytes]
	}
	q := strconv.Quote(string(b))
	if cut {
		q += "..."
	}
	return q
}

// Retryable reports what err says about another attempt: retry is true
// for an idle timeout, false for a reply over the limit or an answer that
// is not a stream; ok is false when err is none of these.
func Retryable(err error) (retry, ok bool) {
	var ie *IdleError
	var re *ReplyTooLargeError
	var ne *NotStreamError
	switch {
	case errors.As(err, &re), errors.As(err, &ne):
		return false, true
	case errors.As(err, &ie):
		return true, true
	}
	return false, false
}

// Find returns the guard error in err's chain (an *IdleError, a
// *ReplyTooLargeError or a *NotStreamError), without the request's URL
// that the HTTP client wraps around it, or nil.
func Find(err error) error {
	var ie *IdleError
	var re *ReplyTooLargeError
	var ne *NotStreamError
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &ne):
		return ne
	case errors.As(err, &ie):
		return ie
	}
	return nil
}

// Budget counts the bytes of one reply against its limit.
type Budget struct {
	limit, used int64
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// Take counts n more bytes, failing once the total passes the limit.
func (b *Budget) Take(n int) error {
	b.used += int64(n)
	if b.used > b.limit {
		return &ReplyTooLargeError{Limit: b.limit}
	}
	return nil
}

// Transport is an http.RoundTripper that applies the limits of each
// request's context (see the package doc) around Base.
type Transport struct {
	// Base makes the requests; nil is http.DefaultTransport.
	Base http.RoundTripper
}

// RoundTrip makes the request under its limits.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	l := LimitsFrom(req.Context())
	ctx, cancel := context.WithCancel(req.Context())
	w := &watch{idle: l.Idle, cancel: cancel}
	w.timer = time.AfterFunc(l.Idle, w.fire)
	resp, err := base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		w.stop()
		if w.fired.Load() {
			return nil, &IdleError{After: l.Idle}
		}
		return nil, err
	}
	w.kick()
	idle := &idleBody{rc: resp.Body, w: w}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body = &readCloser{Reader: io.LimitReader(idle, MaxErrorBody), Closer: idle}
		return resp, nil
	}
	if !l.Stream {
		resp.Body = idle
		return resp, nil
	}
	br := bufio.NewReaderSize(idle, 4096)
	head, isStream, err := sniffBody(br)
	if err != nil || !isStream {
		idle.Close()
		if err != nil {
			return nil, err
		}
		return nil, &NotStreamError{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Head: head}
	}
	resp.Body = &readCloser{Reader: &eventLimiter{r: br, limit: 2*l.Reply + eventSlack, reply: l.Reply}, Closer: idle}
	return resp, nil
}

// watch is one request's idle timer: fire cancels the request.
type watch struct {
	idle   time.Duration
	cancel context.CancelFunc
	timer  *time.Timer
	fired  atomic.Bool
	once   sync.Once
}

func (w *watch) fire() {
	w.fired.Store(true)
	w.cancel()
}

func (w *watch) kick() {
	if !w.fired.Load() {
		w.timer.Reset(w.idle)
	}
}

func (w *watch) stop() {
	w.once.Do(func() {
		w.timer.Stop()
		w.cancel()
	})
}

// idleBody restarts the timer at every byte read and turns the failure of
// a read the timer cancelled into an IdleError.
type idleBody struct {
	rc io.ReadCloser
	w  *watch
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.kick()
	}
	if err != nil && !errors.Is(err, io.EOF) && b.w.fired.Load() {
		err = &IdleError{After: b.w.idle}
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.w.stop()
	return b.rc.Close()
}

type readCloser struct {
	io.Reader
	io.Closer
}

// sniffBody reads the start of a 2xx answer to a streaming request, as
// little as it takes, and says whether it begins like an event stream.
// head is what it looked at and whatever else had arrived, at most
// headBytes+1 bytes. err is a failed read (not the end of the body).
func sniffBody(br *bufio.Reader) (head []byte, isStream bool, err error) {
	for n := 1; n <= br.Size(); n++ {
		b, err := br.Peek(n)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, false, err
			}
			v, _ := sniff(b, true)
			return copyHead(b, br), v, nil
		}
		if v, decided := sniff(b, false); decided {
			return copyHead(b, br), v, nil
		}
	}
	return nil, true, nil // a buffer of blank lines: an event stream so far
}

func copyHead(b []byte, br *bufio.Reader) []byte {
	if m := min(br.Buffered(), headBytes+1); m > len(b) {
		b, _ = br.Peek(m)
	}
	return append([]byte(nil), b[:min(len(b), headBytes+1)]...)
}

// sniff reports whether b, the start of a body (all of it when whole),
// begins like an event stream: after an optional byte order mark and
// blank lines, a comment (":") or one of the fields data, event, id and
// retry, ended by a colon or the end of the line. decided is false when
// the start is too short to tell (never when whole).
func sniff(b []byte, whole bool) (isStream, decided bool) {
	const bom = "\xef\xbb\xbf"
	if !whole && len(b) < len(bom) && isPrefix(b, bom) {
		return false, false
	}
	b = bytes.TrimPrefix(b, []byte(bom))
	b = bytes.TrimLeft(b, "\r\n")
	if len(b) == 0 {
		return false, whole
	}
	if b[0] == ':' {
		return true, true
	}
	for _, f := range []string{"data", "event", "id", "retry"} {
		if len(b) <= len(f) {
			if isPrefix(b, f) {
				if whole {
					return len(b) == len(f), true // "data" alone: a field without a value
				}
				return false, false
			}
			continue
		}
		if string(b[:len(f)]) == f {
			switch b[len(f)] {
			case ':', '\n', '\r':
				return true, true
			}
		}
	}
	return false, true
}

func isPrefix(b []byte, s string) bool {
	return len(b) <= len(s) && string(b) == s[:len(b)]
}

// eventLimiter passes a stream through, failing once one event (the bytes
// between two blank lines) passes limit.
type eventLimiter struct {
	r     io.Reader
	limit int64 // bytes one event may hold
	reply int64 // the reply limit, for the error
	s     scanner
	err   error
}

func (e *eventLimiter) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.r.Read(p)
	if e.s.feed(p[:n]) > e.limit {
		e.err = &ReplyTooLargeError{Limit: e.reply}
		return 0, e.err
	}
	return n, err
}

// scanner follows the lines of an event stream (ended by CRLF, LF or
// CR) to measure each event.
type scanner struct {
	event   int64 // bytes of the current event, line ends not counted
	line    int64 // bytes of the current line
	afterCR bool  // the last byte was a CR (an LF after it ends nothing)
	largest int64 // the largest event seen
	events  int   // events ended by a blank line
}

// feed scans b and returns the largest event so far, the current one
// included.
func (s *scanner) feed(b []byte) int64 {
	for _, c := range b {
		switch c {
		case '\n':
			if s.afterCR {
				s.afterCR = false
				continue
			}
			s.endLine()
		case '\r':
			s.afterCR = true
			s.endLine()
		default:
			s.afterCR = false
			s.line++
			s.event++
		}
	}
	return max(s.largest, s.event)
}

func (s *scanner) endLine() {
	if s.line == 0 {
		if s.event > 0 {
			s.events++
			s.largest = max(s.largest, s.event)
		}
		s.event = 0
	}
	s.line = 0
}
