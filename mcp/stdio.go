package mcp

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

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioLine bounds one message on stdio; a longer line is answered
// with an error and skipped.
const maxStdioLine = 16 << 20

// ServeStdio serves one client over r and w (a host that starts
// `skillkit serve` talks over its stdin and stdout), one JSON-RPC message
// a line, until the client closes r or ctx ends; the client's session
// ends with it. w receives protocol messages only. A line that is not a
// JSON-RPC message is answered with a parse or invalid-request error and
// the connection goes on.
func (s *Server) ServeStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	lw := &lockedWriter{w: w, pending: map[string]bool{}}
	lw.cond = sync.NewCond(&lw.mu)
	return s.ServeTransport(ctx, &sdk.IOTransport{Reader: newLineFilter(ctx, r, lw), Writer: lw})
}

// drainTimeout bounds how long the end of stdin waits for the answers to
// the requests read before it.
const drainTimeout = 5 * time.Minute

// ServeTransport serves one client over any MCP transport (an in-memory
// pair in tests, a custom pipe) until it closes or ctx ends; the client's
// session ends with it.
func (s *Server) ServeTransport(ctx context.Context, t sdk.Transport) error {
	ss, err := s.stateful.sdk.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("mcp: connecting a client: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = ss.Close() })
	err = ss.Wait()
	stop()
	// The session is finished before returning, so a caller that closes
	// the kit next finds its workspace gone.
	s.sessions.endConn(ss)
	if ctx.Err() != nil {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("mcp: serving a client: %w", err)
}

// lockedWriter serialises whole writes, so an error the filter answers
// never lands inside a message of the server's, and keeps the IDs of the
// requests not answered yet: a client that writes its requests and closes
// stdin (a shell pipe) still gets every answer.
type lockedWriter struct {
	mu      sync.Mutex
	cond    *sync.Cond
	w       io.WriteCloser
	pending map[string]bool
}

// responsePrefix starts every response the SDK writes.
const responsePrefix = `{"jsonrpc":"2.0","id":`

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if rest, ok := bytes.CutPrefix(p, []byte(responsePrefix)); ok {
		if i := bytes.IndexByte(rest, ','); i > 0 && l.pending[string(rest[:i])] {
			delete(l.pending, string(rest[:i]))
			l.cond.Broadcast()
		}
	}
	return l.w.Write(p)
}

// expect records a request whose answer is due.
func (l *lockedWriter) expect(id json.RawMessage) {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return
	}
	canon, _ := json.Marshal(v)
	l.mu.Lock()
	l.pending[string(canon)] = true
	l.mu.Unlock()
}

// drain waits until every request read was answered, ctx ends or
// drainTimeout passes.
func (l *lockedWriter) drain(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	timer := time.AfterFunc(drainTimeout, func() {
		l.mu.Lock()
		clear(l.pending)
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	defer timer.Stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.pending) > 0 && ctx.Err() == nil {
		l.cond.Wait()
	}
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// lineFilter passes on the lines that are JSON-RPC messages and answers
// the others itself: the SDK ends a connection on a line it cannot
// decode, and one bad line from a client should not cost it its session.
type lineFilter struct {
	ctx context.Context
	r   io.ReadCloser
	br  *bufio.Reader
	out *lockedWriter
	buf bytes.Buffer // valid lines not yet read
}

func newLineFilter(ctx context.Context, r io.ReadCloser, out *lockedWriter) *lineFilter {
	return &lineFilter{ctx: ctx, r: r, br: bufio.NewReaderSize(r, 64<<10), out: out}
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for f.buf.Len() == 0 {
		line, err := f.readLine()
		if len(bytes.TrimSpace(line)) > 0 {
			if msg := check(line); msg != nil {
				_, _ = f.out.Write(msg)
			} else {
				f.expectAnswers(line)
				f.buf.Write(line)
				f.buf.WriteByte('\n')
			}
		}
		if err != nil && f.buf.Len() == 0 {
			if errors.Is(err, io.EOF) {
				f.out.drain(f.ctx)
			}
			return 0, err
		}
		if err != nil {
			break
		}
	}
	return f.buf.Read(p)
}

// readLine reads one line without its newline; a line over maxStdioLine
// is consumed and returned as a marker the check refuses.
func (f *lineFilter) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := f.br.ReadSlice('\n')
		if len(line)+len(chunk) > maxStdioLine {
			// Skip the rest of the line.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = f.br.ReadSlice('\n')
			}
			return []byte(tooLong), err
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), err
	}
}

// expectAnswers records the requests of a checked line.
func (f *lineFilter) expectAnswers(line []byte) {
	var msgs []map[string]json.RawMessage
	if line[0] == '[' {
		_ = json.Unmarshal(line, &msgs)
	} else {
		var one map[string]json.RawMessage
		_ = json.Unmarshal(line, &one)
		msgs = append(msgs, one)
	}
	for _, m := range msgs {
		if _, isReq := m["method"]; isReq && m["id"] != nil && string(m["id"]) != "null" {
			f.out.expect(m["id"])
		}
	}
}

// tooLong stands for a line over the limit.
const tooLong = "\x00too long"

func (f *lineFilter) Close() error { return f.r.Close() }

// check returns the error response for a line that is not a JSON-RPC
// message, or nil.
func check(line []byte) []byte {
	if string(line) == tooLong {
		return errorLine(nil, -32700, fmt.Sprintf("Parse error: a message over %d bytes", maxStdioLine))
	}
	if !json.Valid(line) {
		return errorLine(nil, -32700, "Parse error: the line is not JSON")
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(line, &one); err != nil {
		var batch []map[string]json.RawMessage
		if json.Unmarshal(line, &batch) == nil && len(batch) > 0 {
			for _, m := range batch {
				if msg := checkMessage(m); msg != nil {
					return msg
				}
			}
			return nil
		}
		return errorLine(nil, -32600, "Invalid Request: a message is a JSON object")
	}
	return checkMessage(one)
}

// checkMessage checks the fields the SDK needs to decode a message.
func checkMessage(m map[string]json.RawMessage) []byte {
	id := m["id"]
	if string(m["jsonrpc"]) != `"2.0"` {
		return errorLine(id, -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if method, ok := m["method"]; ok {
		var name string
		if json.Unmarshal(method, &name) != nil || name == "" {
			return errorLine(id, -32600, `Invalid Request: "method" must be a non-empty string`)
		}
		if p, ok := m["params"]; ok && len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return errorLine(id, -32602, `Invalid params: "params" must be an object`)
		}
		if id != nil && id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-' && string(id) != "null" {
			return errorLine(nil, -32600, `Invalid Request: "id" must be a string or a number`)
		}
		return nil
	}
	if _, ok := m["result"]; ok && id != nil {
		return nil
	}
	if _, ok := m["error"]; ok && id != nil {
		return nil
	}
	return errorLine(id, -32600, `Invalid Request: a message has a "method", or an "id" with a "result" or "error"`)
}

// errorLine is one JSON-RPC error response line.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}
