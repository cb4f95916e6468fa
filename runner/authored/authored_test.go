package authored_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/authored"
	"github.com/julyfs/julyfs/runner/tools"
)

// agentDir writes files (path relative to the agent directory -> contents;
// a .sh or .py file is made executable) and returns the directory.
func agentDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, ".sh") || strings.HasSuffix(name, ".py") {
			mode = 0o755
		}
		require.NoError(t, os.WriteFile(p, []byte(body), mode))
	}
	return dir
}

// load loads the one tool of dir, with no problem.
func load(t *testing.T, dir string, s authored.Session) *tools.Tool {
	t.Helper()
	defs, ps := authored.Load(dir)
	require.Empty(t, ps)
	require.Len(t, defs, 1)
	return defs[0].Tool(s)
}

func call(t *testing.T, tool *tools.Tool, args string) *tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := tool.Run(ctx, json.RawMessage(args))
	require.NoError(t, err)
	return r
}

func TestShellToolReadsStdinAndEnv(t *testing.T) {
	dir := agentDir(t, map[string]string{
		"tools/echo.yaml": `description: Echo the input and the environment.
inputSchema:
  type: object
  properties:
    text: {type: string}
command: [tools/echo.sh, one]
effect: read
env: {GREETING: "hello ${JULYFS_TEST_AUTHORED}"}
`,
		"tools/echo.sh": "#!/bin/sh\nprintf 'arg=%s stdin=' \"$1\"; cat; echo; env | sort | grep -v '^PWD=\\|^SHLVL=\\|^_='\n",
	})
	t.Setenv("JULYFS_TEST_AUTHORED", "world")
	t.Setenv("JULYFS_NOT_PASSED", "secret")
	tool := load(t, dir, authored.Session{ID: func() string { return "ses_1" }, Tree: func() string { return "/mnt/t" }})
	assert.Equal(t, "echo", tool.Name)
	assert.Equal(t, tools.EffectRead, tool.Effect)
	r := call(t, tool, `{"text":"hi"}`)
	require.False(t, r.IsError, r.String())
	assert.Equal(t, "arg=one stdin={\"text\":\"hi\"}\nGREETING=hello world\nJULY_SESSION_ID=ses_1\nJULY_TREE=/mnt/t", r.String())
}

func TestPythonTool(t *testing.T) {
	dir := agentDir(t, map[string]string{
		"tools/count.yaml": `description: Count words.
inputSchema: {type: object, required: [text], properties: {text: {type: string}}}
command: [python3, count.py]
cwd: tools
`,
		"tools/count.py": "import json, os, sys\nargs = json.load(sys.stdin)\nprint(len(args['text'].split()), os.path.basename(os.getcwd()), os.environ.get('JULY_TREE', '-'))\n",
	})
	tool := load(t, dir, authored.Session{})
	assert.Equal(t, tools.EffectWrite, tool.Effect, "the default effect is write")
	r := call(t, tool, `{"text":"one two three"}`)
	require.False(t, r.IsError, r.String())
	// JULY_TREE is absent when the tree is not mounted. (python3 may be
	// a pyenv shim that adds its own variables: the environment is
	// checked by the shell test.)
	assert.Equal(t, "3 tools -", r.String())
}

