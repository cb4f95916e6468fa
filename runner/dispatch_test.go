package runner

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/tools/txtar"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs/temp"
)

func newTestDispatcher(t *testing.T, opts DispatchOptions) (*Dispatcher, *temp.FS) {
	t.Helper()
	fs := temp.MustNew(map[string]string{"/a.txt": "hi\n"})
	d, err := NewDispatcher(tools.Synthesize(fs, tools.FileToolNames(), tools.Options{}), opts)
	if err != nil {
		t.Fatal(err)
	}
	return d, fs
}

func TestDispatcherUnknownTool(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatchOptions{})
	r := d.Call(context.Background(), "Bash", nil)
	want := `unknown tool "Bash"; available: Read, LS, Grep, Glob, Write, StrReplace, Delete, SemanticSearch`
	if !r.IsError || r.String() != want || r.Tool != "Bash" {
		t.Errorf("Call(Bash) = %+v, want error %q", r, want)
	}
	empty, err := NewDispatcher(nil, DispatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := empty.Call(context.Background(), "Read", nil); !r.IsError || r.String() != `unknown tool "Read": this agent has no tools` {
		t.Errorf("Call on an empty dispatcher = %+v", r)
	}
}

func TestDispatcherEmptyArguments(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatchOptions{})
	for _, args := range []string{"", "null", " {} ", "\n"} {
		r := d.Call(context.Background(), "LS", json.RawMessage(args))
		if r.IsError || !strings.HasPrefix(r.String(), "/\n  a.txt") {
			t.Errorf("LS(%q) = %+v", args, r)
		}
	}
	for _, args := range []string{"{", "[]", `"x"`, "{} {}", "1"} {
		r := d.Call(context.Background(), "LS", json.RawMessage(args))
		if !r.IsError || !strings.HasPrefix(r.String(), "invalid arguments for LS: ") {
			t.Errorf("LS(%q) = %+v, want invalid arguments", args, r)
		}
	}
}

func TestDispatcherDryRun(t *testing.T) {
	var recs []CallRecord
	d, fs := newTestDispatcher(t, DispatchOptions{DryRun: true, Observe: func(r CallRecord) { recs = append(recs, r) }})
	ctx := context.Background()
	for _, c := range []struct{ tool, args string }{
		{"Write", `{"path":"/a.txt","contents":"changed"}`},
		{"StrReplace", `{"path":"/a.txt","old_string":"hi","new_string":"yo"}`},
		{"Delete", `{"path":"/a.txt"}`},
	} {
		r := d.Call(ctx, c.tool, json.RawMessage(c.args))
		if r.IsError || !r.Stubbed || r.Effect != tools.EffectWrite || r.String() != "dry run: "+c.tool+" was not run" {
			t.Errorf("dry-run %s = %+v, want a stubbed success", c.tool, r)
		}
	}
	// Invalid arguments are still refused, not stubbed.
	if r := d.Call(ctx, "Write", json.RawMessage(`{"path":"/a.txt"}`)); !r.IsError || r.Stubbed {
		t.Errorf("dry-run Write without contents = %+v, want an error", r)
	}
	if r := d.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`)); r.IsError || r.Stubbed || r.String() != "     1\thi" || r.Effect != tools.EffectRead {
		t.Errorf("dry-run Read = %+v, want the file", r)
	}
	data, err := fs.Read(ctx, "/a.txt")
	if err != nil || string(data) != "hi\n" {
		t.Errorf("after dry run /a.txt = %q, %v; want unchanged", data, err)
	}
	if len(recs) != 5 {
		t.Fatalf("observed %d calls, want 5", len(recs))
	}
	if r := recs[1]; r.Tool != "StrReplace" || r.Effect != tools.EffectWrite || !r.Stubbed ||
		string(r.Args) != `{"newText":"yo","oldText":"hi","path":"/a.txt"}` {
		t.Errorf("record of StrReplace = %+v (args %s)", r, r.Args)
	}
}

func TestDispatcherToolFailures(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object"}
	boom := &tools.Tool{Name: "Boom", Schema: schema, Effect: tools.EffectRead,
		Run: func(context.Context, json.RawMessage) (*tools.Result, error) { panic("kaboom") }}
	nothing := &tools.Tool{Name: "Nothing", Schema: schema, Effect: tools.EffectRead,
		Run: func(context.Context, json.RawMessage) (*tools.Result, error) { return nil, nil }}
	d, err := NewDispatcher([]*tools.Tool{boom, nothing}, DispatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := d.Call(context.Background(), "Boom", nil); !r.IsError || r.String() != "internal error in Boom: kaboom" {
		t.Errorf("panicking tool = %+v", r)
	}
	if r := d.Call(context.Background(), "Nothing", nil); !r.IsError || r.String() != "internal error in Nothing: no result" {
		t.Errorf("nil-result tool = %+v", r)
	}
	if _, err := NewDispatcher([]*tools.Tool{boom, boom}, DispatchOptions{}); err == nil {
		t.Error("NewDispatcher with a duplicate name succeeded")
	}
}

func TestDispatcherCancelled(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatchOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := d.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`)); !r.IsError || r.String() != "context canceled" {
		t.Errorf("Read with a cancelled context = %+v", r)
	}
}

// TestDispatcherConcurrent runs reads and writes from many goroutines (for
// the race detector).
func TestDispatcherConcurrent(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatchOptions{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				if i%2 == 0 {
					d.Call(context.Background(), "Write", json.RawMessage(`{"path":"/b.txt","contents":"x"}`))
				} else if r := d.Call(context.Background(), "Grep", json.RawMessage(`{"pattern":"hi"}`)); r.IsError {
					t.Errorf("Grep = %+v", r)
				}
			}
		})
	}
	wg.Wait()
}

// FuzzDispatch calls every tool with arbitrary argument bytes, seeded with
// the golden cases' arguments: a call always returns a result, never
// panics, and an error result always has a message.
func FuzzDispatch(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		tool := strings.TrimSuffix(filepath.Base(file), ".txtar")
		for _, a := range ar.Files {
			if strings.HasSuffix(a.Name, ".args") {
				f.Add(tool, a.Data)
			}
		}
	}
	fs := fixtureTree(f)
	d, err := NewDispatcher(tools.Synthesize(fs, tools.FileToolNames(), goldenOptions), DispatchOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tool string, args []byte) {
		r := d.Call(context.Background(), tool, args)
		if r == nil || (r.IsError && r.String() == "") {
			t.Fatalf("Call(%q, %q) = %+v", tool, args, r)
		}
	})
}
