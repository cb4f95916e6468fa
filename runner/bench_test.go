package runner

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/julyfs/julyfs/runner/tools"
	"github.com/julyfs/julyfs/vfs/temp"
)

var benchArgs = json.RawMessage(`{"file_path":"/a.txt","offset":1}`)

// BenchmarkDispatchOverhead measures the dispatcher alone: a tool with
// Read's schema and aliases whose Run returns a constant, so the figure is
// alias mapping, schema validation, re-encoding, decoding into the tool's
// arguments and the result bookkeeping, without any tree.
func BenchmarkDispatchOverhead(b *testing.B) {
	read := tools.NewRead(temp.MustNew(nil), tools.Options{})
	noop := *read
	fixed := tools.Text("     1\thi")
	noop.Run = func(ctx context.Context, args json.RawMessage) (*tools.Result, error) {
		var in struct {
			Path   string `json:"path"`
			Offset int    `json:"offset"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, err
		}
		return fixed, nil
	}
	d, err := NewDispatcher([]*tools.Tool{&noop}, DispatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := d.Call(ctx, "Read", benchArgs); r.IsError {
			b.Fatal(r)
		}
	}
}

// BenchmarkDispatchRead is a whole Read call of a small file on a temp
// tree through the dispatcher.
func BenchmarkDispatchRead(b *testing.B) {
	fs := temp.MustNew(map[string]string{"/a.txt": "hi\n"})
	d, err := NewDispatcher(tools.Synthesize(fs, []string{tools.NameRead}, tools.Options{}), DispatchOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := d.Call(ctx, "Read", benchArgs); r.IsError {
			b.Fatal(r)
		}
	}
}

// BenchmarkToolRead is the same Read without the dispatcher (canonical
// arguments straight into the tool).
func BenchmarkToolRead(b *testing.B) {
	fs := temp.MustNew(map[string]string{"/a.txt": "hi\n"})
	read := tools.NewRead(fs, tools.Options{})
	args := json.RawMessage(`{"path":"/a.txt","offset":1}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r, err := read.Run(ctx, args); err != nil || r.IsError {
			b.Fatal(r, err)
		}
	}
}
