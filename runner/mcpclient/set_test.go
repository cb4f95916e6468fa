package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/tools"
)

// selfServer is a ServerConfig that runs this test binary as the test
// server in mode (main_test.go).
func selfServer(t testing.TB, mode string) ServerConfig {
	exe, err := os.Executable()
	require.NoError(t, err)
	return ServerConfig{Command: []string{exe, "-test.run=^$"}, Env: map[string]string{"JULY_TEST_MCP_SERVER": mode}}
}

// everything returns the npm server-everything's ServerConfig, skipping
// when node is missing and failing when the package is not installed.
func everything(t testing.TB) ServerConfig {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		require.Empty(t, os.Getenv("CI"), "node is not installed, and CI must run the MCP tests: scripts/test expects node and npm on the machine")
		t.Skip("node is not installed: the test with @modelcontextprotocol/server-everything needs node; scripts/test installs the server")
	}
	bin, err := filepath.Abs(filepath.Join("..", "testdata", "mcpservers", "node_modules", ".bin", "mcp-server-everything"))
	require.NoError(t, err)
	_, err = os.Stat(bin)
	require.NoError(t, err, "server-everything is not installed: run `npm ci` in runner/testdata/mcpservers (scripts/test does)")
	return ServerConfig{Command: []string{bin, "stdio"}}
}

