package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/playground"
	"github.com/julyfs/julyfs/runner/sessions"
)

// The playground's end-to-end tests: a real july serve (this test binary
// as july) on a copy of examples/notes with the scripted model, driven in
// headless Chromium through the DevTools protocol. They skip only when no
// Chromium is found and CI is not set; with CI set they fail instead. On a
// failure a full-page screenshot and the page's HTML are saved under
// $JULYFS_TEST_ARTIFACTS, or os.TempDir()/julyfs-playground-artifacts, and
// the test logs their paths.

// pageWait bounds every wait for the page (the machine may be loaded).
const pageWait = 90 * time.Second

// chromiumPath finds a Chromium: $JULYFS_CHROMIUM, then the usual names on
// PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("JULYFS_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		require.FailNow(t, "no Chromium found (chromium, chromium-browser, google-chrome or $JULYFS_CHROMIUM) and CI is set: scripts/test installs Debian's chromium")
	}
	t.Skip("no Chromium found (chromium, chromium-browser, google-chrome or $JULYFS_CHROMIUM): install Debian's chromium to run the playground's browser tests")
	return ""
}

// artifactsDir is where failing tests leave their screenshots.
func artifactsDir() string {
	if d := os.Getenv("JULYFS_TEST_ARTIFACTS"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "julyfs-playground-artifacts")
}

// browser is one headless Chromium with one tab.
type browser struct {
	t   *testing.T
	ctx context.Context

	mu      sync.Mutex
	dialogs []string         // "type: message" of every JavaScript dialog
	errors  []string         // uncaught exceptions and console errors
	bytes   map[string]int64 // network.RequestID → bytes received (headers and body)
	encoded map[string]int64 // the same, summed from data events, until loading finished
	decoded map[string]int64
	urls    map[string]string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromiumPath(t)
	profile := t.TempDir() // removed after the browser is gone (cleanups run last first)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc() // kills Chromium and waits for it
	})
	b := &browser{t: t, ctx: ctx, bytes: map[string]int64{}, encoded: map[string]int64{}, decoded: map[string]int64{}, urls: map[string]string{}}
	start, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// Listen starts the browser with ctx (not start: its timeout would end
	// the browser).
	require.NoError(t, chromedp.Listen(ctx, b.event), "starting %s", exe)
	_, err := chromedp.Call(start, network.Enable, network.EnableParams{})
	require.NoError(t, err, "enabling the network events of %s", exe)
	t.Cleanup(b.onFailure) // runs before the browser is killed
	return b
}

// event records what the tests look at; it answers a confirm dialog
// yes and any other dialog no (from another goroutine: Listen's rule).
func (b *browser) event(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		b.dialogs = append(b.dialogs, fmt.Sprintf("%s: %s", ev.Type, ev.Message))
		accept := ev.Type == page.DialogTypeConfirm
		go chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept}) //nolint:errcheck // the tab may be gone
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.errors = append(b.errors, fmt.Sprintf("exception %s:%d: %s", d.URL, d.LineNumber+1, msg))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == "error" {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, strings.TrimSpace(string(a.Value)+" "+a.Description))
			}
			b.errors = append(b.errors, "console.error: "+strings.Join(parts, " "))
		}
	case *network.EventRequestWillBeSent:
		b.urls[string(ev.RequestID)] = ev.Request.URL
	case *network.EventDataReceived:
		// A stream still open has no loadingFinished; its data events
		// may count the body (dataLength) without the encoded bytes.
		// Chromium may report a chunk twice, once per length.
		id := string(ev.RequestID)
		b.encoded[id] += ev.EncodedDataLength
		b.decoded[id] += ev.DataLength
		b.bytes[id] = max(b.encoded[id], b.decoded[id])
	case *network.EventLoadingFinished:
		b.bytes[string(ev.RequestID)] = int64(ev.EncodedDataLength)
	}
}

