package main

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pluginAgent builds the plugins an agent mounts (the test plugin of
// package plugins, twice under two names, and julyfs-archive) and writes
// an agent whose root is a local tree with three plugin mounts beside it:
//
//	/        local ./tree (/a.txt = "hi")
//	/p       faultplugin, the test plugin's faults tree (/a.txt = "a";
//	         Read /crash exits the plugin, Stat /hang never returns)
//	/w       testplugin, a writable temp tree inside the plugin
//	/dist    julyfs-archive over ./dist.zip (relative to the agent)
func pluginAgent(t *testing.T) (agent, bin string) {
	t.Helper()
	bin = t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+"/",
		"github.com/julyfs/julyfs/plugins/internal/testplugin",
		"github.com/julyfs/julyfs/cmd/julyfs-archive")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building the plugins: %s", out)
	data, err := os.ReadFile(filepath.Join(bin, "testplugin"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(bin, "faultplugin"), data, 0o755))

	agent = t.TempDir()
	yaml := "name: plugged\nroot:\n" +
		"  /: { local: ./tree }\n" +
		"  /p: { plugin: { path: " + bin + "/faultplugin, args: { mode: faults } } }\n" +
		"  /w: { plugin: " + bin + "/testplugin }\n" +
		"  /dist: { plugin: { path: " + bin + "/julyfs-archive, args: { file: dist.zip } } }\n"
	require.NoError(t, os.WriteFile(filepath.Join(agent, "agent.yaml"), []byte(yaml), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(agent, "tree"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(agent, "tree", "a.txt"), []byte("hi\n"), 0o644))
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, err := zw.Create("docs/README.md")
	require.NoError(t, err)
	_, err = w.Write([]byte("# dist\nunpacked by the plugin\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(agent, "dist.zip"), zbuf.Bytes(), 0o644))
	return agent, bin
}

// TestPluginMountCall: july tools and july call on an agent.yaml with
// plugin mounts start the plugins, serve their trees beside the local
// one, and leave no plugin process behind.
func TestPluginMountCall(t *testing.T) {
	agent, bin := pluginAgent(t)

	out, errOut, code := julyRun(t, "tools", agent)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `"tree": "/=local:`+filepath.Join(agent, "tree")+`, /p=plugin:`+bin+`/faultplugin?mode=faults, /w=plugin:`+bin+`/testplugin, /dist=plugin:`+bin+`/julyfs-archive?file=dist.zip"`)

	for _, c := range []struct{ tool, args, want string }{
		{"Read", `{"path":"/p/a.txt"}`, "     1\ta\n"},
		{"Read", `{"path":"/dist/docs/README.md"}`, "     1\t# dist\n     2\tunpacked by the plugin\n"},
		{"Grep", `{"pattern":"unpacked","path":"/","output_mode":"content"}`, "/dist/docs/README.md:2:unpacked by the plugin\n"},
		{"Write", `{"path":"/w/new.txt","contents":"into the plugin"}`, "Wrote contents to /w/new.txt\n"},
	} {
		out, errOut, code := julyRun(t, "call", agent, c.tool, c.args)
		if assert.Equal(t, 0, code, "%s %s: %s", c.tool, c.args, errOut) {
			assert.Equal(t, c.want, out, "%s %s", c.tool, c.args)
		}
	}
	out, errOut, code = julyRun(t, "call", agent, "Glob", `{"pattern":"**/*.md"}`)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "/dist/docs/README.md")

	// A write to the read-only archive fails with the contract's message.
	_, errOut, code = julyRun(t, "call", agent, "Write", `{"path":"/dist/x.md","contents":"x"}`)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "read-only mount: /dist/x.md")

	// A plugin that dies during the call: one line naming the plugin and
	// the call, exit 1.
	_, errOut, code = julyRun(t, "call", agent, "Read", `{"path":"/p/crash"}`)
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "/p/crash: plugin faultplugin: crashed during Read /crash; the next call restarts it\n")

	noPlugins(t, bin) // july call leaves no plugin running
}

