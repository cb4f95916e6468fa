package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeResolver answers every name from a table.
type fakeResolver map[string][]netip.Addr

func (r fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func allowed(opts FetchOptions) *Fetcher {
	opts.AllowPrivateAddresses = true
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	return NewFetcher(opts)
}

const article = `<!doctype html><html><head><title>Go 1.26 release notes</title></head><body>
<nav><a href="/">home</a> | <a href="/doc">docs</a></nav>
<article><h1>Go 1.26 release notes</h1>
<p>The latest Go release, version 1.26, arrives six months after Go 1.25. Most of its changes are in the
implementation of the toolchain, runtime, and libraries. As always, the release maintains the Go 1
promise of compatibility.</p>
<h2>New APIs</h2>
<p>The new <code>errors.AsType</code> function is a generic version of errors.As. See the
<a href="/pkg/errors">errors package</a> for details. We expect almost all Go programs to continue to
compile and run as before.</p>
<ul><li>crypto/hpke: new package</li><li>io/fs: ReadLinkFS</li></ul>
</article><footer>Copyright footer text</footer></body></html>`

func TestFetchHTMLToMarkdown(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, article)
	})
	p, err := allowed(FetchOptions{}).Fetch(t.Context(), s.URL+"/doc/go1.26")
	require.NoError(t, err)
	assert.Equal(t, "text/html", p.ContentType)
	assert.Equal(t, "Go 1.26 release notes", p.Title)
	assert.Contains(t, p.Text, "## New APIs")
	assert.Contains(t, p.Text, "`errors.AsType`")
	assert.Contains(t, p.Text, "[errors package]("+s.URL+"/pkg/errors)")
	assert.Contains(t, p.Text, "- crypto/hpke: new package")
	assert.NotContains(t, p.Text, "<p>")
	assert.False(t, p.Truncated)
}

func TestFetchTextTypes(t *testing.T) {
	bodies := map[string]struct {
		ct   string
		body string
		want string
	}{
		"/plain":   {"text/plain", "hello\nworld\n", "hello\nworld\n"},
		"/json":    {"application/json", `{"a":1}`, `{"a":1}`},
		"/invalid": {"text/plain; charset=utf-8", "ok \xff\xfe end", "ok \uFFFD end"},
		"/latin1":  {"text/plain; charset=iso-8859-1", "caf\xe9", "café"},
		"/nolabel": {"", "just text, no content type", "just text, no content type"},
		"/meta":    {"text/html", `<html><head><meta charset="iso-8859-1"></head><body><p>cr` + "\xe8" + `me br` + "\xfb" + `l` + "\xe9" + `e</p></body></html>`, "crème brûlée"},
	}
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Path]
		w.Header()["Content-Type"] = nil
		if b.ct != "" {
			w.Header().Set("Content-Type", b.ct)
		}
		io.WriteString(w, b.body)
	})
	f := allowed(FetchOptions{})
	for path, b := range bodies {
		t.Run(path, func(t *testing.T) {
			p, err := f.Fetch(t.Context(), s.URL+path)
			require.NoError(t, err)
			assert.Contains(t, p.Text, b.want)
		})
	}
}

func TestFetchErrors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/boom", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", 500) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	mux.HandleFunc("/liar", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ELF\x00\x00\x01\x02"))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	s := serve(t, mux.ServeHTTP)
	f := allowed(FetchOptions{MaxRedirects: 3})
	cases := []struct{ url, want string }{
		{"ftp://example.com/x", `scheme "ftp" is not supported: only http and https URLs are fetched`},
		{"example.com/page", "not an absolute URL"},
		{"http:///nohost", "the URL has no host"},
		{s.URL + "/missing", "HTTP 404 Not Found"},
		{s.URL + "/boom", "HTTP 500 Internal Server Error"},
		{s.URL + "/loop", "more than 3 redirects"},
		{s.URL + "/file", `redirect to file:///etc/passwd: scheme "file" is not supported`},
		{s.URL + "/png", "the content is image/png, not text"},
		{s.URL + "/liar", "labelled text/plain but is binary"},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			_, err := f.Fetch(t.Context(), c.url)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			var fe *FetchError
			assert.ErrorAs(t, err, &fe)
		})
	}
	t.Run("timeout", func(t *testing.T) {
		_, err := allowed(FetchOptions{Timeout: 300 * time.Millisecond}).Fetch(t.Context(), s.URL+"/slow")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "timed out")
	})
	t.Run("unresolvable", func(t *testing.T) {
		f := allowed(FetchOptions{Resolver: fakeResolver{}})
		_, err := f.Fetch(t.Context(), "http://nowhere.invalid/")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "host nowhere.invalid does not resolve")
	})
}

