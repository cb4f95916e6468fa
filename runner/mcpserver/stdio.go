package mcpserver

import (
	"bufio"
	"bytes"
	"context"
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
// Each line is decoded once, by the check (jsonrpc.DecodeMessage, the
// SDK's own decoder), and the SDK is handed the decoded message; a
// response is matched to its request by the message the SDK writes, never
// by decoding the written bytes again.
//
// A goroutine reads r until it ends or the connection is closed; as with
// the SDK's transport, a read blocked on a stdin that never closes outlives
// the connection.
func StdioTransport(r io.Reader, w io.Writer) mcp.Transport {
	return &stdioTransport{r: r, w: w}
}

type stdioTransport struct {
	r io.Reader
	w io.Writer
}

// Connect starts reading r. It must be called at most once.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		w:        t.w,
		pending:  map[jsonrpc.ID]int{},
		incoming: make(chan msgOrErr),
		closed:   make(chan struct{}),
	}
	c.idle = sync.NewCond(&c.mu)
	go c.readLines(t.r)
	return c, nil
}

// msgOrErr is one message read, or the error that ended reading.
type msgOrErr struct {
	msg jsonrpc.Message
	err error
}

// stdioConn is the connection StdioTransport makes: messages decoded by
// readLines come in on incoming; writes are serialized and track the
// requests not answered yet.
type stdioConn struct {
	incoming chan msgOrErr
	closed   chan struct{} // closed by Close

	mu        sync.Mutex
	w         io.Writer
	pending   map[jsonrpc.ID]int // requests passed to the SDK, by id
	idle      *sync.Cond         // signalled when pending shrinks or closed
	isClosed  bool
	closeOnce sync.Once
}

// Read returns the next message read, io.EOF once input has ended (after
// every request read was answered) or the connection is closed.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	default:
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case v := <-c.incoming:
		return v.msg, v.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write writes one message as one line and, when it is a response, marks
// its request answered.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.w.Write(append(data, '\n'))
	if resp, ok := msg.(*jsonrpc.Response); ok && c.pending[resp.ID] > 0 {
		if c.pending[resp.ID]--; c.pending[resp.ID] == 0 {
			delete(c.pending, resp.ID)
		}
		c.idle.Broadcast()
	}
	return err
}

// writeLine writes one line the SDK did not make (an error response).
func (c *stdioConn) writeLine(line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.w.Write(line)
}

// Close is called when the connection closes: nothing will be answered
// any more, and readLines stops at its next line.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.isClosed = true
		c.idle.Broadcast()
		c.mu.Unlock()
		close(c.closed)
	})
	return nil
}

// SessionID is empty: stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

// track records a request about to be passed to the SDK.
func (c *stdioConn) track(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID]++
		c.mu.Unlock()
	}
}

// drainTimeout bounds how long the end of stdin waits for the answers to
// requests already read (longer than any tool call may run: Shell's cap is
// 10 minutes).
const drainTimeout = 15 * time.Minute

// drain waits until every tracked request is answered, the connection
// closes, or drainTimeout passes.
func (c *stdioConn) drain() {
	expired := false
	t := time.AfterFunc(drainTimeout, func() {
		c.mu.Lock()
		expired = true
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	defer t.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 && !c.isClosed && !expired {
		c.idle.Wait()
	}
}

// deliver hands one message (or the error that ends input) to Read; false
// when the connection is closed.
func (c *stdioConn) deliver(v msgOrErr) bool {
	select {
	case c.incoming <- v:
		return true
	case <-c.closed:
		return false
	}
}

// readLines passes the well-formed JSON-RPC lines of r to Read, decoded,
// and answers the others itself. When r ends (or fails) it hands Read the
// end, and it stops when the connection is closed.
func (c *stdioConn) readLines(r io.Reader) {
	end := func(err error) {
		if errors.Is(err, io.EOF) {
			c.drain() // answer what was asked before hanging up
		}
		c.deliver(msgOrErr{err: eof(err)})
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
			writeError(c, nil, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: line longer than %d bytes", MaxLineLength))
			if err != nil {
				end(err)
				return
			}
			continue
		}
		if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if m, code, id, reason := check(msg); code != 0 {
				writeError(c, id, code, reason)
			} else {
				c.track(m)
				if !c.deliver(msgOrErr{msg: m}) {
					return // the connection is closed
				}
			}
		}
		// The SDK keeps the decoded message's raw parts (params, result):
		// the next line goes into a new buffer.
		line = nil
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

// check returns the decoded message of a line the SDK can decode, or the
// JSON-RPC error code, the id to answer with (nil for null) and the
// message.
func check(msg []byte) (m jsonrpc.Message, code int64, id json.RawMessage, reason string) {
	if !json.Valid(msg) {
		var v any
		err := json.Unmarshal(msg, &v)
		return nil, jsonrpc.CodeParseError, nil, "Parse error: " + err.Error()
	}
	if msg[0] == '[' {
		// The SDK closes the connection on a batch; MCP 2025-06-18 has
		// none.
		if string(bytes.Join(bytes.Fields(msg), nil)) == "[]" {
			return nil, jsonrpc.CodeInvalidRequest, nil, "Invalid Request: empty batch"
		}
		return nil, jsonrpc.CodeInvalidRequest, nil, "Invalid Request: JSON-RPC batches are not supported; send one message per line"
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, jsonrpc.CodeInvalidRequest, requestID(msg), "Invalid Request: " + err.Error()
	}
	return m, 0, nil, ""
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
func writeError(c *stdioConn, id json.RawMessage, code int64, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: message}})
	c.writeLine(append(data, '\n'))
}