// onFailure saves a screenshot and the page's HTML of a failed test.
func (b *browser) onFailure() {
	t := b.t
	b.mu.Lock()
	if len(b.errors) > 0 {
		t.Logf("the page's errors:\n%s", strings.Join(b.errors, "\n"))
	}
	b.mu.Unlock()
	if !t.Failed() {
		return
	}
	dir := artifactsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("no screenshot: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	url, _ := chromedp.Run(ctx, chromedp.Location())
	png, errShot := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	html, errHTML := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_") + "-" + time.Now().UTC().Format("20060102T150405")
	shot, doc := filepath.Join(dir, name+".png"), filepath.Join(dir, name+".html")
	if errShot == nil {
		errShot = os.WriteFile(shot, png, 0o644)
	}
	if errHTML == nil {
		errHTML = os.WriteFile(doc, []byte(html), 0o644)
	}
	t.Logf("the failed page %s: screenshot %s (%v), HTML %s (%v); artifacts go to $JULYFS_TEST_ARTIFACTS, else %s",
		url, shot, errShot, doc, errHTML, filepath.Join(os.TempDir(), "julyfs-playground-artifacts"))
}

// do runs actions, bounded by pageWait.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, pageWait)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, actions...), what)
}

// open navigates to url and waits for the page to have rendered its view.
func (b *browser) open(url string) {
	b.t.Helper()
	b.do("open "+url, chromedp.Navigate(url))
	b.until("the page at "+url+" is ready", `document.body.dataset.ready === 'true'`)
}

// evalJS evaluates expr once (bounded).
func evalJS[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, pageWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(b.t, err, "evaluate %s", expr)
	return v
}

// until evaluates expr (a JavaScript boolean expression) every 50 ms until
// it is true, across navigations, for at most pageWait.
func (b *browser) until(what, expr string) {
	b.t.Helper()
	b.untilOr(what, expr, "")
}

// overflowJS lists, as text, the elements whose right edge is past the
// window's (its width less a scroll bar), widest first: what makes a page
// scroll sideways.
const overflowJS = `(() => {
  const w = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= w + 0.5) continue;
    const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : '');
    out.push([r.right, name + ' right ' + Math.round(r.right) + ' px, width ' + Math.round(r.width) + ' px, min-content ' + Math.round(el.scrollWidth) + ' px: ' + JSON.stringify((el.textContent || '').slice(0, 60))]);
  }
  out.sort((a, b) => b[0] - a[0]);
  return 'window ' + w + ' px (without its scroll bar), document ' + document.documentElement.scrollWidth + ' px; past the window:\n' + out.slice(0, 15).map((o) => o[1]).join('\n');
})()`

// fitsWidth waits until nothing on the page is wider than the window; on
// timeout it names the elements that are.
func (b *browser) fitsWidth(what, extra string) {
	b.t.Helper()
	expr := `document.documentElement.scrollWidth <= document.documentElement.clientWidth`
	if extra != "" {
		expr += ` && (` + extra + `)`
	}
	b.untilOr(what, expr, overflowJS)
}