// TestPluginMountFailsToStart: a plugin mount that cannot start does not
// fail the command: the other mounts serve, every call under the broken
// mount answers one line naming the plugin and the cause, and the bind
// warns once on stderr, naming the agent.yaml line and the mount.
func TestPluginMountFailsToStart(t *testing.T) {
	_, bin := pluginAgent(t)
	for _, c := range []struct{ mount, want string }{
		{"{ plugin: ./nope }", "plugin nope: AGENT/nope does not exist"},
		{"{ plugin: ./notexec }", "plugin notexec: AGENT/notexec is not executable"},
		{"{ plugin: ./notplugin }", "plugin notplugin: AGENT/notplugin is not a julyfs plugin"},
		{"{ plugin: { path: " + bin + "/testplugin, args: { mode: fail, why: x } } }", "plugin testplugin: bad parameter: fail=x"},
		{"{ plugin: { path: " + bin + "/julyfs-archive, args: { file: bad.zip } } }", "plugin julyfs-archive: bad.zip is not a valid zip archive: zip: not a valid zip file"},
		{"{ plugin: { path: " + bin + "/testplugin, sha256: " + strings.Repeat("0", 64) + " } }", "plugin testplugin: checksum mismatch: " + bin + "/testplugin has sha256 "},
	} {
		agent := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(agent, "agent.yaml"), []byte("name: bad\nroot:\n  /: { local: ./tree }\n  /p: "+c.mount+"\n"), 0o644))
		require.NoError(t, os.MkdirAll(filepath.Join(agent, "tree"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(agent, "tree", "a.txt"), []byte("hi\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(agent, "bad.zip"), []byte("not a zip"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(agent, "notexec"), []byte("#!/bin/sh\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(agent, "notplugin"), []byte("#!/bin/sh\necho hello\n"), 0o755))
		want := strings.ReplaceAll(c.want, "AGENT", agent)
		warning := "warning: agent.yaml:4: mount /p: " + want

		// july call: the local mount serves; the broken one answers the line.
		out, errOut, code := julyRun(t, "call", agent, "Read", `{"path":"/a.txt"}`)
		if assert.Equal(t, 0, code, errOut) {
			assert.Equal(t, "     1\thi\n", out)
		}
		assert.Equal(t, 1, strings.Count(errOut, warning), "one warning: %s", errOut)
		_, errOut, code = julyRun(t, "call", agent, "Read", `{"path":"/p/x.txt"}`)
		assert.Equal(t, 1, code, errOut)
		line := errOut[strings.LastIndex(strings.TrimSuffix(errOut, "\n"), "\n")+1:]
		assert.True(t, strings.HasPrefix(line, "/p/x.txt: "+want), "the error is the last line, whole: %q", errOut)

		// july mcp: serves, and answers the broken mount's calls with the line.
		call, stderr := mcpSession(t, agent)
		text, isErr := call("Read", map[string]any{"path": "/a.txt"})
		assert.False(t, isErr, text)
		assert.Equal(t, "     1\thi", text)
		text, isErr = call("Read", map[string]any{"path": "/p/x.txt"})
		assert.True(t, isErr)
		assert.True(t, strings.HasPrefix(text, "/p/x.txt: "+want), "%q", text)
		text, isErr = call("Read", map[string]any{"path": "/a.txt"})
		assert.False(t, isErr, text)
		assert.Contains(t, stderr.String(), warning)
	}
	noPlugins(t, bin)
}

// TestPluginMountStartsLate: a plugin mount whose binary does not exist
// yet answers its calls with the start error; once the binary is there a
// later call (after the backoff) starts it, in the same july mcp.
func TestPluginMountStartsLate(t *testing.T) {
	_, bin := pluginAgent(t)
	agent := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(agent, "agent.yaml"), []byte("name: late\nroot:\n  /: { temp: {} }\n  /p: { plugin: { path: ./late, args: { mode: faults } } }\n"), 0o644))
	call, stderr := mcpSession(t, agent)
	text, isErr := call("Read", map[string]any{"path": "/p/a.txt"})
	assert.True(t, isErr)
	assert.Equal(t, "/p/a.txt: plugin late: "+agent+"/late does not exist", text)
	assert.Contains(t, stderr.String(), "warning: agent.yaml:4: mount /p: plugin late: "+agent+"/late does not exist")

	data, err := os.ReadFile(filepath.Join(bin, "testplugin"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(agent, "late.tmp"), data, 0o755))
	require.NoError(t, os.Rename(filepath.Join(agent, "late.tmp"), filepath.Join(agent, "late")))
	deadline := time.Now().Add(30 * time.Second)
	for {
		text, isErr = call("Read", map[string]any{"path": "/p/a.txt"})
		if !isErr || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.False(t, isErr, "the plugin never started: %s; july's stderr:\n%s", text, stderr)
	assert.Equal(t, "     1\ta", text)
}

// TestValidatePluginMount: july validate, which does not run plugins,
// reports a plugin mount whose binary is missing, not executable or not
// the one its sha256 pins, naming the agent.yaml line and the mount; a
// binary that is not a plugin passes (only running it tells).
func TestValidatePluginMount(t *testing.T) {
	good, bin := pluginAgent(t)
	_, errOut, code := julyRun(t, "validate", good)
	assert.Equal(t, 0, code, errOut)
	for _, c := range []struct{ mount, want string }{
		{"{ plugin: ./nope }", "plugin nope: AGENT/nope does not exist"},
		{"{ plugin: ./notexec }", "plugin notexec: AGENT/notexec is not executable"},
		{"{ plugin: { path: " + bin + "/testplugin, sha256: " + strings.Repeat("0", 64) + " } }", "plugin testplugin: checksum mismatch: " + bin + "/testplugin has sha256 "},
		{"{ plugin: ./notplugin }", ""},
	} {
		agent := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(agent, "agent.yaml"), []byte("name: bad\nroot:\n  /: { temp: {} }\n  /p: "+c.mount+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(agent, "notexec"), []byte("#!/bin/sh\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(agent, "notplugin"), []byte("#!/bin/sh\necho hello\n"), 0o755))
		out, errOut, code := julyRun(t, "validate", agent)
		if c.want == "" {
			assert.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "ok: agent bad")
			continue
		}
		assert.Equal(t, 1, code, errOut)
		assert.Contains(t, errOut, "agent "+agent+" is invalid:\n  root: agent.yaml:4: mount /p: "+strings.ReplaceAll(c.want, "AGENT", agent), c.mount)
		assert.NotContains(t, out, "ok: agent")
	}
	noPlugins(t, bin)
}

// mcpSession serves agent with july mcp (stdio) and returns a function
// that calls a tool and gives its text and whether it is an error, and
// july's stderr.
func mcpSession(t *testing.T, agent string) (func(tool string, args map[string]any) (string, bool), *lockedBuffer) {
	t.Helper()
	cmd := julyCommand(t, "mcp", agent)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "july's stderr:\n%s", stderr)
	t.Cleanup(func() { cs.Close() })
	return func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err, "%s %v; july's stderr:\n%s", tool, args, stderr)
		var text strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String(), r.IsError
	}, stderr
}

