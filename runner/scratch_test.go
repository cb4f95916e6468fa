package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/runner/web"
)

// The spec's "/tmp scratch for webSearch and webFetch" tables, one row at
// a time: a page server with a small and a large page, and agents with and
// without a root, served through the loop's turn (loopTurn).

const spillInline = 1 << 10

// pageServer serves /small (under the inline limit), /large (over it) and
// a SearXNG /search whose results are over it.
func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	large := strings.Repeat("the quick brown fox jumps over the lazy dog\n", 200) + "NEEDLE at the end\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.URL.Query().Get("say")+"small page")
	})
	mux.HandleFunc("/large", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, large)
	})
	mux.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		var res []map[string]string
		for i := range 40 {
			res = append(res, map[string]string{"title": fmt.Sprintf("result %d", i), "url": fmt.Sprintf("https://example.org/%d", i), "content": "a snippet that is long enough to add up"})
		}
		json.NewEncoder(w).Encode(map[string]any{"results": res})
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// spillFixture opens an agent (root or host default) whose web tools reach
// srv, and starts a loop turn.
type spillFixture struct {
	sess *Session
	turn *Turn
	hdir string // the harness cwd: agent-tools is under it
}

func newSpillFixture(t *testing.T, root bool, srv *httptest.Server) *spillFixture {
	t.Helper()
	web := fmt.Sprintf("web:\n  allowPrivateAddresses: true\n  search: {provider: searxng, url: %q}\n", srv.URL)
	var archive string
	if root {
		archive = "-- agent.yaml --\nname: r\nroot:\n  /:\n    temp: {}\n" + web
	} else {
		archive = "-- agent.yaml --\nname: h\nlocal:\n  cwd: ./w\n" + web + "-- w/a.txt --\nhi\n"
	}
	a, err := Load(agentDir(t, archive))
	require.NoError(t, err)
	s, err := a.Open(context.Background(), SessionOptions{Harness: HarnessOptions{InlineLimit: spillInline}})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	turn, err := s.loopTurn(nil)
	require.NoError(t, err)
	hdir, err := s.harnessDir()
	require.NoError(t, err)
	return &spillFixture{sess: s, turn: turn, hdir: hdir}
}

func (f *spillFixture) call(t *testing.T, name string, args string) *tools.Result {
	t.Helper()
	return f.turn.Call(context.Background(), name, json.RawMessage(args))
}

// spilled lists the files in the host agent-tools directory.
func (f *spillFixture) spilled(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(f.hdir, web.SpillDirName))
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

