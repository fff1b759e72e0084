package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
)

// nested is a request whose params nest n levels deep in all.
func nested(n int) []byte {
	inner := strings.Repeat(`{"a":`, n-1) + "1" + strings.Repeat("}", n-1)
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":` + inner + `}`)
}

func TestCheckDepthLimit(t *testing.T) {
	if _, bad := check(nested(maxDepth)); bad != nil {
		t.Errorf("a message %d levels deep refused: %s", maxDepth, bad)
	}
	if _, bad := check(nested(maxDepth + 1)); bad == nil || !bytes.Contains(bad, []byte("-32600")) {
		t.Errorf("a message %d levels deep: %s", maxDepth+1, bad)
	}
}

// TestStdioLineLimit reads a line of exactly maxStdioLine bytes and one a
// byte longer: the first is passed on, the second answered and skipped,
// and the line after it is read as usual.
func TestStdioLineLimit(t *testing.T) {
	msg := func(size int) string {
		head := `{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"`
		tail := `"}}`
		return head + strings.Repeat("a", size-len(head)-len(tail)) + tail
	}
	after := `{"jsonrpc":"2.0","method":"notifications/y"}` // no answer due
	in := msg(maxStdioLine) + "\n" + msg(maxStdioLine+1) + "\n" + after + "\n"
	var out bytes.Buffer
	lw := &lockedWriter{w: nopWC{&out}, pending: map[string]bool{}}
	lw.cond = sync.NewCond(&lw.mu)
	got, err := io.ReadAll(newLineFilter(t.Context(), io.NopCloser(strings.NewReader(in)), lw))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 2 || len(lines[0]) != maxStdioLine || lines[1] != after {
		t.Errorf("passed on %d lines (first %d bytes), want the %d-byte one and the notification", len(lines), len(lines[0]), maxStdioLine)
	}
	var e struct{ Error struct{ Code int } }
	if err := json.Unmarshal(out.Bytes(), &e); err != nil || e.Error.Code != -32700 {
		t.Errorf("the long line's answer: %s", out.Bytes())
	}
}

// TestPendingLimit tracks at most maxPending unanswered requests.
func TestPendingLimit(t *testing.T) {
	lw := &lockedWriter{w: nopWC{io.Discard}, pending: map[string]bool{}}
	for i := range maxPending + 10 {
		lw.expect(json.RawMessage(itoa(i)))
	}
	if len(lw.pending) != maxPending {
		t.Errorf("%d pending, want the limit %d", len(lw.pending), maxPending)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// nopWC is a writer that closes as a no-op.
type nopWC struct{ io.Writer }

func (nopWC) Close() error { return nil }
