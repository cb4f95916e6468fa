package runner

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/tools/txtar"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs/temp"
)

func newTestDispatcher(t *testing.T, opts DispatchOptions) (*Dispatcher, *temp.FS) {
	t.Helper()
	fs := temp.MustNew(map[string]string{"/a.txt": "hi\n"})
	d, err := NewDispatcher(tools.Synthesize(fs, tools.FileToolNames(), tools.Options{}), opts)
	require.NoError(t, err)
	return d, fs
}

func TestDispatcherUnknownTool(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatchOptions{})
	r := d.Call(context.Background(), "Bash", nil)
	want := `unknown tool "Bash"; available: Read, LS, Grep, Glob, Write, StrReplace, Delete, SemanticSearch`
	assert.True(t, r.IsError, "Call(Bash) = %+v, want error %q", r, want)
	assert.Equal(t, want, r.String(), "Call(Bash)")
	assert.Equal(t, "Bash", r.Tool, "Call(Bash)")
	empty, err := NewDispatcher(nil, DispatchOptions{})
	require.NoError(t, err)
	r = empty.Call(context.Background(), "Read", nil)
	assert.True(t, r.IsError, "Call on an empty dispatcher = %+v", r)
	assert.Equal(t, `unknown tool "Read": this agent has no tools`, r.String(), "Call on an empty dispatcher")
}

func TestDispatcherEmptyArguments(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatchOptions{})
	for _, args := range []string{"", "null", " {} ", "\n"} {
		r := d.Call(context.Background(), "LS", json.RawMessage(args))
		assert.False(t, r.IsError, "LS(%q) = %+v", args, r)
		assert.True(t, strings.HasPrefix(r.String(), "/\n  a.txt"), "LS(%q) = %+v", args, r)
	}
	for _, args := range []string{"{", "[]", `"x"`, "{} {}", "1"} {
		r := d.Call(context.Background(), "LS", json.RawMessage(args))
		assert.True(t, r.IsError, "LS(%q) = %+v, want invalid arguments", args, r)
		assert.True(t, strings.HasPrefix(r.String(), "invalid arguments for LS: "), "LS(%q) = %+v, want invalid arguments", args, r)
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
		assert.False(t, r.IsError, "dry-run %s = %+v, want a stubbed success", c.tool, r)
		assert.True(t, r.Stubbed, "dry-run %s = %+v, want a stubbed success", c.tool, r)
		assert.Equal(t, tools.EffectWrite, r.Effect, "dry-run %s", c.tool)
		assert.Equal(t, "dry run: "+c.tool+" was not run", r.String(), "dry-run %s", c.tool)
	}
	// Invalid arguments are still refused, not stubbed.
	r := d.Call(ctx, "Write", json.RawMessage(`{"path":"/a.txt"}`))
	assert.True(t, r.IsError, "dry-run Write without contents = %+v, want an error", r)
	assert.False(t, r.Stubbed, "dry-run Write without contents = %+v, want an error", r)
	r = d.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`))
	assert.False(t, r.IsError, "dry-run Read = %+v, want the file", r)
	assert.False(t, r.Stubbed, "dry-run Read = %+v, want the file", r)
	assert.Equal(t, "     1\thi", r.String(), "dry-run Read")
	assert.Equal(t, tools.EffectRead, r.Effect, "dry-run Read")
	data, err := fs.Read(ctx, "/a.txt")
	assert.NoError(t, err, "after dry run /a.txt")
	assert.Equal(t, "hi\n", string(data), "after dry run /a.txt, want unchanged")
	require.Len(t, recs, 5, "observed calls")
	rec := recs[1]
	assert.Equal(t, "StrReplace", rec.Tool, "record of StrReplace = %+v", rec)
	assert.Equal(t, tools.EffectWrite, rec.Effect, "record of StrReplace = %+v", rec)
	assert.True(t, rec.Stubbed, "record of StrReplace = %+v", rec)
	assert.Equal(t, `{"newText":"yo","oldText":"hi","path":"/a.txt"}`, string(rec.Args), "record of StrReplace")
}

func TestDispatcherToolFailures(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object"}
	boom := &tools.Tool{Name: "Boom", Schema: schema, Effect: tools.EffectRead,
		Run: func(context.Context, json.RawMessage) (*tools.Result, error) { panic("kaboom") }}
	nothing := &tools.Tool{Name: "Nothing", Schema: schema, Effect: tools.EffectRead,
		Run: func(context.Context, json.RawMessage) (*tools.Result, error) { return nil, nil }}
	d, err := NewDispatcher([]*tools.Tool{boom, nothing}, DispatchOptions{})
	require.NoError(t, err)
	r := d.Call(context.Background(), "Boom", nil)
	assert.True(t, r.IsError, "panicking tool = %+v", r)
	assert.Equal(t, "internal error in Boom: kaboom", r.String(), "panicking tool")
	r = d.Call(context.Background(), "Nothing", nil)
	assert.True(t, r.IsError, "nil-result tool = %+v", r)
	assert.Equal(t, "internal error in Nothing: no result", r.String(), "nil-result tool")
	_, err = NewDispatcher([]*tools.Tool{boom, boom}, DispatchOptions{})
	assert.Error(t, err, "NewDispatcher with a duplicate name succeeded")
}

func TestDispatcherCancelled(t *testing.T) {
	d, _ := newTestDispatcher(t, DispatchOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := d.Call(ctx, "Read", json.RawMessage(`{"path":"/a.txt"}`))
	assert.True(t, r.IsError, "Read with a cancelled context = %+v", r)
	assert.Equal(t, "context canceled", r.String(), "Read with a cancelled context")
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
				} else {
					r := d.Call(context.Background(), "Grep", json.RawMessage(`{"pattern":"hi"}`))
					assert.False(t, r.IsError, "Grep = %+v", r)
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
		require.NotNil(t, r, "Call(%q, %q)", tool, args)
		if r.IsError {
			require.NotEmpty(t, r.String(), "Call(%q, %q) = %+v", tool, args, r)
		}
	})
}
