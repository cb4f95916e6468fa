// Package playground is the web page july serve serves next to its HTTP
// API (package runner/httpapi): the agents and their sessions, a
// session's transcript live over its event stream, a composer to send a
// message or cancel a turn, the session's tree read-only, and, where the
// API has them, checkpoints with their diffs, rewind and fork, pending
// approvals, and in dev mode the schedules and reminders to fire by hand.
// docs/playground.md describes it for users.
//
// The page is static: index.html, app.css and app.js (an ES module with
// no dependency), embedded with embed and served under
// httpapi.PageAssets. It speaks only the public API, with the same token
// (asked for once after a 401, kept in sessionStorage, sent as a bearer
// header; no cookies). It follows a session's events with fetch and
// reads the Server-Sent Events itself, so the token can be sent and a
// reconnect resumes with ?after=N: the log is read once. Events are
// rendered at most once a frame and turns off screen are not laid out
// (content-visibility), so a long transcript opens fast; the performance
// marks july:events-open and july:events-first time the first stream.
//
// # Safety
//
// Every model and tool output, file name and file is untrusted. The
// script builds the page from DOM nodes and textContent only (its
// markdown renderer included); nothing untrusted reaches innerHTML. The
// Content-Security-Policy header allows scripts and styles only from the
// page's own files (no inline script or style) and connections only to
// its origin; images may also come from blob: and data: URLs (a tree's
// images, a tool result's image parts). A part the API lacks (its route
// answers 404) is left out of the page.
package playground

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/julyfs/julyfs/runner/httpapi"
)

//go:embed static
var static embed.FS

// CSP is the page's Content-Security-Policy.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler returns the page: index.html for every path but those under
// httpapi.PageAssets, which are the page's files. httpapi routes only
// the page's paths to it (Options.Page).
func Handler() http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory is there by construction
	}
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic(err)
	}
	mod := time.Time{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		name, ok := strings.CutPrefix(r.URL.Path, httpapi.PageAssets)
		if !ok {
			h.Set("Cache-Control", "no-cache")
			http.ServeContent(w, r, "index.html", mod, bytes.NewReader(index))
			return
		}
		data, err := fs.ReadFile(files, path.Clean(name))
		if err != nil || name == "index.html" {
			http.Error(w, "no such file of the page: "+name, http.StatusNotFound)
			return
		}
		h.Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, name, mod, bytes.NewReader(data))
	})
}

// Size returns the bytes of the page's own files, uncompressed.
func Size() int64 {
	var n int64
	fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return err
	})
	return n
}