// untilOr is until that, on timeout, evaluates diagnose (a JavaScript
// string expression) and puts its value in the failure message.
func (b *browser) untilOr(what, expr, diagnose string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, pageWait)
	defer cancel()
	var last error
	for {
		step, cancelStep := context.WithTimeout(ctx, 10*time.Second)
		ok, err := chromedp.Run(step, chromedp.Evaluate[bool](`(() => { try { return !!(`+expr+`); } catch (e) { return false; } })()`))
		cancelStep()
		if err == nil && ok {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			detail := ""
			if diagnose != "" {
				dctx, dcancel := context.WithTimeout(b.ctx, 10*time.Second)
				d, err := chromedp.Run(dctx, chromedp.Evaluate[string](diagnose))
				dcancel()
				detail = "\n" + d
				if err != nil {
					detail = fmt.Sprintf("\n(diagnosis failed: %v)", err)
				}
			}
			require.FailNow(b.t, "timed out waiting: "+what, "after %v; last error %v%s", pageWait, last, detail)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// click waits for the element expr (a JavaScript expression) to be there
// and enabled, and clicks it.
func (b *browser) click(what, expr string) {
	b.t.Helper()
	b.until(what, `(() => { const el = `+expr+`; if (!el || el.disabled) return false; el.scrollIntoView(); el.click(); return true; })()`)
}

// text returns the text of the element sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	return evalJS[string](b, `(document.querySelector(`+jsString(sel)+`) || {}).textContent || ''`)
}

// typeIn types text into the element sel with key events.
func (b *browser) typeIn(sel, text string) {
	b.t.Helper()
	b.do("type into "+sel, chromedp.SendKeys(chromedp.CSS(sel), text))
}

func (b *browser) dialogList() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

func jsString(s string) string {
	j, _ := json.Marshal(s)
	return string(j)
}

// playAgent copies examples/notes to a temporary directory, appends extra
// to its agent.yaml and writes script as its model; it returns the agent
// directory and the --model value.
func playAgent(t *testing.T, extra, script string) (dir, modelSpec string) {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "examples", "notes"))
	require.NoError(t, err)
	dir = filepath.Join(t.TempDir(), "notes")
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	if extra != "" {
		f, err := os.OpenFile(filepath.Join(dir, "agent.yaml"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.WriteString(extra)
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	sc := filepath.Join(dir, "play.script.yaml")
	require.NoError(t, os.WriteFile(sc, []byte(script), 0o644))
	return dir, "script:" + sc
}

// startPlay starts july serve ARGS and returns its origin (the page's
// root; the server prints its agents' API URLs).
func startPlay(t *testing.T, args ...string) string {
	t.Helper()
	srv := startServe(t, args...)
	u, err := url.Parse(srv.url)
	require.NoError(t, err)
	return u.Scheme + "://" + u.Host
}

// startSession starts a session from the agent page by its composer and
// waits for the session page it goes to.
func (b *browser) startSession(base, message string) {
	b.t.Helper()
	b.open(base + "/notes/")
	b.typeIn("#message", message)
	b.click("the Send button", `document.querySelector('#send')`)
	b.until("the session page", `location.pathname.includes('/sessions/') && document.body.dataset.ready === 'true' && document.querySelector('#transcript')`)
}

// waitTurnDone waits for n completed turns in the transcript.
func (b *browser) waitTurnDone(n int) {
	b.t.Helper()
	b.until(fmt.Sprintf("%d completed turns", n), fmt.Sprintf(`document.querySelectorAll('#transcript .entry.done').length >= %d && document.querySelector('#state').textContent === 'idle'`, n))
}

const playChatScript = `turns:
  - replies:
      - calls:
          - {tool: Read, args: {path: /a.txt}}
          - {tool: Grep, args: {pattern: "h.", path: /, output_mode: content}}
      - expect:
          - {tool: Read, contains: hi}
          - {tool: Grep, contains: hi}
        calls:
          - {tool: Write, args: {path: /summary.md, contents: "# Summary\n\n/a.txt says **hi**.\n"}}
      - expect:
          - {tool: Write, error: false}
        text: "I wrote **/summary.md** from /a.txt."
`

// TestPlaygroundChat: the agents on the home page, a session started and
// a message sent from the page, the reply streamed in with its three tool
// calls folded, the written file opened from the tree view, and (in
// --dev) a schedule fired by hand into a session of its own.
func TestPlaygroundChat(t *testing.T) {
	dir, model := playAgent(t, "", playChatScript)
	origin := startPlay(t, dir, "--dev", "--model", model)
	b := newBrowser(t) // after the server, so a failure's screenshot is taken while it still serves

	b.open(origin + "/")
	b.until("the notes agent on the home page", `[...document.querySelectorAll('.cards a')].some((a) => a.textContent === 'notes')`)
	assert.Contains(t, b.text("#main"), "dev mode")

	b.click("the notes agent", `[...document.querySelectorAll('.cards a')].find((a) => a.textContent === 'notes')`)
	b.until("the agent page", `location.pathname === '/notes/' && document.querySelector('#message')`)
	b.startSession(origin, "Summarize /a.txt into /summary.md")

	b.waitTurnDone(1)
	b.until("the reply", `[...document.querySelectorAll('#transcript .entry.assistant')].some((e) => e.textContent.includes('I wrote /summary.md from /a.txt.'))`)
	calls := evalJS[[]string](b, `[...document.querySelectorAll('#transcript details.call')].map((d) => d.open + ' ' + d.querySelector('.tool').textContent + ' ' + d.querySelector('.call-status').textContent)`)
	assert.Equal(t, []string{"false Read done", "false Grep done", "false Write done"}, calls, "three folded tool calls, done")
	strong := evalJS[string](b, `document.querySelector('#transcript .entry.assistant strong').textContent`)
	assert.Equal(t, "/summary.md", strong, "the reply's markdown is rendered")
	b.click("unfold the Read call", `document.querySelector('#transcript details.call summary')`)
	b.until("the Read result shown", `document.querySelector('#transcript details.call').open && document.querySelector('#transcript details.call .output').textContent.includes('hi')`)
	assert.Contains(t, b.text("#transcript .entry.done .usage"), "tokens")

	// Keyboard: j (or ArrowDown) moves the focus to the next entry.
	b.typeIn("#transcript .entry.user", "j")
	assert.Equal(t, "entry tool", evalJS[string](b, `document.activeElement.className`), "j from the first entry")
	b.typeIn("#transcript .entry.tool", "jjj")
	assert.Equal(t, "entry assistant", evalJS[string](b, `document.activeElement.className`), "three j later")

	// The tree view, refreshed after the turn, opens the file.
	b.click("summary.md in the tree", `document.querySelector('#tree button[data-path="/summary.md"]')`)
	b.until("the file viewer", `!document.querySelector('#viewer').hidden && document.querySelector('#viewer .md h3')`)
	assert.Equal(t, "Summary", b.text("#viewer .md h3"))
	assert.Contains(t, b.text("#viewer"), "/a.txt says hi.")

	// A phone-width window: one column, nothing wider than the window.
	b.do("a 390 px window", chromedp.EmulateViewport(390, 844))
	b.fitsWidth("one column at 390 px", `document.querySelector('.side').getBoundingClientRect().top > document.querySelector('#transcript').getBoundingClientRect().top`)
	// Session ids are random: the widest one possible (all W) must fit too.
	evalJS[bool](b, `(() => { const id = 'ses_01' + 'W'.repeat(24); document.querySelector('#crumbs [aria-current]').textContent = id; document.querySelector('.session-head h1 code').textContent = id; return true; })()`)
	b.fitsWidth("the widest session id at 390 px", "")
	b.do("back to 1280 px", chromedp.EmulateViewport(1280, 900))

	// Dev mode: the heartbeat schedule fired by hand starts a session.
	b.open(origin + "/notes/")
	b.click("Fire now on the heartbeat schedule", `document.querySelector('button.fire[data-schedule="heartbeat"]')`)
	b.until("the fired schedule's session link", `document.querySelector('#schedules .fired a')`)
	b.click("the fired session", `document.querySelector('#schedules .fired a')`)
	b.until("the fired session's page", `location.pathname.includes('/sessions/') && document.querySelector('#transcript .entry.user')`)
	b.waitTurnDone(1)
	assert.Contains(t, b.text("#transcript .entry.user"), "Read /a.txt and reply with one line")

	// The agent page, its two sessions and the schedule, at phone width.
	b.do("a 390 px window", chromedp.EmulateViewport(390, 844))
	b.open(origin + "/notes/")
	b.until("two sessions listed", `document.querySelectorAll('table.sessions tbody tr').length === 2`)
	b.fitsWidth("nothing wider than 390 px", "")
	assert.Empty(t, b.dialogList())
}

// TestPlaygroundCancel: a turn that would run for ten minutes is
// cancelled with the page's Cancel button.
func TestPlaygroundCancel(t *testing.T) {
	dir, model := playAgent(t, "", "turns:\n  - replies:\n      - sleep: 10m\n        text: never\n")
	origin := startPlay(t, dir, "--model", model)
	b := newBrowser(t)
	b.startSession(origin, "take your time")
	b.until("the running turn", `document.querySelector('#state').textContent === 'running' && !document.querySelector('#cancel').disabled`)
	b.click("Cancel turn", `document.querySelector('#cancel')`)
	b.until("the failed turn", `document.querySelector('#transcript .entry.failed') && document.querySelector('#state').textContent === 'idle'`)
	assert.Contains(t, b.text("#transcript .entry.failed"), "Turn failed")
	disabled := evalJS[bool](b, `document.querySelector('#cancel').disabled`)
	assert.True(t, disabled, "Cancel is disabled with no turn running")
}

const playCowScript = `turns:
  - replies:
      - calls:
          - {tool: Write, args: {path: /summary.md, contents: "# Summary\n\nhi\n"}}
      - text: wrote the summary
  - replies:
      - calls:
          - {tool: Write, args: {path: /b.md, contents: "b\n"}}
      - text: wrote b
`

// TestPlaygroundDiffRewind: in a copy-on-write session the page lists the
// changes per turn, shows turn 1's diff, and rewinds the session to turn
// 1 (confirming the dialog), after which turn 2's file is gone from the
// tree; a fork from turn 1 opens the new session, its tree at turn 1.
func TestPlaygroundDiffRewind(t *testing.T) {
	dir, model := playAgent(t, "", playCowScript)
	origin := startPlay(t, dir, "--cow", "--model", model)
	b := newBrowser(t)
	b.startSession(origin, "write a summary")
	b.waitTurnDone(1)
	b.typeIn("#message", "now b")
	b.click("Send", `document.querySelector('#send')`)
	b.waitTurnDone(2)
	b.until("two checkpoints", `document.querySelectorAll('#changes .checkpoint').length === 2 && document.querySelector('#tree button[data-path="/b.md"]')`)

	b.click("Diff of turn 1", `[...document.querySelectorAll('#changes .checkpoint')][0].querySelector('button')`)
	b.until("turn 1's diff", `document.querySelector('#changes .diff .patch')`)
	lines := evalJS[[]string](b, `[...document.querySelectorAll('#changes .diff .patch .line.add')].map((l) => l.textContent.trimEnd())`)
	assert.Contains(t, lines, "+# Summary")
	assert.Contains(t, b.text("#changes .diff h4"), "/summary.md")

	b.click("Rewind to turn 1", `[...[...document.querySelectorAll('#changes .checkpoint')][0].querySelectorAll('button')].find((x) => x.textContent === 'Rewind to here')`)
	b.until("the rewound session", `[...document.querySelectorAll('#transcript .entry.note')].some((e) => e.textContent.includes('rewound to turn 1'))`)
	b.until("b.md gone from the tree", `document.querySelector('#tree button[data-path="/summary.md"]') && !document.querySelector('#tree button[data-path="/b.md"]')`)
	assert.Equal(t, []string{"confirm: Rewind the session to turn 1? Later turns' changes are undone."}, b.dialogList())

	// Fork from turn 1: the page goes to the new session, whose tree is
	// the layer at turn 1.
	parent := evalJS[string](b, `location.pathname`)
	b.click("Fork from turn 1", `[...[...document.querySelectorAll('#changes .checkpoint')][0].querySelectorAll('button')].find((x) => x.textContent === 'Fork from here')`)
	b.until("the forked session's page", fmt.Sprintf(`location.pathname.includes('/sessions/') && location.pathname !== %s && document.body.dataset.ready === 'true'`, jsString(parent)))
	b.until("the fork's tree at turn 1", `document.querySelector('#tree button[data-path="/summary.md"]') && !document.querySelector('#tree button[data-path="/b.md"]')`)
}

// TestPlaygroundApproval: with approvals: {edit: ask} the Write waits for
// the Approve button, then runs.
func TestPlaygroundApproval(t *testing.T) {
	script := "turns:\n  - replies:\n      - calls:\n          - {tool: Write, args: {path: /ok.md, contents: \"ok\\n\"}}\n      - expect:\n          - {tool: Write, error: false}\n        text: written after approval\n"
	dir, model := playAgent(t, "approvals:\n  edit: ask\n", script)
	origin := startPlay(t, dir, "--model", model)
	b := newBrowser(t)
	b.startSession(origin, "write ok.md")
	b.until("the approval card", `document.querySelector('#transcript .entry.approval button.approve')`)
	assert.Contains(t, b.text("#transcript .entry.approval"), "Write")
	assert.Contains(t, b.text("#transcript .entry.approval"), "/ok.md")
	b.until("the pending approvals panel", `!document.querySelector('#approvals').hidden`)
	b.click("Approve", `document.querySelector('#transcript .entry.approval button.approve')`)
	b.waitTurnDone(1)
	assert.Contains(t, b.text("#transcript .entry.approval .decision"), "allow")
	b.until("the written file in the tree", `document.querySelector('#tree button[data-path="/ok.md"]') && document.querySelector('#approvals').hidden`)
	assert.Contains(t, b.text("#transcript .entry.assistant"), "written after approval")
}

const xssName = "<img src=x onerror=alert(1)>.md"

// TestPlaygroundXSS: a file named like an img tag with an onerror, a tool
// result and a reply holding a script tag are shown as text, and no
// script of theirs runs: no alert, no window flag set.
func TestPlaygroundXSS(t *testing.T) {
	payload := `<script>window.pwned=1</script> <img src=x onerror="window.pwnedImg=1">`
	script := fmt.Sprintf(`turns:
  - replies:
      - calls:
          - {tool: Write, args: {path: %[1]s, contents: %[2]s}}
      - calls:
          - {tool: Read, args: {path: %[1]s}}
      - expect:
          - {tool: Read, contains: "<script>"}
        text: %[3]s
`, jsString("/"+xssName), jsString(payload+"\n"+strings.Repeat("long line\n", 300)), jsString("Done: "+payload))
	dir, model := playAgent(t, "", script)
	origin := startPlay(t, dir, "--model", model)
	b := newBrowser(t)
	b.startSession(origin, payload)
	b.waitTurnDone(1)

	b.click("the hostile file in the tree", `[...document.querySelectorAll('#tree button.file')].find((x) => x.textContent === `+jsString(xssName)+`)`)
	b.until("the hostile file in the viewer", `!document.querySelector('#viewer').hidden && document.querySelector('#viewer').textContent.includes('window.pwned=1')`)
	b.click("unfold the Read call", `[...document.querySelectorAll('#transcript details.call summary')][1]`)
	b.until("the Read result shown", `[...document.querySelectorAll('#transcript details.call')][1].open`)
	// The result, over 2,000 characters, is cut with a Show all button.
	assert.Equal(t, 2000, evalJS[int](b, `[...document.querySelectorAll('#transcript details.call .output')][1].textContent.length`))
	b.click("Show all", `[...document.querySelectorAll('#transcript details.call')][1].querySelector('.show-all')`)
	b.until("the whole result", `[...document.querySelectorAll('#transcript details.call .output')][1].textContent.length > 3000`)
	// Give an injected image time to fail and fire its handler.
	b.do("wait", chromedp.Sleep(500*time.Millisecond))

	type xssResult struct {
		Pwned, PwnedImg         bool
		Scripts, Images         int
		User, Result, Reply, Vw string
		Tree                    []string
	}
	res := evalJS[xssResult](b, `({
		pwned: 'pwned' in window, pwnedImg: 'pwnedImg' in window,
		scripts: document.querySelectorAll('script:not([src])').length,
		images: document.querySelectorAll('#main img').length,
		user: document.querySelector('#transcript .entry.user').textContent,
		result: [...document.querySelectorAll('#transcript details.call .output')][1].textContent,
		reply: document.querySelector('#transcript .entry.assistant').textContent,
		vw: document.querySelector('#viewer').textContent,
		tree: [...document.querySelectorAll('#tree button.file')].map((x) => x.textContent),
	})`)
	assert.False(t, res.Pwned, "window.pwned was set: a script ran")
	assert.False(t, res.PwnedImg, "window.pwnedImg was set: an onerror ran")
	assert.Empty(t, b.dialogList(), "an alert ran")
	assert.Zero(t, res.Scripts, "a script element made it into the page")
	assert.Zero(t, res.Images, "an img element made it into the page")
	assert.Contains(t, res.Tree, xssName)
	assert.Contains(t, res.User, payload)
	assert.Contains(t, res.Result, payload)
	assert.Contains(t, res.Reply, "Done: "+payload)
	assert.Contains(t, res.Vw, xssName)
	assert.Contains(t, res.Vw, "<script>window.pwned=1</script>")
}

// TestPlaygroundLargeTranscript renders a session of over 1,000 events and
// logs the figures of docs/perf.md's playground table: the time from
// navigation to the rendered transcript (in Go, and the page's own
// performance.now()), the bytes the page transferred (from the browser's
// network events) against the log's size, and the page's own weight.
// It asserts what is rendered, never how fast.
func TestPlaygroundLargeTranscript(t *testing.T) {
	const turns, callsPerTurn = 10, 98
	var sc strings.Builder
	sc.WriteString("turns:\n")
	for range turns {
		sc.WriteString("  - replies:\n      - calls:\n")
		for range callsPerTurn {
			sc.WriteString("          - {tool: Read, args: {path: /a.txt}}\n")
		}
		sc.WriteString("      - text: \"read it **98** times\"\n")
	}
	dir, model := playAgent(t, "", sc.String())
	origin := startPlay(t, dir, "--model", model)
	b := newBrowser(t)

	// The session is made through the API: the page then opens it cold.
	created := postJSON(t, origin+"/notes/v1/sessions", `{"message":"turn 1"}`)
	id := created["sessionId"].(string)
	base := origin + "/notes/v1/sessions/" + id
	for i := 2; i <= turns; i++ {
		waitIdle(t, base, i-1)
		postJSON(t, base+"/messages", fmt.Sprintf(`{"message":"turn %d"}`, i))
	}
	waitIdle(t, base, turns)
	events := countEvents(t, dir, id)
	require.GreaterOrEqual(t, events, 1000)
	logSize := fileSize(t, filepath.Join(dir, ".july", "sessions", id, "events.ndjson"))

	streamAlone := timeStream(t, base, events)

	b.open(origin + "/") // the page's files are cached no-cache: count them fresh below
	_, err := chromedp.Call(b.ctx, network.ClearBrowserCache, cdp.Empty{})
	require.NoError(t, err)
	b.mu.Lock()
	b.bytes, b.encoded, b.decoded, b.urls = map[string]int64{}, map[string]int64{}, map[string]int64{}, map[string]string{}
	b.mu.Unlock()
	start := time.Now()
	b.do("open the session", chromedp.Navigate(origin+"/notes/sessions/"+id))
	b.until("the whole transcript", fmt.Sprintf(`Number(document.body.dataset.events) >= %d && document.querySelectorAll('#transcript .entry.done').length === %d`, events, turns))
	wall := time.Since(start)
	inPage := evalJS[float64](b, `performance.now()`)
	rendered := evalJS[int](b, `document.querySelectorAll('#transcript details.call').length`)
	phases := evalJS[string](b, `(() => {
		const nav = performance.getEntriesByType('navigation')[0];
		const mark = (n) => (performance.getEntriesByName(n)[0] || {}).startTime;
		const f = (x) => Math.round(x) + ' ms';
		return 'document ' + f(nav.responseEnd) + ', DOMContentLoaded ' + f(nav.domContentLoadedEventEnd) + ', event stream open ' + f(mark('july:events-open')) + ', first events ' + f(mark('july:events-first'));
	})()`)
	assert.Equal(t, turns*callsPerTurn, rendered)

	b.mu.Lock()
	var total int64
	var lines []string
	for rid, n := range b.bytes {
		total += n
		lines = append(lines, fmt.Sprintf("  %8d B %s", n, b.urls[rid]))
	}
	b.mu.Unlock()
	t.Logf("playground: %d events (log %d B) rendered %v after navigation (Go wall), performance.now() %.0f ms at detection (%s; the event stream alone, read by a Go client: %v); %d B transferred by the page:\n%s\npage weight (playground.Size) %d B",
		events, logSize, wall.Round(time.Millisecond), inPage, phases, streamAlone.Round(time.Millisecond), total, strings.Join(lines, "\n"), playground.Size())
}

// waitIdle polls the session until it has turns turns and is idle.
func waitIdle(t *testing.T, base string, turns int) {
	t.Helper()
	deadline := time.Now().Add(pageWait)
	for {
		resp, err := http.Get(base)
		require.NoError(t, err)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var m struct {
			State string `json:"state"`
			Turns int    `json:"turns"`
		}
		require.NoError(t, json.Unmarshal(data, &m), "%s", data)
		if m.State == "idle" && m.Turns >= turns {
			return
		}
		require.True(t, time.Now().Before(deadline), "session not idle after %d turns within %v: %s", turns, pageWait, data)
		time.Sleep(100 * time.Millisecond)
	}
}

// timeStream times reading the session's first n events from its event
// stream, for comparison with the page.
func timeStream(t *testing.T, base string, n int) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pageWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?after=-1", nil)
	require.NoError(t, err)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	seen := 0
	for seen < n && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data:") {
			seen++
		}
	}
	require.Equal(t, n, seen, "events read from the stream: %v", sc.Err())
	return time.Since(start)
}