func TestToolFailures(t *testing.T) {
	dir := agentDir(t, map[string]string{
		"tools/fail.yaml":   "description: Fails.\ncommand: [sh, -c, 'echo partial; echo it broke >&2; exit 3']\n",
		"tools/quiet.yaml":  "description: Fails on stdout only.\ncommand: [sh, -c, 'echo only stdout; exit 1']\n",
		"tools/gone.yaml":   "description: Not installed.\ncommand: [julyfs-no-such-command-xyz]\n",
		"tools/rel.yaml":    "description: Missing script.\ncommand: [tools/missing.sh]\n",
		"tools/noexec.yaml": "description: Not executable.\ncommand: [tools/plain.txt]\n",
		"tools/plain.txt":   "#!/bin/sh\necho hi\n",
	})
	defs, ps := authored.Load(dir)
	require.Empty(t, ps)
	byName := map[string]*tools.Tool{}
	checks := map[string]string{}
	for _, d := range defs {
		byName[d.Name] = d.Tool(authored.Session{})
		if p := d.CheckCommand(); p != nil {
			checks[d.Name] = p.Error()
		}
	}
	assert.Equal(t, map[string]string{
		"gone":   `tools/gone.yaml:2: command "julyfs-no-such-command-xyz" is not on PATH`,
		"rel":    `tools/rel.yaml:2: command "tools/missing.sh": no such file or directory`,
		"noexec": `tools/noexec.yaml:2: command "tools/plain.txt" is not executable (chmod +x it, or run it with its interpreter: [python3, tools/plain.txt])`,
	}, checks)

	r := call(t, byName["fail"], `{}`)
	assert.True(t, r.IsError)
	assert.Equal(t, "fail (tools/fail.yaml): exit status 3\n\nit broke", r.String())
	r = call(t, byName["quiet"], `{}`)
	assert.True(t, r.IsError)
	assert.Equal(t, "quiet (tools/quiet.yaml): exit status 1\n\nonly stdout", r.String())
	r = call(t, byName["gone"], `{}`)
	assert.True(t, r.IsError)
	assert.Equal(t, `gone (tools/gone.yaml): command "julyfs-no-such-command-xyz" is not on PATH`, r.String())
	r = call(t, byName["noexec"], `{}`)
	assert.True(t, r.IsError)
	assert.Contains(t, r.String(), "is not executable")
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	dir := agentDir(t, map[string]string{
		"tools/hang.yaml": "description: Hangs.\ncommand: [sh, -c, 'sleep 300 & echo $! > " + pidFile + "; echo waiting >&2; wait']\ntimeout: 500ms\n",
	})
	r := call(t, load(t, dir, authored.Session{}), `{}`)
	assert.True(t, r.IsError)
	assert.Equal(t, "hang (tools/hang.yaml): timed out after 500ms and was killed with its process group (raise timeout: in tools/hang.yaml, at most 10m0s)\n\nwaiting", r.String())
	assertDead(t, pidFile)
}

func TestChildOutlivingTheToolIsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The child keeps stdout open: without the group kill the call would
	// wait for it.
	dir := agentDir(t, map[string]string{
		"tools/fork.yaml": "description: Leaves a child.\ncommand: [sh, -c, 'sleep 300 & echo $! > " + pidFile + "; echo started']\n",
	})
	r := call(t, load(t, dir, authored.Session{}), `{}`)
	require.False(t, r.IsError, r.String())
	assert.Equal(t, "started", r.String())
	assertDead(t, pidFile)
}

// assertDead checks that the process whose pid is in file is gone (or a
// zombie waiting for init): signal 0 fails, or /proc says Z.
func assertDead(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	// SIGKILL is delivered before kill(2) returns, but the exit itself is
	// asynchronous: wait for it, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || zombie(string(stat)) {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d still running after the call: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func zombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	return i >= 0 && strings.HasPrefix(stat[i+1:], " Z")
}

