package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/julyfs/julyfs/runner"
)

// BenchmarkStdioServerRead is the server's side of an MCP stdio Read of a
// 3-byte file on a local: root: a raw JSON-RPC line written to
// StdioTransport, the response line read back, in one process with no MCP
// client library. Its allocations and CPU profile are the server's alone
// (july mcp's line filter, the go-sdk server, the dispatcher and the
// tool); the client's share of a real round trip is one line written and
// one read.
func BenchmarkStdioServerRead(b *testing.B) {
	a, err := runner.Load(fixtureAgent(b))
	if err != nil {
		b.Fatal(err)
	}
	s, err := a.Open(context.Background(), runner.SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	srv, err := New(s, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, StdioTransport(inR, outW)); outW.Close() }()
	b.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			b.Error("the server did not end after stdin closed")
		}
		cancel()
	})
	lines := bufio.NewReaderSize(outR, 64<<10)
	roundTrip := func(line []byte) []byte {
		if _, err := inW.Write(line); err != nil {
			b.Fatal(err)
		}
		resp, err := lines.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	roundTrip([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"))
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		b.Fatal(err)
	}
	want := []byte(`"text":"     1\thi"`)
	var line []byte
	id := 0
	call := func() {
		id++
		line = append(line[:0], `{"jsonrpc":"2.0","id":`...)
		line = strconv.AppendInt(line, int64(id), 10)
		line = append(line, `,"method":"tools/call","params":{"name":"Read","arguments":{"path":"/a.txt"}}}`+"\n"...)
		if resp := roundTrip(line); !bytes.Contains(resp, want) {
			b.Fatalf("Read answered %s", resp)
		}
	}
	for range 20 { // warm up
		call()
	}
	b.ReportAllocs()
	for b.Loop() {
		call()
	}
}