// TestPluginMountDiesMidSession serves the agent over MCP (stdio) and
// kills its plugins in the middle of the session: a plugin that exits
// during a call, and one killed with -9 while it hangs in a call. Each
// such call fails with one line naming the plugin and the call; the
// local mount, the other plugins' mounts and what was written to them are
// untouched; the next call under the dead plugin's mount restarts it.
func TestPluginMountDiesMidSession(t *testing.T) {
	agent, bin := pluginAgent(t)
	cmd := julyCommand(t, "mcp", agent)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })

	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err, "%s %v; july's stderr:\n%s", tool, args, stderr)
		var text strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		return text.String(), r.IsError
	}
	ok := func(tool string, args map[string]any, want string) {
		t.Helper()
		text, isErr := call(tool, args)
		assert.False(t, isErr, "%s %v: %s", tool, args, text)
		assert.Contains(t, text, want, "%s %v", tool, args)
	}

	ok("Read", map[string]any{"path": "/p/a.txt"}, "     1\ta")
	ok("Write", map[string]any{"path": "/w/kept.txt", "contents": "written before the crashes"}, "Wrote")
	ok("Write", map[string]any{"path": "/notes.md", "contents": "on the local mount"}, "Wrote")
	procs := pluginProcesses(t, bin)
	require.Len(t, procs, 3, "one process per plugin mount: %v", procs)
	faultPid := procs[filepath.Join(bin, "faultplugin")]
	require.NotZero(t, faultPid, "%v", procs)

	// 1. The plugin exits during the call.
	text, isErr := call("Read", map[string]any{"path": "/p/crash"})
	assert.True(t, isErr)
	assert.Equal(t, "/p/crash: plugin faultplugin: crashed during Read /crash; the next call restarts it", text)
	ok("Read", map[string]any{"path": "/a.txt"}, "     1\thi")
	ok("Read", map[string]any{"path": "/w/kept.txt"}, "written before the crashes")
	ok("Read", map[string]any{"path": "/dist/docs/README.md"}, "unpacked by the plugin")
	ok("Read", map[string]any{"path": "/p/a.txt"}, "     1\ta") // restarted
	restarted := pluginProcesses(t, bin)[filepath.Join(bin, "faultplugin")]
	assert.NotZero(t, restarted)
	assert.NotEqual(t, faultPid, restarted)

	// 2. kill -9 while the plugin hangs in a call (Stat /hang, which LS
	// makes): the call fails at once instead of hanging.
	type result struct {
		text  string
		isErr bool
	}
	done := make(chan result, 1)
	go func() {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "LS", Arguments: map[string]any{"path": "/p/hang"}})
		if err != nil {
			done <- result{err.Error(), true}
			return
		}
		done <- result{r.Content[0].(*mcp.TextContent).Text, r.IsError}
	}()
	waitFor(t, stderr, "Stat /hang: hanging")
	require.NoError(t, syscall.Kill(restarted, syscall.SIGKILL))
	select {
	case r := <-done:
		assert.True(t, r.isErr)
		assert.Equal(t, "/p/hang: plugin faultplugin: crashed during Stat /hang; the next call restarts it", r.text)
	case <-ctx.Done():
		require.Failf(t, "LS of a killed plugin did not return", "july's stderr:\n%s", stderr)
	}

	// Nothing else was lost; the dead plugin's mount comes back.
	ok("Read", map[string]any{"path": "/notes.md"}, "on the local mount")
	ok("Read", map[string]any{"path": "/w/kept.txt"}, "written before the crashes")
	ok("Grep", map[string]any{"pattern": "unpacked", "path": "/dist", "output_mode": "content"}, "/dist/docs/README.md:2:unpacked by the plugin")
	ok("LS", map[string]any{"path": "/p"}, "a.txt")
	after := pluginProcesses(t, bin)
	assert.Len(t, after, 3, "%v", after)
	assert.Equal(t, procs[filepath.Join(bin, "testplugin")], after[filepath.Join(bin, "testplugin")], "the other plugins kept running")
	assert.Equal(t, procs[filepath.Join(bin, "julyfs-archive")], after[filepath.Join(bin, "julyfs-archive")])
}

// pluginProcesses returns the running processes whose binary is in dir,
// by binary path: the plugins july started from there.
func pluginProcesses(t *testing.T, dir string) map[string]int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	out := map[string]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || filepath.Dir(exe) != dir {
			continue
		}
		if state, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && isZombie(string(state)) {
			continue
		}
		out[exe] = pid
	}
	return out
}

// noPlugins waits until no process runs a binary in dir, at most 10
// seconds (a plugin the kernel kills with its host goes a moment after).
func noPlugins(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		procs := pluginProcesses(t, dir)
		if len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			assert.Failf(t, "plugins still running", "%v", procs)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isZombie reports whether a /proc/PID/stat line is a zombie's (exited,
// not yet reaped).
func isZombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	return i >= 0 && strings.HasPrefix(stat[i+1:], " Z")
}

// waitFor waits until buf holds s, at most 30 seconds.
func waitFor(t *testing.T, buf *lockedBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), s) {
		if time.Now().After(deadline) {
			require.Failf(t, "not seen in 30s", "no %q in 30s; july's stderr:\n%s", s, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lockedBuffer is a bytes.Buffer a child process writes while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
