package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/julyfs/julyfs/runner"
	"github.com/julyfs/julyfs/vfs"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// fixtureAgent writes an agent whose root is a local directory holding a
// few files (one a png) and returns the agent directory.
func fixtureAgent(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string][]byte{
		"agent.yaml": []byte(`name: fixture
root:
  /:
    local: ./tree
`),
		"instructions.md":     []byte("Fixture instructions.\n"),
		"tree/a.txt":          []byte("hi\n"),
		"tree/docs/guide.md":  []byte("# Guide\nTODO: write\n"),
		"tree/img/dot.png":    pngBytes,
		"tree/docs/other.txt": []byte("x\n"),
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	return dir
}

// A call and what its result must be. The calls run in order on one
// session and see each other's writes.
type wantCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`

	text       string // the text content, when not an image
	isError    bool
	image      []byte // the image part's bytes
	structured string // JSON of structuredContent
	thrown     bool   // a protocol error, not a result
}

var wantCalls = []wantCall{
	{Name: "Read", Arguments: map[string]any{"path": "/a.txt"}, text: "     1\thi"},
	{Name: "LS", Arguments: map[string]any{}, text: "/\n  a.txt (3 bytes)\n  docs/\n  img/\n  tmp/"},
	{Name: "Glob", Arguments: map[string]any{"pattern": "**/*.md"}, text: "/docs/guide.md"},
	{Name: "Grep", Arguments: map[string]any{"pattern": "TODO", "output_mode": "content"}, text: "/docs/guide.md:2:TODO: write"},
	{Name: "SemanticSearch", Arguments: map[string]any{"query": "guide"}, text: "No results found."},
	{Name: "Write", Arguments: map[string]any{"file_path": "/new.txt", "fileText": "new"}, text: "Wrote contents to /new.txt"},
	{Name: "StrReplace", Arguments: map[string]any{"path": "/a.txt", "old_string": "hi", "new_string": "yo"},
		text: `{"occurrencesModified":1}`, structured: `{"occurrencesModified":1}`},
	{Name: "Read", Arguments: map[string]any{"path": "/a.txt"}, text: "     1\tyo"},
	{Name: "Delete", Arguments: map[string]any{"path": "/new.txt"}, text: "Deleted /new.txt"},
	{Name: "Read", Arguments: map[string]any{"path": "/img/dot.png"}, image: pngBytes},
	{Name: "Write", Arguments: map[string]any{"path": "/tmp/spill.txt", "contents": "scratch"}, text: "Wrote contents to /tmp/spill.txt"},
	// Error results the model can read.
	{Name: "Read", Arguments: map[string]any{"path": "/new.txt"}, text: "not found: /new.txt", isError: true},
	{Name: "StrReplace", Arguments: map[string]any{"path": "/a.txt", "oldText": "zz", "newText": "x"}, text: vfs.EditNotFound, isError: true},
	{Name: "StrReplace", Arguments: map[string]any{"path": "/a.txt", "oldText": "yo", "newText": "yo"}, text: vfs.EditSame, isError: true},
	{Name: "Grep", Arguments: map[string]any{"pattern": "("}, text: "invalid grep pattern: (", isError: true},
	{Name: "Read", Arguments: map[string]any{}, text: `invalid arguments for Read: required: missing properties: ["path"]`, isError: true},
	{Name: "Glob", Arguments: map[string]any{"pattern": "*", "bogus": true}, text: `invalid arguments for Glob: unexpected additional properties ["bogus"]`, isError: true},
	// Not a tool: the MCP server refuses it at the protocol level.
	{Name: "Bash", Arguments: map[string]any{"command": "ls"}, thrown: true},
}

var wantTools = []string{"Delete", "Glob", "Grep", "LS", "Read", "SemanticSearch", "StrReplace", "Write"}

// checkResult compares a tools/call result, decoded from JSON as the
// client saw it, with w.
func checkResult(t *testing.T, i int, w wantCall, got map[string]any) {
	t.Helper()
	if _, thrown := got["thrown"]; !assert.Equal(t, w.thrown, thrown, "call %d %s: thrown (%v)", i, w.Name, got["thrown"]) {
		return
	}
	if w.thrown {
		return
	}
	isError, _ := got["isError"].(bool)
	assert.Equal(t, w.isError, isError, "call %d %s: isError (%v)", i, w.Name, got)
	content, _ := got["content"].([]any)
	require.Len(t, content, 1, "call %d %s: content, want one part", i, w.Name)
	part := content[0].(map[string]any)
	if w.image != nil {
		assert.Equal(t, "image", part["type"], "call %d %s: part = %v, want a png image", i, w.Name, part)
		assert.Equal(t, "image/png", part["mimeType"], "call %d %s: part = %v, want a png image", i, w.Name, part)
		var data []byte
		if s, ok := part["data"].(string); ok {
			json.Unmarshal([]byte(`"`+s+`"`), &data) // base64
		}
		assert.Equal(t, w.image, data, "call %d %s: image bytes", i, w.Name)
		return
	}
	assert.Equal(t, "text", part["type"], "call %d %s(%v): part type", i, w.Name, w.Arguments)
	assert.Equal(t, w.text, part["text"], "call %d %s(%v): text", i, w.Name, w.Arguments)
	sc, has := got["structuredContent"]
	switch {
	case w.structured == "" && has:
		assert.Fail(t, "unexpected structuredContent", "call %d %s: %v", i, w.Name, sc)
	case w.structured != "":
		js, _ := json.Marshal(sc)
		assert.Equal(t, w.structured, string(js), "call %d %s: structuredContent", i, w.Name)
	}
}

// checkTools compares the listed tools, as JSON, with the served set and
// their annotations.
func checkTools(t *testing.T, listed []any) {
	t.Helper()
	var names []string
	for _, x := range listed {
		tool := x.(map[string]any)
		name := tool["name"].(string)
		names = append(names, name)
		ann, _ := tool["annotations"].(map[string]any)
		readOnly, _ := ann["readOnlyHint"].(bool)
		destructive, hasDestructive := ann["destructiveHint"].(bool)
		wantRead := slices.Contains([]string{"Read", "LS", "Grep", "Glob", "SemanticSearch"}, name)
		assert.Equal(t, wantRead, readOnly, "%s annotations = %v, want readOnlyHint %v", name, ann, wantRead)
		if wantRead {
			assert.False(t, hasDestructive, "%s annotations = %v, want destructiveHint only on writes", name, ann)
		} else {
			assert.True(t, hasDestructive && destructive, "%s annotations = %v, want destructiveHint on writes", name, ann)
		}
		schema, _ := tool["inputSchema"].(map[string]any)
		assert.Equal(t, "object", schema["type"], "%s inputSchema = %v", name, schema)
		assert.Equal(t, false, schema["additionalProperties"], "%s inputSchema = %v", name, schema)
		_, has := tool["outputSchema"]
		assert.Equal(t, name == "StrReplace", has, "%s outputSchema present", name)
	}
	slices.Sort(names)
	assert.Equal(t, wantTools, names, "tools")
}

func toJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	js, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(js, &m))
	return m
}

func openServer(t testing.TB, dir string) *Server {
	t.Helper()
	a, err := runner.Load(dir)
	require.NoError(t, err)
	s, err := a.Open(context.Background(), runner.SessionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	srv, err := New(s, Options{})
	require.NoError(t, err)
	return srv
}

// connect runs srv on an in-memory transport and returns a go-sdk client
// session to it.
func connect(t testing.TB, srv *Server) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			assert.Fail(t, "server did not stop")
		}
	})
	return cs
}

// TestServerGoClient drives the server with the go-sdk client: the same
// calls and checks as the npm client test, in-process.
func TestServerGoClient(t *testing.T) {
	srv := openServer(t, fixtureAgent(t))
	cs := connect(t, srv)
	ctx := context.Background()
	assert.Equal(t, "Fixture instructions.\n", cs.InitializeResult().Instructions, "instructions")
	lt, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	checkTools(t, toJSONMap(t, lt)["tools"].([]any))
	for i, w := range wantCalls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: w.Name, Arguments: w.Arguments})
		var got map[string]any
		if err != nil {
			got = map[string]any{"thrown": err.Error()}
		} else {
			got = toJSONMap(t, res)
		}
		checkResult(t, i, w, got)
	}
}

// TestServerSessionScratch checks that each MCP session is a turn: its
// own /tmp, over the root every session shares.
func TestServerSessionScratch(t *testing.T) {
	srv := openServer(t, fixtureAgent(t))
	ctx := context.Background()
	one, two := connect(t, srv), connect(t, srv)
	call := func(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		return r
	}
	text := func(r *mcp.CallToolResult) string { return r.Content[0].(*mcp.TextContent).Text }
	call(one, "Write", map[string]any{"path": "/tmp/x.txt", "contents": "one's"})
	call(one, "Write", map[string]any{"path": "/shared.txt", "contents": "shared"})
	r := call(two, "Read", map[string]any{"path": "/tmp/x.txt"})
	assert.True(t, r.IsError, "session two reads session one's /tmp: %v", text(r))
	assert.Equal(t, "not found: /tmp/x.txt", text(r), "session two reads session one's /tmp")
	r = call(two, "Read", map[string]any{"path": "/shared.txt"})
	assert.False(t, r.IsError, "session two does not see the shared root: %v", text(r))
	assert.Equal(t, "     1\tshared", text(r), "session two does not see the shared root")
	r = call(one, "Read", map[string]any{"path": "/tmp/x.txt"})
	assert.False(t, r.IsError, "session one lost its /tmp: %v", text(r))
	assert.Equal(t, "     1\tone's", text(r), "session one lost its /tmp")
}