var uuidTxt = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.txt`

// Row: small results stay inline: no disk, no rewrite (root set and unset).
func TestSpillSmallStaysInline(t *testing.T) {
	srv := pageServer(t)
	for _, root := range []bool{true, false} {
		t.Run(fmt.Sprintf("root=%v", root), func(t *testing.T) {
			f := newSpillFixture(t, root, srv)
			r := f.call(t, web.NameWebFetch, `{"url":"`+srv.URL+`/small"}`)
			require.False(t, r.IsError, r.String())
			assert.True(t, strings.HasSuffix(r.String(), "\n\nsmall page"), r.String())
			assert.Empty(t, r.Structured.(web.FetchResult).OutputLocation)
			assert.Empty(t, f.spilled(t), "no disk")
			if root {
				ls := f.call(t, tools.NameLS, `{"path":"/tmp"}`)
				assert.NotContains(t, ls.String(), ".txt")
			}
		})
	}
}

// Row: root set, a large WebFetch result: copied to /tmp/{uuid}.txt (same
// uuid), the host file deleted, the path and the follow-up rewritten in
// the text and in output_location.
func TestSpillOverlayWebFetch(t *testing.T) {
	srv := pageServer(t)
	f := newSpillFixture(t, true, srv)
	r := f.call(t, web.NameWebFetch, `{"url":"`+srv.URL+`/large"}`)
	require.False(t, r.IsError, r.String())
	text := r.String()
	m := regexp.MustCompile(`written to (/tmp/(` + uuidTxt + `))\n`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	assert.True(t, strings.HasSuffix(text, web.FollowUpOverlay), text)
	assert.NotContains(t, text, f.hdir, "no host path in the result")
	assert.NotContains(t, text, web.FollowUpHost)
	assert.Equal(t, m[1], r.Structured.(web.FetchResult).OutputLocation)
	assert.Empty(t, f.spilled(t), "the host file is deleted")

	data, err := f.turn.FS.Read(context.Background(), m[1])
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(data), "NEEDLE at the end\n"))

	// The follow-up works: Read and Grep on /tmp.
	read := f.call(t, tools.NameRead, `{"path":"`+m[1]+`","offset":201,"limit":1}`)
	assert.Contains(t, read.String(), "NEEDLE")
	grep := f.call(t, tools.NameGrep, `{"pattern":"NEEDLE","path":"/tmp","output_mode":"content"}`)
	assert.Contains(t, grep.String(), m[1]+":201:NEEDLE at the end")
}

// Row: Read / Grep input carrying the host path maps onto /tmp.
func TestSpillOverlayRewritesReadGrepInput(t *testing.T) {
	srv := pageServer(t)
	f := newSpillFixture(t, true, srv)
	r := f.call(t, web.NameWebFetch, `{"url":"`+srv.URL+`/large"}`)
	tmp := r.Structured.(web.FetchResult).OutputLocation
	require.True(t, strings.HasPrefix(tmp, "/tmp/"), tmp)
	host := filepath.Join(f.hdir, web.SpillDirName, strings.TrimPrefix(tmp, "/tmp/"))

	read := f.call(t, tools.NameRead, `{"file_path":"`+host+`","offset":201}`)
	require.False(t, read.IsError, read.String())
	assert.Contains(t, read.String(), "NEEDLE at the end")
	grep := f.call(t, tools.NameGrep, `{"pattern":"NEEDLE","path":"`+host+`","output_mode":"content"}`)
	require.False(t, grep.IsError, grep.String())
	assert.Contains(t, grep.String(), tmp+":201:")
	// Another host path is not rewritten: under a root it is a tree path.
	other := f.call(t, tools.NameRead, `{"path":"`+filepath.Join(f.hdir, "elsewhere.txt")+`"}`)
	assert.True(t, other.IsError)
	assert.Equal(t, "not found: "+filepath.Join(f.hdir, "elsewhere.txt"), other.String())
}

// Row: root set, a large WebSearch result: WebSearch embeds the path in
// its text only; that is rewritten.
func TestSpillOverlayWebSearch(t *testing.T) {
	srv := pageServer(t)
	f := newSpillFixture(t, true, srv)
	r := f.call(t, web.NameWebSearch, `{"query":"fox","numResults":20}`)
	require.False(t, r.IsError, r.String())
	m := regexp.MustCompile(`written to (/tmp/` + uuidTxt + `)\n`).FindStringSubmatch(r.String())
	require.NotNil(t, m, r.String())
	assert.Empty(t, f.spilled(t))
	data, err := f.turn.FS.Read(context.Background(), m[1])
	require.NoError(t, err)
	assert.Contains(t, string(data), "20. result 19")
}

// Row: root unset: the host path stays, the file stays, the follow-up is
// the host's; Read reaches it by its host path.
func TestSpillHostPathStays(t *testing.T) {
	srv := pageServer(t)
	f := newSpillFixture(t, false, srv)
	r := f.call(t, web.NameWebFetch, `{"url":"`+srv.URL+`/large"}`)
	require.False(t, r.IsError, r.String())
	loc := r.Structured.(web.FetchResult).OutputLocation
	assert.Regexp(t, "^"+regexp.QuoteMeta(filepath.Join(f.hdir, web.SpillDirName))+"/"+uuidTxt+"$", loc)
	assert.Contains(t, r.String(), "written to "+loc+"\n")
	assert.True(t, strings.HasSuffix(r.String(), web.FollowUpHost))
	assert.Len(t, f.spilled(t), 1)
	read := f.call(t, tools.NameRead, `{"path":"`+loc+`","offset":201}`)
	require.False(t, read.IsError, read.String())
	assert.Contains(t, read.String(), "NEEDLE")
	_, err := f.sess.FS().Stat(context.Background(), "/tmp")
	require.NoError(t, err)
	ls := f.call(t, tools.NameLS, `{}`)
	assert.Contains(t, ls.String(), "agent-tools")
}

// Row: only a file the tool wrote this turn is copied: a path named in a
// page (an older spill file on the host) is neither copied nor deleted.
func TestSpillOnlyFilesWrittenThisTurn(t *testing.T) {
	srv := pageServer(t)
	f := newSpillFixture(t, true, srv)
	dir := filepath.Join(f.hdir, web.SpillDirName)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	old := filepath.Join(dir, "00000000-0000-0000-0000-000000000000.txt")
	require.NoError(t, os.WriteFile(old, []byte("old"), 0o644))
	r := f.call(t, web.NameWebFetch, `{"url":"`+srv.URL+`/small?say=`+old+`%20"}`)
	require.False(t, r.IsError, r.String())
	assert.Contains(t, r.String(), old, "the text is not rewritten at large")
	_, err := os.Stat(old)
	assert.NoError(t, err, "not deleted")
	ls := f.call(t, tools.NameLS, `{"path":"/tmp"}`)
	assert.NotContains(t, ls.String(), "00000000")

	// Other tools are untouched: a Write whose contents name a host path.
	w := f.call(t, tools.NameWrite, `{"path":"/note.md","contents":"`+old+`"}`)
	require.False(t, w.IsError, w.String())
	data, err := f.turn.FS.Read(context.Background(), "/note.md")
	require.NoError(t, err)
	assert.Equal(t, old, string(data))
}

// /tmp of one turn is not seen by the next turn, nor by another session.
func TestSpillTmpIsPerTurn(t *testing.T) {
	srv := pageServer(t)
	f := newSpillFixture(t, true, srv)
	r := f.call(t, web.NameWebFetch, `{"url":"`+srv.URL+`/large"}`)
	tmp := r.Structured.(web.FetchResult).OutputLocation
	require.NotEmpty(t, tmp)

	next, err := f.sess.loopTurn(nil)
	require.NoError(t, err)
	res := next.Call(context.Background(), tools.NameRead, json.RawMessage(`{"path":"`+tmp+`"}`))
	assert.True(t, res.IsError)
	assert.Equal(t, "not found: "+tmp, res.String())

	other := newSpillFixture(t, true, srv)
	res = other.turn.Call(context.Background(), tools.NameRead, json.RawMessage(`{"path":"`+tmp+`"}`))
	assert.Equal(t, "not found: "+tmp, res.String())
	assert.NotEqual(t, f.hdir, other.hdir, "each session its own harness directory")
}
