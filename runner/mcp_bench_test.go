package runner

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/julyfs/julyfs/runner/mcpclient"
)

// BenchmarkMCPCall compares one call of server-everything's echo over
// stdio made directly with the go-sdk client and made through july (the
// dispatcher, the mcp__every__echo tool, the result conversion).
func BenchmarkMCPCall(b *testing.B) {
	bin := everythingBin(&testing.T{})
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "stdio")}, nil)
		require.NoError(b, err)
		defer cs.Close()
		b.ResetTimer()
		for b.Loop() {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
			if err != nil || r.IsError {
				b.Fatal(err, r)
			}
		}
	})
	b.Run("july", func(b *testing.B) {
		set := mcpclient.NewSet(map[string]mcpclient.ServerConfig{"every": {Command: []string{bin, "stdio"}}}, mcpclient.Options{})
		defer set.Close()
		ts, status := set.Tools(ctx)
		require.NoError(b, status[0].Err)
		d, err := NewDispatcher(ts, DispatchOptions{})
		require.NoError(b, err)
		args := json.RawMessage(`{"message":"hi"}`)
		b.ResetTimer()
		for b.Loop() {
			if r := d.Call(ctx, "mcp__every__echo", args); r.IsError {
				b.Fatal(r.String())
			}
		}
	})
}