func TestFloodIsCut(t *testing.T) {
	dir := agentDir(t, map[string]string{
		"tools/flood.yaml":    "description: Floods.\ncommand: [sh, -c, 'head -c 10000000 /dev/zero | tr \"\\\\0\" x']\n",
		"tools/errflood.yaml": "description: Floods stderr and fails.\ncommand: [sh, -c, 'head -c 10000000 /dev/zero | tr \"\\\\0\" y >&2; exit 2']\n",
	})
	defs, ps := authored.Load(dir)
	require.Empty(t, ps)
	require.Len(t, defs, 2)
	r := call(t, defs[1].Tool(authored.Session{MaxOutput: 1000}), `{}`)
	require.False(t, r.IsError, r.String()[:100])
	assert.Equal(t, strings.Repeat("x", 1000)+"\n\n[Output cut: showing the first 1000 of 10000000 bytes of stdout.]", r.String())
	r = call(t, defs[0].Tool(authored.Session{}), `{}`)
	assert.True(t, r.IsError)
	assert.Equal(t, "errflood (tools/errflood.yaml): exit status 2\n\n"+strings.Repeat("y", authored.DefaultMaxOutput)+
		"\n\n[Output cut: showing the first 30000 of 10000000 bytes of stderr.]", r.String())
}

func TestCancelKillsTheCall(t *testing.T) {
	dir := agentDir(t, map[string]string{"tools/slow.yaml": "description: Slow.\ncommand: [sleep, '300']\n"})
	tool := load(t, dir, authored.Session{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	r, err := tool.Run(ctx, json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Equal(t, "slow (tools/slow.yaml): cancelled; it was killed with its process group", r.String())
}

func TestLoadProblems(t *testing.T) {
	dir := agentDir(t, map[string]string{
		"tools/a.yaml": `description: A.
command: [true]
inputSchema:
  type: object
  propertes: {x: {type: string}}
`,
		"tools/b.yaml":      "description: B.\ncommand: echo hi\neffect: maybe\ntimeout: 11m\nretries: 3\n",
		"tools/c.yaml":      "command: [true]\ninputSchema: {type: string}\nenv: {JULY_TREE: x, 1BAD: y}\ncwd: nowhere\n",
		"tools/d.yaml":      "description: D\n  bad: indent\n",
		"tools/e.yaml":      "- a list\n",
		"tools/f.yaml":      "description: F.\ncommand: [true]\ninputSchema:\n  type: object\n  properties: {n: {type: integer, minimum: x}}\n",
		"tools/mcp__x.yaml": "description: X.\ncommand: [true]\n",
		"tools/ok.yaml":     "description: fine\ncommand: [\"true\"]\ntimeout: 1s\n",
		"tools/notes.md":    "not a definition\n",
	})
	defs, ps := authored.Load(dir)
	var got []string
	for _, p := range ps {
		got = append(got, p.Error())
	}
	assert.Equal(t, []string{
		`tools/a.yaml:4: inputSchema: unknown JSON Schema keyword "propertes"`,
		`tools/b.yaml:2: command must be a non-empty list of strings (the argv), such as [python3, tools/b.py]`,
		`tools/b.yaml:3: effect "maybe": want read or write`,
		`tools/b.yaml:4: timeout 11m0s is out of range: give more than 0 and at most 10m0s`,
		`tools/b.yaml:5: unknown field "retries" (known: description, inputSchema, command, effect, timeout, env, cwd)`,
		`tools/c.yaml:2: inputSchema: must have type: object (the arguments are one JSON object)`,
		`tools/c.yaml:3: env: JULY_TREE is set by july for every call; remove it`,
		`tools/c.yaml:3: env: "1BAD" is not a variable name`,
		`tools/c.yaml:4: cwd "nowhere" is not a directory (relative to the agent directory)`,
		`tools/c.yaml:1: description is required: say what the tool does, for the model`,
		`tools/d.yaml:2: mapping values are not allowed in this context`,
		`tools/e.yaml: want a mapping with description, command, ... (see docs/tools.md)`,
		`tools/f.yaml:4: inputSchema: json: cannot unmarshal string into field properties.minimum of type float64`,
		`tools/mcp__x.yaml: "mcp__x" is not a tool name: use letters, digits, _ and - (at most 64, starting with a letter, not mcp__); rename the file`,
	}, got)
	require.Len(t, defs, 1)
	assert.Equal(t, "ok", defs[0].Name)
	assert.Equal(t, time.Second, defs[0].Timeout)
}
