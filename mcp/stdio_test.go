package mcp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/mcp"
)

// nopCloser adapts a writer for ServeStdio.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// TestStdioBadLines sends a client's requests with hostile lines among
// them and closes stdin at once, as a shell pipe does: every bad line gets
// its own error and every request its answer.
func TestStdioBadLines(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), nil, nil)
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`garbage{`,
		`{}`,
		`[1,2]`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`   `,
		`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"skill","arguments":{"name":"greet"}}}`,
		`{"jsonrpc":"2.0","id":"five","method":"tools/call","params":{"name":"skill","arguments":"x"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":7}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":1.5,"message":"x"}}`,
		`[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":9,"method":"ping"}]`,
		strings.Repeat("[", 2000) + strings.Repeat("]", 2000),
		`{"jsonrpc":"2.0","id":"a,b","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\u0061\u003c","method":"ping"}`,
		`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"skill","arguments":{"name":"greet"}}}`,
	}
	var out bytes.Buffer
	in := io.NopCloser(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err := srv.ServeStdio(t.Context(), in, nopCloser{&out}); err != nil {
		t.Fatal(err)
	}
	byID := map[string]map[string]json.RawMessage{}
	var parseErrors, invalid int
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		if string(m["id"]) == "null" {
			var e struct{ Code int }
			_ = json.Unmarshal(m["error"], &e)
			switch e.Code {
			case -32700:
				parseErrors++
			case -32600:
				invalid++
			}
			continue
		}
		byID[string(m["id"])] = m
	}
	if parseErrors != 1 || invalid != 9 {
		t.Errorf("%d parse errors and %d invalid requests, want 1 and 9:\n%s", parseErrors, invalid, out.String())
	}
	for _, id := range []string{"1", "2", "3", "4", `"five"`, "6", `"a,b"`, "10"} {
		if byID[id] == nil {
			t.Errorf("request %s has no answer:\n%s", id, out.String())
		}
	}
	if !strings.Contains(string(byID["4"]["result"]), "Say hello to NAME") {
		t.Errorf("skill greet over stdio: %s", byID["4"]["result"])
	}
	if byID["3"]["error"] == nil || byID["6"]["error"] == nil {
		t.Errorf("unknown method or bad params answered without an error: %s / %s", byID["3"], byID["6"])
	}
	if srv.Sessions() != 0 {
		t.Errorf("%d sessions after stdin closed", srv.Sessions())
	}
	_ = mcp.SessionMetaKey
}