// countEvents counts the session's events in its log.
func countEvents(t *testing.T, dir, id string) int {
	t.Helper()
	_, evs, _, err := sessions.New(filepath.Join(dir, ".july")).Read(id)
	require.NoError(t, err)
	return len(evs)
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	fi, err := os.Stat(p)
	require.NoError(t, err)
	return fi.Size()
}

// TestPlaygroundToken: with --token-file the page asks for the token once
// (after the API's 401; a wrong one is asked for again), keeps it in sessionStorage only, sends it as a
// bearer header, and sets no cookie; a reload in the tab does not ask
// again.
func TestPlaygroundToken(t *testing.T) {
	dir, model := playAgent(t, "", playChatScript)
	tok := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tok, []byte("s3cret-token\n"), 0o600))
	origin := startPlay(t, dir, "--model", model, "--token-file", tok)
	b := newBrowser(t)

	b.do("open the page", chromedp.Navigate(origin+"/"))
	b.until("the token dialog", `document.querySelector('#token-dialog').open`)
	// A wrong token is refused (401) and asked for again.
	b.typeIn("#token-input", "wrong-token")
	b.click("Use token", `document.querySelector('#token-form button[type=submit]')`)
	b.until("the token dialog again", `document.querySelector('#token-dialog').open && sessionStorage.getItem('july.playground.token') === null`)
	assert.Empty(t, evalJS[string](b, `document.querySelector('#token-input').value`), "the wrong token is not kept in the input")
	b.typeIn("#token-input", "s3cret-token")
	b.click("Use token", `document.querySelector('#token-form button[type=submit]')`)
	b.until("the agents after the token", `[...document.querySelectorAll('.cards a')].some((a) => a.textContent === 'notes') && document.body.dataset.ready === 'true'`)
	assert.Equal(t, "s3cret-token", evalJS[string](b, `sessionStorage.getItem('july.playground.token')`))
	assert.Empty(t, evalJS[string](b, `localStorage.length ? 'localStorage used' : document.cookie`), "no cookie, no localStorage")

	b.open(origin + "/notes/")
	assert.False(t, evalJS[bool](b, `document.querySelector('#token-dialog').open`), "asked again in the same tab")
	b.until("the agent page", `document.querySelector('#message')`)
	assert.Empty(t, b.dialogList())
}