func newSet(t testing.TB, servers map[string]ServerConfig, opts Options) *Set {
	t.Helper()
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	s := NewSet(servers, opts)
	t.Cleanup(func() { s.Close() })
	return s
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func find(ts []*tools.Tool, name string) *tools.Tool {
	for _, t := range ts {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func call(t testing.TB, tl *tools.Tool, args string) *tools.Result {
	t.Helper()
	require.NotNil(t, tl)
	r, err := tl.Run(ctxT(t), json.RawMessage(args))
	require.NoError(t, err)
	return r
}

// processGone reports that pid no longer runs (or is a zombie).
func processGone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func waitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestEverythingOverStdio(t *testing.T) {
	s := newSet(t, map[string]ServerConfig{"every": everything(t)}, Options{})
	ts, status := s.Tools(ctxT(t))
	require.Len(t, status, 1)
	require.NoError(t, status[0].Err)
	echo := find(ts, "mcp__every__echo")
	require.NotNil(t, echo, "tools: %v", status[0].Tools)
	assert.Equal(t, tools.EffectRead, echo.Effect)
	assert.Contains(t, echo.Schema.Properties, "message")
	_, err := echo.Schema.Resolve(nil)
	require.NoError(t, err)

	r := call(t, echo, `{"message":"hello july"}`)
	assert.False(t, r.IsError, r.String())
	assert.Contains(t, r.String(), "hello july")

	sum := call(t, find(ts, "mcp__every__get-sum"), `{"a":2,"b":3}`)
	assert.Contains(t, sum.String(), "5")

	img := find(ts, "mcp__every__get-tiny-image")
	require.NotNil(t, img)
	ir := call(t, img, `{}`)
	var images int
	for _, p := range ir.Content {
		if p.Type == "image" {
			images++
			assert.NotEmpty(t, p.Data)
		}
	}
	assert.Equal(t, 1, images)

	st := call(t, find(ts, "mcp__every__get-structured-content"), `{"location":"Chicago"}`)
	assert.NotNil(t, st.Structured)

	pid := s.Pids()["every"]
	require.NotZero(t, pid)
	require.NoError(t, s.Close())
	waitGone(t, pid)
}

func TestEffectsFromAnnotations(t *testing.T) {
	s := newSet(t, map[string]ServerConfig{"t": selfServer(t, "serve")}, Options{})
	ts, status := s.Tools(ctxT(t))
	require.NoError(t, status[0].Err)
	assert.Equal(t, tools.EffectRead, find(ts, "mcp__t__echo").Effect)
	w := find(ts, "mcp__t__write")
	assert.Equal(t, tools.EffectWrite, w.Effect)
	assert.True(t, w.Destructive)
	// The top-level anyOf is refused with a reason, not offered.
	assert.Nil(t, find(ts, "mcp__t__bad-schema"))
	require.Len(t, status[0].Refused, 1)
	assert.Contains(t, status[0].Refused[0], "anyOf")
}

func TestNarrowing(t *testing.T) {
	servers := map[string]ServerConfig{"a": selfServer(t, "serve"), "b": selfServer(t, "serve")}
	allow, problems := ParseAllow([]string{"read", "mcp:a/echo", "mcp:a/nope"}, servers)
	require.Empty(t, problems)
	s := newSet(t, servers, Options{Allow: allow})
	ts, status := s.Tools(ctxT(t))
	var names []string
	for _, tl := range ts {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"mcp__a__echo"}, names)
	// b is not listed at all: it is never started.
	require.Len(t, status, 1)
	assert.Equal(t, []string{"nope"}, status[0].Missing)
	errs := Problems(status)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "mcp server a: the allowlist names tool nope")

	all, problems := ParseAllow([]string{"mcp:b/*"}, servers)
	require.Empty(t, problems)
	assert.True(t, all.Permits("b", "anything"))
	assert.False(t, all.Permits("a", "echo"))
	none, _ := ParseAllow([]string{"read"}, servers)
	assert.True(t, none.Permits("a", "echo"), "a list with no mcp: entry serves every server")
}

func TestParseAllowFailsClosed(t *testing.T) {
	servers := map[string]ServerConfig{"github": {URL: "http://127.0.0.1:1/mcp"}}
	_, problems := ParseAllow([]string{"mcp:gitlab/create", "mcp:github", "mcp:/x", "mcp:github/a/b"}, servers)
	require.Len(t, problems, 4)
	assert.Contains(t, problems[0], `"mcp:gitlab/create" names the MCP server "gitlab", which mcp: does not configure (it configures github)`)
	assert.Contains(t, problems[1], "write mcp:SERVER/TOOL or mcp:SERVER/*")
}

func TestCheck(t *testing.T) {
	assert.Empty(t, Check("github", ServerConfig{Command: []string{"x"}, Env: map[string]string{"T": "${TOKEN}"}}))
	assert.Empty(t, Check("docs", ServerConfig{URL: "http://127.0.0.1:9000/mcp", Headers: map[string]string{"Authorization": "Bearer ${T}"}}))
	for name, c := range map[string]ServerConfig{
		"a__b": {Command: []string{"x"}},
		"both": {Command: []string{"x"}, URL: "http://x"},
		"none": {},
		"url":  {URL: "ftp://x"},
		"ref":  {Command: []string{"x"}, Env: map[string]string{"A": "${not a name}"}},
		"hdr":  {Command: []string{"x"}, Headers: map[string]string{"A": "b"}},
	} {
		assert.NotEmpty(t, Check(name, c), name)
	}
}

func TestNotInstalled(t *testing.T) {
	s := newSet(t, map[string]ServerConfig{
		"gone": {Command: []string{"/nonexistent/mcp-server"}},
		"ok":   selfServer(t, "serve"),
	}, Options{})
	ts, status := s.Tools(ctxT(t))
	require.Len(t, status, 2)
	require.Error(t, status[0].Err)
	assert.Contains(t, status[0].Err.Error(), "mcp server gone: starting /nonexistent/mcp-server: no such file or directory")
	require.NoError(t, status[1].Err, "one failing server does not stop the others")
	assert.NotNil(t, find(ts, "mcp__ok__echo"))
}

func TestHangOnStartIsBounded(t *testing.T) {
	cfg := selfServer(t, "hang")
	cfg.StartTimeout = 500 * time.Millisecond
	s := newSet(t, map[string]ServerConfig{"slow": cfg}, Options{})
	_, status := s.Tools(ctxT(t))
	require.Error(t, status[0].Err)
	assert.Contains(t, status[0].Err.Error(), "did not start within 500ms (raise mcp.slow.startTimeout)")
}

func TestGarbageAndExit(t *testing.T) {
	s := newSet(t, map[string]ServerConfig{"junk": selfServer(t, "garbage"), "quit": selfServer(t, "exit")}, Options{})
	_, status := s.Tools(ctxT(t))
	require.Error(t, status[0].Err)
	assert.Contains(t, status[0].Err.Error(), "mcp server junk:")
	require.Error(t, status[1].Err)
	assert.Contains(t, status[1].Err.Error(), "exit status 3")
	assert.Contains(t, status[1].Err.Error(), "exit server: giving up")
}

func TestHugeResultSpilled(t *testing.T) {
	dir := t.TempDir()
	var spilled string
	s := newSet(t, map[string]ServerConfig{"t": selfServer(t, "serve")}, Options{
		InlineLimit: 1000,
		Spill: func(text string) (string, error) {
			spilled = filepath.Join(dir, "out.txt")
			return spilled, os.WriteFile(spilled, []byte(text), 0o644)
		},
		SpillFollowUp: "Read it in parts.",
	})
	ts, _ := s.Tools(ctxT(t))
	r := call(t, find(ts, "mcp__t__huge"), `{"bytes":200000}`)
	assert.Contains(t, r.String(), "The result is 200000 bytes, too large to show here. It was written to "+spilled+"\nRead it in parts.")
	b, err := os.ReadFile(spilled)
	require.NoError(t, err)
	assert.Len(t, b, 200000)

	// Without a spill the text is cut, and says so.
	s2 := newSet(t, map[string]ServerConfig{"t": selfServer(t, "serve")}, Options{InlineLimit: 1000})
	ts2, _ := s2.Tools(ctxT(t))
	r2 := call(t, find(ts2, "mcp__t__huge"), `{"bytes":5000}`)
	assert.Contains(t, r2.String(), "[result cut at 1000 of 5000 bytes]")

	// Over the message bound: a clear error naming it, then a restart.
	cfg := selfServer(t, "serve")
	cfg.MaxMessageBytes = 64 << 10
	s3 := newSet(t, map[string]ServerConfig{"t": cfg}, Options{})
	ts3, _ := s3.Tools(ctxT(t))
	r3 := call(t, find(ts3, "mcp__t__huge"), `{"bytes":200000}`)
	assert.True(t, r3.IsError)
	// (The call's error or the connection's end, whichever the client
	// sees first: both name the bound.)
	assert.Regexp(t, `mcp server t: it (failed|stopped): it sent a message over 65536 bytes \(raise mcp\.t\.maxMessageBytes\)`, r3.String())
	r4 := call(t, find(ts3, "mcp__t__echo"), `{"text":"again"}`)
	assert.False(t, r4.IsError, r4.String())
}

func TestDiesMidSessionRestarts(t *testing.T) {
	s := newSet(t, map[string]ServerConfig{"t": selfServer(t, "serve")}, Options{})
	ts, _ := s.Tools(ctxT(t))
	pid := s.Pids()["t"]
	r := call(t, find(ts, "mcp__t__die"), `{"text":""}`)
	require.True(t, r.IsError)
	assert.Contains(t, r.String(), "mcp server t:")
	assert.Contains(t, r.String(), "restarted on the next call")
	waitGone(t, pid)
	r = call(t, find(ts, "mcp__t__echo"), `{"text":"back"}`)
	assert.False(t, r.IsError, r.String())
	assert.Contains(t, r.String(), "echo: back")
	assert.NotEqual(t, pid, s.Pids()["t"])
}

func TestFailedFirstStartComesBack(t *testing.T) {
	cfg := selfServer(t, "fail-first")
	cfg.Env["TEST_MARKER_FILE"] = filepath.Join(t.TempDir(), "marker")
	s := newSet(t, map[string]ServerConfig{"flaky": cfg, "ok": selfServer(t, "serve")}, Options{})
	ts, status := s.Tools(ctxT(t))
	require.Error(t, status[0].Err)
	assert.Contains(t, status[0].Err.Error(), "fail-first server: failing my first start")
	assert.Nil(t, find(ts, "mcp__flaky__echo"), "a server that failed offers no tools")
	require.NotNil(t, find(ts, "mcp__ok__echo"))
	okPid := s.Pids()["ok"]

	// The next call (the next turn) starts it again: after one failure,
	// at once. Its tools join; the server that was up is not restarted.
	ts, status = s.Tools(ctxT(t))
	require.NoError(t, status[0].Err)
	assert.Contains(t, status[0].Tools, "mcp__flaky__echo")
	r := call(t, find(ts, "mcp__flaky__echo"), `{"text":"back"}`)
	assert.False(t, r.IsError, r.String())
	assert.Contains(t, r.String(), "echo: back")
	assert.Equal(t, okPid, s.Pids()["ok"])
	assert.Equal(t, ts, func() []*tools.Tool { ts2, _ := s.Tools(ctxT(t)); return ts2 }(), "a later call offers the same tools")
}

func TestFailedStartWaitsItsBackoff(t *testing.T) {
	cfg := selfServer(t, "exit")
	starts := filepath.Join(t.TempDir(), "starts")
	cfg.Env["TEST_STARTS_FILE"] = starts
	count := func() int {
		b, err := os.ReadFile(starts)
		require.NoError(t, err)
		return strings.Count(string(b), "start\n")
	}
	s := newSet(t, map[string]ServerConfig{"quit": cfg}, Options{Backoff: time.Hour})
	_, status := s.Tools(ctxT(t))
	require.Error(t, status[0].Err)
	assert.Equal(t, 1, count())
	// One failure: tried again at once; it fails again.
	_, status = s.Tools(ctxT(t))
	require.Error(t, status[0].Err)
	last := status[0].Err.Error()
	assert.Equal(t, 2, count())
	// Two failures: the next try waits the backoff (an hour here), so
	// this call does not start it and reports the last failure (the
	// second start's: how the client saw the exit, EOF or a closed pipe,
	// can differ from the first's).
	_, status = s.Tools(ctxT(t))
	require.Error(t, status[0].Err)
	assert.Equal(t, last, status[0].Err.Error())
	assert.Equal(t, 2, count(), "no start before the backoff has passed")
}

func TestBackoff(t *testing.T) {
	o := Options{Backoff: time.Second}
	assert.Equal(t, time.Duration(0), o.backoff(1))
	assert.Equal(t, time.Second, o.backoff(2))
	assert.Equal(t, 4*time.Second, o.backoff(4))
	assert.Equal(t, MaxBackoff, o.backoff(20))
}

func TestToolErrorKeepsServer(t *testing.T) {
	s := newSet(t, map[string]ServerConfig{"t": selfServer(t, "serve")}, Options{})
	ts, _ := s.Tools(ctxT(t))
	pid := s.Pids()["t"]
	r := call(t, find(ts, "mcp__t__fail"), `{"text":"x"}`)
	assert.True(t, r.IsError)
	assert.Contains(t, r.String(), "failing on purpose: x")
	assert.Equal(t, pid, s.Pids()["t"])
}

func TestNoOrphans(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	cfg := selfServer(t, "child")
	cfg.Env["TEST_CHILD_PID_FILE"] = pidFile
	s := newSet(t, map[string]ServerConfig{"t": cfg}, Options{})
	_, status := s.Tools(ctxT(t))
	require.NoError(t, status[0].Err)
	pid := s.Pids()["t"]
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	child, err := strconv.Atoi(string(b))
	require.NoError(t, err)
	require.False(t, processGone(child))
	require.NoError(t, s.Close())
	waitGone(t, pid)
	waitGone(t, child)
}

func TestSecretsExpandedAndRedacted(t *testing.T) {
	env := map[string]string{"SECRET_TOKEN": "s3cr3t-value"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg := selfServer(t, "serve")
	cfg.Env["TEST_SECRET_ECHO"] = "${SECRET_TOKEN}"
	s := newSet(t, map[string]ServerConfig{
		"t":       cfg,
		"missing": {Command: []string{"x"}, Env: map[string]string{"A": "${NOT_SET_ANYWHERE}"}},
		"leak":    {Command: []string{"/nonexistent/${SECRET_TOKEN}"}},
	}, Options{LookupEnv: lookup})
	ts, status := s.Tools(ctxT(t))
	byName := map[string]Status{}
	for _, st := range status {
		byName[st.Server] = st
	}
	require.NoError(t, byName["t"].Err)
	r := call(t, find(ts, "mcp__t__echo"), `{"text":"x"}`)
	assert.Contains(t, r.String(), "s3cr3t-value", "the server got the expanded value")
	require.Error(t, byName["missing"].Err)
	assert.Contains(t, byName["missing"].Err.Error(), "env A: ${NOT_SET_ANYWHERE} is not set in july's environment")
	require.Error(t, byName["leak"].Err)
	assert.NotContains(t, byName["leak"].Err.Error(), "s3cr3t-value")
	assert.Contains(t, byName["leak"].Err.Error(), "[redacted]")
	var se *ServerError
	assert.True(t, errors.As(byName["leak"].Err, &se))
}
