package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
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
	// The SDK's own bound sits above the filter's: a line the filter
	// passes never ends the connection there.
	return s.ServeTransport(ctx, &sdk.IOTransport{Reader: newLineFilter(ctx, r, lw), Writer: lw, MaxLineLength: maxStdioLine + 2})
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
	stop := context.AfterFunc(ctx, func() {
		s.sessions.cancelConn(func(c *sdk.ServerSession) bool { return c == ss })
		_ = ss.Close()
	})
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
	if rest, ok := bytes.CutPrefix(p, []byte(responsePrefix)); ok && len(l.pending) > 0 {
		var id json.RawMessage
		if json.NewDecoder(bytes.NewReader(rest)).Decode(&id) == nil && l.pending[canonID(id)] {
			delete(l.pending, canonID(id))
			l.cond.Broadcast()
		}
	}
	return l.w.Write(p)
}

// canonID spells an id one way whatever escapes or number form it was
// written with, so a request and its answer meet.
func canonID(id json.RawMessage) string {
	if len(id) > 0 && id[0] == '"' {
		var s string
		_ = json.Unmarshal(id, &s)
		return strconv.Quote(s)
	}
	n, _ := strconv.ParseInt(string(id), 10, 64)
	return strconv.FormatInt(n, 10)
}

// maxPending bounds the requests whose answers the end of stdin waits
// for.
const maxPending = 4096

// expect records a request whose answer is due. Its id passed check: a
// string (kept as the client spelled it, which the SDK echoes) or an
// integer (which it writes in canonical form).
func (l *lockedWriter) expect(id json.RawMessage) {
	key := canonID(id)
	l.mu.Lock()
	if len(l.pending) < maxPending {
		l.pending[key] = true
	}
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
			if m, bad := check(line); bad != nil {
				_, _ = f.out.Write(bad)
			} else {
				if _, isReq := m["method"]; isReq && m["id"] != nil {
					f.out.expect(m["id"])
				}
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
		// The line's end (\n or \r\n) is not part of the message.
		if len(line)+len(bytes.TrimRight(chunk, "\r\n")) > maxStdioLine {
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

// tooLong stands for a line over the limit.
const tooLong = "\x00too long"

func (f *lineFilter) Close() error { return f.r.Close() }

// maxDepth bounds the nesting of a message, below the decoder's own
// limit, past which it ends the connection.
const maxDepth = 500

// check returns the message of a line, or the error response for a line
// the SDK could not decode (it would end the connection): what passes is
// one JSON-RPC message with a string or integer id.
func check(line []byte) (map[string]json.RawMessage, []byte) {
	if string(line) == tooLong {
		return nil, errorLine(nil, -32700, fmt.Sprintf("Parse error: a message over %d bytes", maxStdioLine))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		switch {
		case !json.Valid(line):
			return nil, errorLine(nil, -32700, "Parse error: the line is not JSON")
		case line[0] == '[':
			return nil, errorLine(nil, -32600, "Invalid Request: batches are not supported; send one message a line")
		}
		return nil, errorLine(nil, -32600, "Invalid Request: a message is a JSON object")
	}
	if depth(line) > maxDepth {
		return nil, errorLine(nil, -32600, fmt.Sprintf("Invalid Request: nested more than %d levels deep", maxDepth))
	}
	return m, checkMessage(m)
}

// checkMessage checks the fields the SDK needs to decode a message.
func checkMessage(m map[string]json.RawMessage) []byte {
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return errorLine(nil, -32600, `Invalid Request: "id" must be a string or an integer`)
	}
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
		return nil
	}
	if !hasID {
		return errorLine(nil, -32600, `Invalid Request: a message has a "method", or an "id" with a "result" or "error"`)
	}
	if _, ok := m["result"]; ok {
		return nil
	}
	if e, ok := m["error"]; ok {
		var rpcErr struct {
			Code    *int64  `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(e, &rpcErr) != nil || rpcErr.Code == nil || rpcErr.Message == nil {
			return errorLine(nil, -32600, `Invalid Request: "error" must be an object with an integer "code" and a string "message"`)
		}
		return nil
	}
	return errorLine(nil, -32600, `Invalid Request: a message has a "method", or an "id" with a "result" or "error"`)
}

// validID reports whether id is a string or an integer that fits in 64
// bits: the ids the SDK keeps as they are.
func validID(id json.RawMessage) bool {
	if len(id) > 0 && id[0] == '"' {
		var s string
		return json.Unmarshal(id, &s) == nil
	}
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil
}

// depth returns the deepest nesting of arrays and objects in valid JSON.
func depth(data []byte) int {
	d, deepest, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
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