// TestFetchHugeBodyIsCut serves a 2 GB body: the fetch reads the cap and
// stops, and allocates about that much, not the body.
func TestFetchHugeBodyIsCut(t *testing.T) {
	const size = 2 << 30
	chunk := []byte(strings.Repeat("all work and no play makes jack a dull boy\n", 1000))
	s := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", fmt.Sprint(size))
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	const limit = 1 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := allowed(FetchOptions{MaxBytes: limit}).Fetch(t.Context(), s.URL)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.True(t, p.Truncated)
	assert.EqualValues(t, limit, p.Bytes)
	assert.Len(t, p.Text, limit)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "allocated while fetching a 2 GB body with a 1 MiB cap")
}

func TestFetchRefusesNonPublicAddresses(t *testing.T) {
	s := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") })
	port := s.Listener.Addr().(*net.TCPAddr).Port
	r := fakeResolver{
		"loopback.example": {netip.MustParseAddr("127.0.0.1")},
		"mixed.example":    {netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("::1")},
	}
	f := NewFetcher(FetchOptions{Resolver: r, Timeout: 5 * time.Second})
	cases := []struct{ url, addr, class string }{
		{s.URL, "127.0.0.1", "loopback"},
		{fmt.Sprintf("http://localhost.:%d/", port), "", ""}, // resolved by the fake: does not resolve
		{fmt.Sprintf("http://loopback.example:%d/", port), "127.0.0.1", "loopback"},
		{"http://10.0.0.1/", "10.0.0.1", "private"},
		{"http://192.168.1.1/", "192.168.1.1", "private"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254", "link-local"},
		{fmt.Sprintf("http://[::1]:%d/", port), "::1", "loopback"},
		{"http://[fd00::1]/", "fd00::1", "private"},
		{"http://[fe80::1]/", "fe80::1", "link-local"},
		{"http://[::ffff:127.0.0.1]/", "127.0.0.1", "loopback"},
		{"http://0.0.0.0/", "0.0.0.0", "unspecified"},
		{"http://239.1.2.3/", "239.1.2.3", "multicast"},
		{"http://100.64.0.1/", "100.64.0.1", "private (carrier-grade NAT)"},
		{"http://mixed.example/", "10.1.2.3", "private"},
		{"http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1", "loopback (via NAT64)"},
		{"http://[2002:a9fe:a9fe::1]/", "2002:a9fe:a9fe::1", "link-local (via 6to4)"},
		{fmt.Sprintf("http://[::127.0.0.1]:%d/", port), "::7f00:1", "loopback (via IPv4-compatible)"},
		{fmt.Sprintf("http://[::ffff:0:127.0.0.1]:%d/", port), "::ffff:0:7f00:1", "loopback (via IPv4-translated)"},
		{"http://192.0.2.1/", "192.0.2.1", "reserved (documentation)"},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			p, err := f.Fetch(t.Context(), c.url)
			require.Error(t, err, "fetched %+v", p)
			if c.addr == "" {
				assert.Contains(t, err.Error(), "does not resolve")
				return
			}
			var re *RefusedError
			require.ErrorAs(t, err, &re, "%v", err)
			assert.Equal(t, c.addr, re.Addr.String())
			assert.Equal(t, c.class, re.Class)
			assert.Contains(t, err.Error(), "allowPrivateAddresses: true")
			assert.NotContains(t, err.Error(), "secret")
		})
	}
	t.Run("allowed", func(t *testing.T) {
		f := NewFetcher(FetchOptions{Resolver: r, AllowPrivateAddresses: true})
		p, err := f.Fetch(t.Context(), fmt.Sprintf("http://loopback.example:%d/", port))
		require.NoError(t, err)
		assert.Equal(t, "secret", p.Text)
	})
}

