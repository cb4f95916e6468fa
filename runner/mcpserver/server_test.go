package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

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
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
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
	if _, thrown := got["thrown"]; thrown != w.thrown {
		t.Errorf("call %d %s: thrown = %v (%v), want %v", i, w.Name, thrown, got["thrown"], w.thrown)
		return
	}
	if w.thrown {
		return
	}
	isError, _ := got["isError"].(bool)
	if isError != w.isError {
		t.Errorf("call %d %s: isError = %v, want %v (%v)", i, w.Name, isError, w.isError, got)
	}
	content, _ := got["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("call %d %s: content = %v, want one part", i, w.Name, got["content"])
	}
	part := content[0].(map[string]any)
	if w.image != nil {
		if part["type"] != "image" || part["mimeType"] != "image/png" {
			t.Errorf("call %d %s: part = %v, want a png image", i, w.Name, part)
		}
		var data []byte
		if s, ok := part["data"].(string); ok {
			json.Unmarshal([]byte(`"`+s+`"`), &data) // base64
		}
		if !bytes.Equal(data, w.image) {
			t.Errorf("call %d %s: image bytes = %q, want %q", i, w.Name, data, w.image)
		}
		return
	}
	if part["type"] != "text" || part["text"] != w.text {
		t.Errorf("call %d %s(%v): text = %q, want %q", i, w.Name, w.Arguments, part["text"], w.text)
	}
	sc, has := got["structuredContent"]
	switch {
	case w.structured == "" && has:
		t.Errorf("call %d %s: unexpected structuredContent %v", i, w.Name, sc)
	case w.structured != "":
		js, _ := json.Marshal(sc)
		if string(js) != w.structured {
			t.Errorf("call %d %s: structuredContent = %s, want %s", i, w.Name, js, w.structured)
		}
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
		if readOnly != wantRead || (!wantRead && (!hasDestructive || !destructive)) || (wantRead && hasDestructive) {
			t.Errorf("%s annotations = %v, want readOnlyHint %v and destructiveHint only on writes", name, ann, wantRead)
		}
		schema, _ := tool["inputSchema"].(map[string]any)
		if schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s inputSchema = %v", name, schema)
		}
		if _, has := tool["outputSchema"]; has != (name == "StrReplace") {
			t.Errorf("%s outputSchema present = %v", name, has)
		}
	}
	slices.Sort(names)
	if !reflect.DeepEqual(names, wantTools) {
		t.Errorf("tools = %v, want %v", names, wantTools)
	}
}

func toJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func openServer(t testing.TB, dir string) *Server {
	t.Helper()
	a, err := runner.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Open(context.Background(), runner.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv, err := New(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
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
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
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
	if got := cs.InitializeResult().Instructions; got != "Fixture instructions.\n" {
		t.Errorf("instructions = %q", got)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
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
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	text := func(r *mcp.CallToolResult) string { return r.Content[0].(*mcp.TextContent).Text }
	call(one, "Write", map[string]any{"path": "/tmp/x.txt", "contents": "one's"})
	call(one, "Write", map[string]any{"path": "/shared.txt", "contents": "shared"})
	if r := call(two, "Read", map[string]any{"path": "/tmp/x.txt"}); !r.IsError || text(r) != "not found: /tmp/x.txt" {
		t.Errorf("session two reads session one's /tmp: %v", text(r))
	}
	if r := call(two, "Read", map[string]any{"path": "/shared.txt"}); r.IsError || text(r) != "     1\tshared" {
		t.Errorf("session two does not see the shared root: %v", text(r))
	}
	if r := call(one, "Read", map[string]any{"path": "/tmp/x.txt"}); r.IsError || text(r) != "     1\tone's" {
		t.Errorf("session one lost its /tmp: %v", text(r))
	}
}
