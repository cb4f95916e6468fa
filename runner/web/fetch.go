package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// Defaults for FetchOptions.
const (
	DefaultMaxBytes     = 5 << 20
	DefaultMaxRedirects = 10
	DefaultTimeout      = 30 * time.Second
	DefaultUserAgent    = "july-webfetch/1 (+https://github.com/julyfs/julyfs)"
)

// FetchOptions configure a Fetcher. Zero fields take the defaults.
type FetchOptions struct {
	// AllowPrivateAddresses lets a fetch reach loopback, private,
	// link-local and other non-public addresses (agent.yaml's
	// web: { allowPrivateAddresses: true }).
	AllowPrivateAddresses bool
	// MaxBytes caps the response body read (default 5 MiB): the rest is
	// not read, and the page says it was cut.
	MaxBytes int64
	// MaxRedirects caps the redirects followed (default 10).
	MaxRedirects int
	// Timeout bounds the whole fetch, redirects and body included
	// (default 30s).
	Timeout time.Duration
	// Resolver resolves host names (default net.DefaultResolver).
	Resolver Resolver
	// UserAgent is sent with every request.
	UserAgent string
}

// Fetcher gets web pages as text. It is safe for concurrent use.
type Fetcher struct {
	opts   FetchOptions
	client *http.Client
	dialer *dialer
}

// NewFetcher returns a Fetcher. Its transport ignores proxy settings from
// the environment (a proxy would make the address check meaningless) and
// dials only addresses the guard accepts.
func NewFetcher(opts FetchOptions) *Fetcher {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxRedirects <= 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	d := newDialer(opts.Resolver, opts.AllowPrivateAddresses)
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: opts.Timeout,
	}
	f := &Fetcher{opts: opts, dialer: d}
	f.client = &http.Client{
		Transport: tr,
		Timeout:   opts.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > opts.MaxRedirects {
				return &redirectError{fmt.Errorf("more than %d redirects (last to %s)", opts.MaxRedirects, req.URL.Redacted())}
			}
			if err := checkURL(req.URL); err != nil {
				return &redirectError{fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)}
			}
			return nil
		},
	}
	return f
}

// Page is a fetched page as text.
type Page struct {
	// URL is the page's address after redirects.
	URL string `json:"url"`
	// Status is the HTTP status code.
	Status int `json:"status"`
	// ContentType is the response's media type (without parameters).
	ContentType string `json:"contentType"`
	// Title is the HTML page's title, when it has one.
	Title string `json:"title,omitempty"`
	// Text is the page: markdown for HTML, the body as is for other text.
	Text string `json:"-"`
	// Bytes is how many bytes of the body were read.
	Bytes int64 `json:"bytes"`
	// Truncated reports a body cut at MaxBytes.
	Truncated bool `json:"truncated,omitempty"`
}

// FetchError is a fetch that failed; Error says what and for which URL.
type FetchError struct {
	URL string
	Err error
}

func (e *FetchError) Error() string { return fmt.Sprintf("fetching %s: %v", e.URL, e.Err) }

func (e *FetchError) Unwrap() error { return e.Err }

// checkURL accepts http and https URLs with a host.
func checkURL(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return errors.New("not an absolute URL: give one starting with https:// or http://")
	default:
		return fmt.Errorf("scheme %q is not supported: only http and https URLs are fetched", u.Scheme)
	}
	if u.Hostname() == "" {
		return errors.New("the URL has no host")
	}
	return nil
}