// TestFetchChecksEveryRedirect redirects from an allowed server to a
// refused one: the guard refuses the second hop. Both listen on loopback,
// so the test's classifier tells them apart by port.
func TestFetchChecksEveryRedirect(t *testing.T) {
	inner := serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "internal secret") })
	innerPort := uint16(inner.Listener.Addr().(*net.TCPAddr).Port)
	outer := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/admin", http.StatusFound)
	})
	f := NewFetcher(FetchOptions{Timeout: 5 * time.Second})
	dialed := 0
	f.dialer.classify = func(ap netip.AddrPort) string {
		dialed++
		if ap.Port() == innerPort {
			return "loopback"
		}
		return ""
	}
	_, err := f.Fetch(t.Context(), outer.URL)
	require.Error(t, err)
	var re *RefusedError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "127.0.0.1", re.Addr.String())
	assert.Contains(t, err.Error(), "/admin")
	assert.GreaterOrEqual(t, dialed, 2)
}

// TestDialControlRefuses checks the dial-time check on its own: whatever
// a resolver said earlier, the socket does not connect to a refused
// address.
func TestDialControlRefuses(t *testing.T) {
	d := newDialer(fakeResolver{}, false)
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "10.9.8.7:80", "169.254.1.1:80", "[fd12::1]:80"} {
		err := d.net.Control("tcp", addr, nil)
		var re *RefusedError
		assert.True(t, errors.As(err, &re), "Control(%s) = %v, want a refusal", addr, err)
	}
	assert.NoError(t, d.net.Control("tcp", "93.184.215.14:443", nil))
	assert.NoError(t, d.net.Control("tcp", "[2606:4700::1]:443", nil))
	assert.NoError(t, d.net.Control("tcp", "[64:ff9b::5db8:d70e]:443", nil), "NAT64 of a public address")
	assert.Nil(t, newDialer(fakeResolver{}, true).net.Control, "allowPrivateAddresses installs no check")
}

// TestAddrClass classifies every kind of address the guard knows, IPv4
// inside IPv6 by the IPv4 address it carries.
func TestAddrClass(t *testing.T) {
	for _, c := range []struct{ addr, class string }{
		{"93.184.215.14", ""},
		{"2606:4700::1", ""},
		{"127.0.0.1", "loopback"},
		{"10.1.2.3", "private"},
		{"192.0.2.1", "reserved (documentation)"},
		{"198.51.100.7", "reserved (documentation)"},
		{"203.0.113.255", "reserved (documentation)"},
		{"192.0.3.1", ""},
		{"2001:db8::1", "reserved (documentation)"},
		{"::", "unspecified"},
		{"::1", "loopback"},
		// IPv4-compatible (::/96).
		{"::127.0.0.1", "loopback (via IPv4-compatible)"},
		{"::10.0.0.1", "private (via IPv4-compatible)"},
		{"::169.254.169.254", "link-local (via IPv4-compatible)"},
		{"::192.0.2.1", "reserved (documentation) (via IPv4-compatible)"},
		{"::93.184.215.14", ""},
		// IPv4-translated (::ffff:0:0:0/96).
		{"::ffff:0:127.0.0.1", "loopback (via IPv4-translated)"},
		{"::ffff:0:192.168.1.1", "private (via IPv4-translated)"},
		{"::ffff:0:93.184.215.14", ""},
		// IPv4-mapped (::ffff:0:0/96): unmapped first.
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:203.0.113.9", "reserved (documentation)"},
		// NAT64 and 6to4, as before.
		{"64:ff9b::7f00:1", "loopback (via NAT64)"},
		{"64:ff9b::c000:201", "reserved (documentation) (via NAT64)"},
		{"2002:a9fe:a9fe::1", "link-local (via 6to4)"},
		{"2002:5db8:d70e::1", ""},
	} {
		got := addrClass(netip.MustParseAddr(c.addr))
		assert.Equal(t, c.class, got, "addrClass(%s) = %q, want %q", c.addr, got, c.class)
	}
}

// FuzzAddrClass checks that an address carrying an IPv4 address is never
// judged more leniently than that address.
func FuzzAddrClass(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{192, 0, 2, 1})
	f.Add([]byte{93, 184, 215, 14})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(b[:4]))
		want := addrClass(v4)
		for _, prefix := range [][]byte{
			{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
			{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0},
			{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff},
			{0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0},
		} {
			a := netip.AddrFrom16([16]byte(append(append([]byte{}, prefix...), b[:4]...)))
			if want != "" {
				assert.NotEmpty(t, addrClass(a), "addrClass(%s) is public, %s is %s", a, v4, want)
			}
		}
	})
}
