package mcpclient

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as a small MCP server (over stdio) whose
// behaviour JULY_TEST_MCP_SERVER picks, for the faults a real server
// rarely shows on demand.
func TestMain(m *testing.M) {
	if mode := os.Getenv("JULY_TEST_MCP_SERVER"); mode != "" {
		serveTest(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text"`
}

type sizeIn struct {
	Bytes int `json:"bytes"`
}

func serveTest(mode string) {
	if f := os.Getenv("TEST_STARTS_FILE"); f != "" {
		// One line per start, for tests that count restarts.
		if w, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(w, "start")
			w.Close()
		}
	}
	switch mode {
	case "hang":
		time.Sleep(time.Hour)
		return
	case "garbage":
		fmt.Println("this is not JSON-RPC")
		fmt.Fprintln(os.Stderr, "garbage server: printed garbage")
		time.Sleep(time.Hour)
		return
	case "exit":
		fmt.Fprintln(os.Stderr, "exit server: giving up")
		os.Exit(3)
	case "fail-first":
		// The first start (no TEST_MARKER_FILE yet) fails; later ones serve.
		marker := os.Getenv("TEST_MARKER_FILE")
		if _, err := os.Stat(marker); err != nil {
			os.WriteFile(marker, []byte("started once\n"), 0o644)
			fmt.Fprintln(os.Stderr, "fail-first server: failing my first start")
			os.Exit(4)
		}
	}
	if d, err := time.ParseDuration(os.Getenv("TEST_START_SLEEP")); err == nil {
		// A start that takes a fixed time without using the CPU.
		time.Sleep(d)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo text.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text + " " + os.Getenv("TEST_SECRET_ECHO")}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Pretend to write."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wrote " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "huge", Description: "Return many bytes.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in sizeIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Exit mid-call.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "die: exiting on request")
			os.Exit(7)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Answer with a tool error."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("failing on purpose: %s", in.Text)
		})
	// A schema providers refuse: a top-level anyOf.
	s.AddTool(&mcp.Tool{Name: "bad-schema", Description: "Refused.", InputSchema: map[string]any{
		"type": "object", "anyOf": []any{map[string]any{"required": []any{"a"}}, map[string]any{"required": []any{"b"}}},
	}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	if mode == "child" {
		// A grandchild in the same process group, to be killed with it.
		c := exec.Command("sleep", "3600")
		if err := c.Start(); err == nil {
			os.WriteFile(os.Getenv("TEST_CHILD_PID_FILE"), fmt.Appendf(nil, "%d", c.Process.Pid), 0o644)
		}
	}
	s.Run(context.Background(), &mcp.StdioTransport{})
}
