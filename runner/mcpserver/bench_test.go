package mcpserver

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var benchRead = &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"path": "/a.txt"}}

func benchCalls(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	for range 20 { // warm up
		cs.CallTool(ctx, benchRead)
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := cs.CallTool(ctx, benchRead)
		if err != nil || r.IsError {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkMCPReadInMemory is a Read of a small file through the go-sdk
// client and server over an in-memory pipe: the MCP layers without a
// process boundary.
func BenchmarkMCPReadInMemory(b *testing.B) {
	srv := openServer(b, fixtureAgent(b))
	benchCalls(b, connect(b, srv))
}

// BenchmarkMCPReadStdio is the round trip to a `july mcp DIR` process
// over its stdin and stdout, with the go-sdk client.
func BenchmarkMCPReadStdio(b *testing.B) {
	july := buildJuly(b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	b.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, july, "mcp", fixtureAgent(b))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	benchCalls(b, cs)
}

// BenchmarkMCPReadHTTP is the round trip to a `july mcp --http` process
// over loopback streamable HTTP, with the go-sdk client.
func BenchmarkMCPReadHTTP(b *testing.B) {
	url := startHTTP(b, buildJuly(b), fixtureAgent(b))
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	benchCalls(b, cs)
}

// BenchmarkMCPReadHTTPInProcess is the same over an in-process
// httptest server (loopback TCP, no second process).
func BenchmarkMCPReadHTTPInProcess(b *testing.B) {
	srv := openServer(b, fixtureAgent(b))
	hs := httptest.NewServer(srv.HTTPHandler())
	b.Cleanup(hs.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	benchCalls(b, cs)
}

// TestNPMClientRoundTrip reports the npm client's mean Read round trip
// over stdio and HTTP (run with -v; JULY_NPM_BENCH=N sets the calls, default 200).
func TestNPMClientRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	node := nodeClient(t)
	july := buildJuly(t)
	spec := map[string]any{"bench": map[string]any{"name": "Read", "arguments": map[string]any{"path": "/a.txt"}, "n": 200}}
	stdio := runClient(t, node, spec, "stdio", july, "mcp", fixtureAgent(t))
	http := runClient(t, node, spec, "http", startHTTP(t, july, fixtureAgent(t)))
	for name, out := range map[string]clientOutput{"stdio": stdio, "http": http} {
		require.NotNil(t, out.Bench, "%s bench", name)
		require.Equal(t, 200, out.Bench.N, "%s bench = %+v", name, out.Bench)
		require.Positive(t, out.Bench.NsPerCall, "%s bench = %+v", name, out.Bench)
		t.Logf("npm client Read round trip over %s: %.0f µs/call (n=%d)", name, out.Bench.NsPerCall/1e3, out.Bench.N)
	}
}
