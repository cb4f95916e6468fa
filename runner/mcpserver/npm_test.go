package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The npm client lives in runner/testdata/mcpclient; scripts/test installs
// it with npm ci.
var clientDir = filepath.Join("..", "testdata", "mcpclient")

// nodeClient returns the path of node, skipping the test when node is not
// installed, and fails when the client's packages are missing.
func nodeClient(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		require.Empty(t, os.Getenv("CI"), "node is not installed, and CI must run the MCP tests: scripts/test expects node and npm on the machine")
		t.Skip("node is not installed: the MCP test with the npm client (@modelcontextprotocol/sdk) needs node and npm; scripts/test installs the client")
	}
	_, err = os.Stat(filepath.Join(clientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	require.NoError(t, err, "the npm MCP client is not installed: run `npm ci` in %s (scripts/test does)", clientDir)
	return node
}

// binDir holds the july binary built once for the package's tests.
var (
	binDir    string
	buildOnce sync.Once
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// buildJuly builds cmd/july once into a temporary directory.
func buildJuly(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "july-test-"); buildErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(binDir, "july"), "../../cmd/july").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build cmd/july: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return filepath.Join(binDir, "july")
}

// clientOutput is what client.mjs prints.
type clientOutput struct {
	Server       map[string]any   `json:"server"`
	Instructions string           `json:"instructions"`
	Tools        []any            `json:"tools"`
	Results      []map[string]any `json:"results"`
	Bench        *struct {
		N         int     `json:"n"`
		NsPerCall float64 `json:"nsPerCall"`
	} `json:"bench"`
}

// runClient runs client.mjs with args after writing spec as its calls
// file, bounded by a timeout, and decodes its output.
func runClient(t testing.TB, node string, spec any, args ...string) clientOutput {
	t.Helper()
	calls := filepath.Join(t.TempDir(), "calls.json")
	js, err := json.Marshal(spec)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(calls, js, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"client.mjs", args[0], calls}, args[1:]...)...)
	cmd.Dir = clientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	require.NoError(t, cmd.Run(), "node client.mjs %s\nstderr:\n%s", strings.Join(args, " "), stderr.String())
	var out clientOutput
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "client output:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	return out
}

func checkClientOutput(t *testing.T, out clientOutput) {
	t.Helper()
	assert.Equal(t, "july/fixture", out.Server["name"], "server %v", out.Server)
	assert.Equal(t, "Fixture instructions.\n", out.Instructions, "instructions")
	checkTools(t, out.Tools)
	require.Len(t, out.Results, len(wantCalls), "results")
	for i, w := range wantCalls {
		checkResult(t, i, w, out.Results[i]["result"].(map[string]any))
	}
}

// TestNPMClientStdio lists and calls every tool with the official
// TypeScript MCP client, speaking to `july mcp DIR` over stdio.
func TestNPMClientStdio(t *testing.T) {
	node := nodeClient(t)
	july := buildJuly(t)
	out := runClient(t, node, map[string]any{"calls": wantCalls}, "stdio", july, "mcp", fixtureAgent(t))
	checkClientOutput(t, out)
}

// TestNPMClientHTTP does the same over streamable HTTP, against `july mcp
// --http 127.0.0.1:0 DIR`.
func TestNPMClientHTTP(t *testing.T) {
	node := nodeClient(t)
	url := startHTTP(t, buildJuly(t), fixtureAgent(t))
	out := runClient(t, node, map[string]any{"calls": wantCalls}, "http", url)
	checkClientOutput(t, out)
}

// startHTTP starts `july mcp --http 127.0.0.1:0 dir`, waits (bounded) for
// the address it prints, and stops it at cleanup.
func startHTTP(t testing.TB, july, dir string) string {
	t.Helper()
	cmd := exec.Command(july, "mcp", "--http", "127.0.0.1:0", dir)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			assert.Fail(t, "july mcp --http did not stop on SIGTERM")
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), " at "); ok && strings.HasPrefix(url, "http://") {
				urls <- url
				break
			}
		}
		io.Copy(io.Discard, stderr)
		exited <- cmd.Wait()
	}()
	select {
	case url := <-urls:
		return url
	case err := <-exited:
		exited <- err
		require.FailNow(t, "july mcp --http exited", "%v", err)
	case <-time.After(time.Minute):
		require.FailNow(t, "july mcp --http printed no address within a minute")
	}
	return ""
}
