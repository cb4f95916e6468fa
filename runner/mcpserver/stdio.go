package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineLength bounds one line (one JSON-RPC message) read by
// StdioTransport, as the go-sdk's default frame limit does.
const MaxLineLength = mcp.DefaultMaxLineLength

// StdioTransport returns a transport for newline-delimited JSON-RPC over r
// and w (os.Stdin and os.Stdout for july mcp) that survives a bad line.
//
// The go-sdk's own stdio transport closes the connection on the first line
// it cannot decode. This one checks each line before the SDK sees it: a
// line that is not JSON gets a parse error response (code -32700, id
// null) and a line that is JSON but not a JSON-RPC message gets an
// invalid-request response (code -32600, with the request's id when it has
// a usable one); blank lines are skipped. Either way the server keeps
// serving. Responses are written whole, one line each, so they never
// interleave with the SDK's.
//
// A JSON-RPC batch (an array, which MCP 2025-06-18 removed) gets an
// invalid-request response too.
//
// When r ends, the requests already read are still run and answered: the
// SDK only sees the end of input once every request it was given has its
// response written (or the connection closes). A client may therefore
// write a tools/call and close stdin at once.
//
// A goroutine reads r until it ends or the connection is closed; as with
// the SDK's transport, a read blocked on a stdin that never closes outlives
// the connection.
func StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	out := &lockedWriter{w: w, pending: map[jsonrpc.ID]int{}}
	out.idle = sync.NewCond(&out.mu)
	pr, pw := io.Pipe()
	go filterLines(r, pw, out)
	return &mcp.IOTransport{Reader: pr, Writer: out, MaxLineLength: -1}
}

// lockedWriter serializes writes (the SDK writes each message in one call,
// and so does filterLines) and tracks the requests not answered yet.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending map[jsonrpc.ID]int // requests passed to the SDK, by id
	idle    *sync.Cond         // signalled when pending shrinks or closed
	closed  bool
}

// Write writes one message and, when it is a response, marks its request
// answered.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if msg, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); derr == nil {
		if resp, ok := msg.(*jsonrpc.Response); ok && l.pending[resp.ID] > 0 {
			if l.pending[resp.ID]--; l.pending[resp.ID] == 0 {
				delete(l.pending, resp.ID)
			}
			l.idle.Broadcast()
		}
	}
	return n, err
}

// Close is called when the connection closes: nothing will be answered
// any more.
func (l *lockedWriter) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.idle.Broadcast()
	return nil
}

// track records a request about to be passed to the SDK.
func (l *lockedWriter) track(msg []byte) {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return
	}
	if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
		l.mu.Lock()
		l.pending[req.ID]++
		l.mu.Unlock()
	}
}

// drainTimeout bounds how long the end of stdin waits for the answers to
// requests already read (longer than any tool call may run: Shell's cap is
// 10 minutes).
const drainTimeout = 15 * time.Minute

// drain waits until every tracked request is answered, the connection
// closes, or drainTimeout passes.
func (l *lockedWriter) drain() {
	expired := false
	t := time.AfterFunc(drainTimeout, func() {
		l.mu.Lock()
		expired = true
		l.idle.Broadcast()
		l.mu.Unlock()
	})
	defer t.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) > 0 && !l.closed && !expired {
		l.idle.Wait()
	}
}

// filterLines copies the well-formed JSON-RPC lines of r to pw and answers
// the others on out. It closes pw when r ends (or fails) and stops when
// the reading side of pw is closed.
func filterLines(r io.Reader, pw *io.PipeWriter, out *lockedWriter) {
	end := func(err error) {
		if errors.Is(err, io.EOF) {
			out.drain() // answer what was asked before hanging up
		}
		pw.CloseWithError(eof(err))
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) <= MaxLineLength {
				continue
			}
			// Too long: drop the rest of the line, answer, read on.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			line = line[:0]
			writeError(out, nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: line longer than %d bytes", MaxLineLength))
			if err != nil {
				end(err)
				return
			}
			continue
		}
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if code, id, reason := check(msg); code != 0 {
				writeError(out, id, code, reason)
			} else {
				out.track(msg)
				if _, werr := pw.Write(append(msg, '\n')); werr != nil {
					return // the connection is closed
				}
			}
		}
		line = line[:0]
		if err != nil {
			end(err)
			return
		}
	}
}

// eof maps the end of input to io.EOF, which the SDK takes as the client
// hanging up; other read errors pass through.
func eof(err error) error {
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	return err
}

// check returns 0 for a line the SDK can decode, or the JSON-RPC error
// code, the id to answer with (nil for null) and the message.
func check(msg []byte) (code int64, id json.RawMessage, reason string) {
	if !json.Valid(msg) {
		var v any
		err := json.Unmarshal(msg, &v)
		return jsonrpc.CodeParseError, nil, "Parse error: " + err.Error()
	}
	if msg[0] == '[' {
		// The SDK closes the connection on a batch; MCP 2025-06-18 has
		// none.
		if string(bytes.Join(bytes.Fields(msg), nil)) == "[]" {
			return jsonrpc.CodeInvalidRequest, nil, "Invalid Request: empty batch"
		}
		return jsonrpc.CodeInvalidRequest, nil, "Invalid Request: JSON-RPC batches are not supported; send one message per line"
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return jsonrpc.CodeInvalidRequest, requestID(msg), "Invalid Request: " + err.Error()
	}
	return 0, nil, ""
}

// requestID returns the id of a malformed request when it is a string or
// a number, else nil.
func requestID(msg []byte) json.RawMessage {
	var obj struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &obj) != nil || len(obj.ID) == 0 {
		return nil
	}
	switch obj.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return obj.ID
	}
	return nil
}

// writeError writes one JSON-RPC error response line.
func writeError(out io.Writer, id json.RawMessage, code int64, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	out.Write(append(data, '\n'))
}
