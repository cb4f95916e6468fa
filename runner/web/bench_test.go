package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// page1MiB is an HTML article of about 1 MiB: a nav, 2,000 paragraphs with
// links and code, a footer.
func page1MiB() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>A long page</title></head><body><nav><a href="/">home</a></nav><article><h1>A long page</h1>`)
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, `<h2>Section %d</h2><p>Paragraph %d of the article talks about <code>vfs.FileSystem</code> and links to <a href="/doc/%d">the docs</a>; it goes on for a while so that the readability scorer sees real prose, with commas, and sentences.</p>`, i, i, i)
	}
	b.WriteString(`</article><footer>footer</footer></body></html>`)
	return b.String()
}

// BenchmarkWebFetch1MiB fetches a 1 MiB HTML page (or 1 MiB of plain text)
// from a local server and turns it into markdown.
func BenchmarkWebFetch1MiB(b *testing.B) {
	for _, kind := range []string{"html", "text"} {
		body := page1MiB()
		ct := "text/html; charset=utf-8"
		if kind == "text" {
			body = strings.Repeat("all work and no play makes jack a dull boy\n", (1<<20)/43)
			ct = "text/plain; charset=utf-8"
		}
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Write([]byte(body))
		}))
		b.Run(kind, func(b *testing.B) {
			f := NewFetcher(FetchOptions{AllowPrivateAddresses: true})
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := f.Fetch(b.Context(), s.URL)
				if err != nil || len(p.Text) == 0 {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}