// Fetch gets rawURL and returns it as text. A URL that is not http(s), a
// refused or unresolvable host, a status other than 2xx, too many
// redirects, a timeout and a binary body are errors (*FetchError).
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Page, error) {
	fail := func(err error) (*Page, error) { return nil, &FetchError{URL: safeURL(rawURL), Err: err} }
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return fail(errors.New("not a valid URL"))
	}
	if err := checkURL(u); err != nil {
		return fail(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fail(err)
	}
	req.Header.Set("User-Agent", f.opts.UserAgent)
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json, application/xml;q=0.9, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		var ue *url.Error
		var re *redirectError
		if errors.As(err, &ue) && ue.URL != req.URL.String() && !errors.As(err, &re) {
			// Failed on a redirect's hop: say which.
			return fail(fmt.Errorf("redirect to %s: %w", safeURL(ue.URL), unwrapURLError(err)))
		}
		return fail(unwrapURLError(err))
	}
	defer resp.Body.Close()
	final := resp.Request.URL.String()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &FetchError{URL: safeURL(final), Err: fmt.Errorf("HTTP %s", resp.Status)}
	}
	// Read at most MaxBytes (+1 to learn whether there was more); the
	// rest of a huge body is never read: closing drops the connection.
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	if err != nil {
		return nil, &FetchError{URL: safeURL(final), Err: fmt.Errorf("reading the body: %w", unwrapURLError(err))}
	}
	p := &Page{URL: final, Status: resp.StatusCode}
	if int64(len(body)) > f.opts.MaxBytes {
		body, p.Truncated = body[:f.opts.MaxBytes], true
	}
	p.Bytes = int64(len(body))
	ct := resp.Header.Get("Content-Type")
	mt, params, _ := mime.ParseMediaType(ct)
	if mt == "" {
		mt, params, _ = mime.ParseMediaType(http.DetectContentType(body))
	}
	p.ContentType = mt
	switch {
	case isHTML(mt):
		text, err := decode(body, ct, params)
		if err != nil {
			return nil, &FetchError{URL: safeURL(final), Err: err}
		}
		p.Title, p.Text = htmlToMarkdown(text, resp.Request.URL)
	case isText(mt):
		if !looksText(body) {
			return nil, &FetchError{URL: safeURL(final), Err: fmt.Errorf("the body is labelled %s but is binary", mt)}
		}
		text, err := decode(body, ct, params)
		if err != nil {
			return nil, &FetchError{URL: safeURL(final), Err: err}
		}
		p.Text = text
	default:
		return nil, &FetchError{URL: safeURL(final), Err: fmt.Errorf("the content is %s, not text: webFetch returns text pages only (HTML, plain text, JSON, XML, markdown)", mt)}
	}
	return p, nil
}

func isHTML(mt string) bool { return mt == "text/html" || mt == "application/xhtml+xml" }

func isText(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/javascript", "application/ecmascript",
		"application/x-javascript", "application/yaml", "application/x-yaml", "application/toml",
		"application/x-sh", "application/sql", "application/graphql", "application/x-ndjson", "application/ld+json":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

// looksText refuses a body with NUL bytes in its first 8 KiB.
func looksText(b []byte) bool {
	return !bytes.Contains(b[:min(len(b), 8<<10)], []byte{0})
}

// decode turns body into valid UTF-8: it honours the declared charset
// (or, for HTML, a <meta> one) and replaces invalid sequences with U+FFFD.
func decode(body []byte, contentType string, params map[string]string) (string, error) {
	if cs := strings.ToLower(params["charset"]); cs == "" || cs == "utf-8" || cs == "utf8" || cs == "us-ascii" {
		if utf8.Valid(body) {
			return string(body), nil
		}
		if cs != "" {
			return strings.ToValidUTF8(string(body), "\uFFFD"), nil
		}
	}
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return strings.ToValidUTF8(string(body), "\uFFFD"), nil
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("decoding the body: %w", err)
	}
	return strings.ToValidUTF8(string(out), "\uFFFD"), nil
}

// htmlToMarkdown extracts the page's readable article (go-readability) and
// renders it as markdown (html-to-markdown); when no article stands out it
// renders the whole body.
func htmlToMarkdown(page string, base *url.URL) (title, text string) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return "", page
	}
	parser := readability.NewParser()
	art, err := parser.ParseDocument(doc, base)
	title = strings.TrimSpace(art.Title())
	node := doc
	if err == nil && art.Node != nil {
		node = art.Node
	}
	md, err := htmltomarkdown.ConvertNode(node, converter.WithDomain(base.Scheme+"://"+base.Host))
	if err != nil || len(bytes.TrimSpace(md)) == 0 {
		if node != doc {
			md, err = htmltomarkdown.ConvertNode(doc, converter.WithDomain(base.Scheme+"://"+base.Host))
		}
		if err != nil {
			return title, page
		}
	}
	return title, strings.ToValidUTF8(string(md), "\uFFFD")
}

// unwrapURLError drops *url.Error's "Get \"...\": " prefix: FetchError
// names the URL already.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("timed out: %w", err)
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		var re *RefusedError
		if errors.As(err, &re) {
			return re
		}
	}
	return err
}

// safeURL quotes a URL with control characters for printing.
func safeURL(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return strconv.Quote(s)
		}
	}
	return s
}

// redirectError is CheckRedirect's refusal of a redirect: it names the
// hop itself, so Fetch adds nothing to it.
type redirectError struct{ error }

func (e *redirectError) Unwrap() error { return e.error }
