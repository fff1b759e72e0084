package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/mcp"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/tools"
)

// writeSkills makes a root of two skills under a temporary folder.
func writeSkills(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"greet/SKILL.md":            "---\nname: greet\ndescription: Greets people by name. Use when asked to greet.\nmetadata:\n  version: \"2\"\n---\n\n# Greet\n\nSay hello to NAME, then run scripts/hello.sh.\n",
		"greet/scripts/hello.sh":    "#!/bin/sh\necho hello \"$1\"\n",
		"greet/references/style.md": "# Style\n\nBe brief.\n",
		"hidden/SKILL.md":           "---\nname: hidden\ndescription: Only for users. Use when the user invokes it.\ndisable-model-invocation: true\n---\n\nHidden body.\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// localRunner is the explicit unconfined runner: these tests are about
// the protocol; the sandbox has its own tests (and TestIsolatedExec runs
// one command through it here).
func localRunner(t testing.TB) sandbox.Runner {
	t.Helper()
	r, err := sandbox.NewUnconfinedLocal(&sandbox.LocalOptions{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newServer builds a kit over root with workspace_exec and a server over it.
func newServer(t testing.TB, root string, runner sandbox.Runner, o *mcp.Options) (*skillkit.Kit, *mcp.Server) {
	t.Helper()
	kopts := &skillkit.Options{Roots: []string{root},
		Agents: map[string]skillkit.AgentOptions{mcp.DefaultAgent: {SkillTools: []string{tools.SkillName, tools.ReadName}}}}
	if runner != nil {
		kopts.Exec = &skillkit.ExecOptions{Runner: runner}
		kopts.Agents[mcp.DefaultAgent] = skillkit.AgentOptions{SkillTools: []string{tools.SkillName, tools.ReadName, tools.WorkspaceExecName}}
	}
	kit, err := skillkit.New(t.Context(), kopts)
	if err != nil {
		t.Fatal(err)
	}
	if o == nil {
		o = &mcp.Options{Refresh: -1}
	}
	srv, err := mcp.New(t.Context(), kit, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		if err := kit.Close(); err != nil {
			t.Error(err)
		}
	})
	return kit, srv
}

// connectMemory connects a Go SDK client over an in-memory pipe (a stdio
// client's shape).
func connectMemory(t testing.TB, srv *mcp.Server) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.ServeTransport(context.Background(), st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		<-done
	})
	return cs
}

// connectHTTP connects a Go SDK client to endpoint at the revision given.
func connectHTTP(t testing.TB, endpoint, version string, client *http.Client) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: client, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// serveHTTP serves srv on 127.0.0.1 and returns its endpoint.
func serveHTTP(t testing.TB, srv *mcp.Server, o *mcp.HTTPOptions) string {
	t.Helper()
	hs := httptest.NewServer(srv.Handler(o))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

// call calls a tool and returns its text and result.
func call(t testing.TB, cs *sdk.ClientSession, name string, args any, meta sdk.Meta) (string, *sdk.CallToolResult) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res
}

func TestToolsPromptsOverStdioShape(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), nil, nil)
	cs := connectMemory(t, srv)
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Name == "skill" && !strings.Contains(tl.Description, "greet") {
			t.Errorf("the skill tool's description lacks the catalog: %q", tl.Description)
		}
		if tl.Name == "skill" && strings.Contains(tl.Description, "Hidden body") {
			t.Errorf("the catalog shows a skill body")
		}
	}
	if strings.Join(names, ",") != "skill,skill_read" {
		t.Errorf("tools %v, want skill, skill_read", names)
	}
	text, res := call(t, cs, "skill", map[string]any{"name": "greet"}, nil)
	if res.IsError || !strings.Contains(text, "Say hello to NAME") || !strings.Contains(text, "Base directory for this skill: /") {
		t.Errorf("skill greet: error %v, text %q", res.IsError, text)
	}
	text, res = call(t, cs, "skill", map[string]any{"name": "hidden"}, nil)
	if !res.IsError {
		t.Errorf("skill hidden (not model-invocable) succeeded: %q", text)
	}
	text, res = call(t, cs, "skill_read", map[string]any{"skill": "greet", "path": "references/style.md"}, nil)
	if res.IsError || !strings.Contains(text, "Be brief.") {
		t.Errorf("skill_read: error %v, text %q", res.IsError, text)
	}
	text, res = call(t, cs, "skill", map[string]any{"nme": "greet"}, nil)
	if !res.IsError {
		t.Errorf("bad arguments accepted: %q", text)
	}
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("an unknown tool was called")
	}

	lp, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, p := range lp.Prompts {
		prompts = append(prompts, p.Name)
	}
	if strings.Join(prompts, ",") != "greet,hidden,skills-catalog" {
		t.Errorf("prompts %v", prompts)
	}
	gp, err := cs.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "hidden", Arguments: map[string]string{"input": "do it"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(gp.Messages) != 2 || !strings.Contains(gp.Messages[0].Content.(*sdk.TextContent).Text, "Hidden body.") ||
		gp.Messages[1].Content.(*sdk.TextContent).Text != "do it" {
		t.Errorf("prompt hidden: %+v", gp.Messages)
	}
	gp, err = cs.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: mcp.CatalogPrompt})
	if err != nil || !strings.Contains(gp.Messages[0].Content.(*sdk.TextContent).Text, "greet") {
		t.Errorf("catalog prompt: %v %+v", err, gp)
	}
}

// TestSessionsIsolatedAndRemoved runs commands in two sessions over both
// HTTP revisions: each sees only its own workspace, and a session's
// workspace is gone once the session ends.
func TestSessionsIsolatedAndRemoved(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			kit, srv := newServer(t, writeSkills(t), localRunner(t), &mcp.Options{Refresh: -1})
			endpoint := serveHTTP(t, srv, nil)
			a := connectHTTP(t, endpoint, version, nil)
			b := connectHTTP(t, endpoint, version, nil)
			var metaA, metaB sdk.Meta
			_, res := call(t, a, "workspace_exec", map[string]any{"command": "echo from-a > mine.txt && pwd"}, nil)
			if res.IsError {
				t.Fatalf("exec in a: %+v", res.Content)
			}
			stateless := version >= "2026-07-28"
			if stateless {
				id, _ := res.Meta[mcp.SessionMetaKey].(string)
				if id == "" {
					t.Fatalf("a stateless result has no %s: %+v", mcp.SessionMetaKey, res.Meta)
				}
				metaA = sdk.Meta{mcp.SessionMetaKey: id}
			}
			var out tools.ExecResult
			raw, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(raw, &out); err != nil || out.ExitCode != 0 {
				t.Fatalf("structured content %s: %v", raw, err)
			}
			dirA := strings.TrimSpace(out.Stdout)
			text, res := call(t, a, "workspace_exec", map[string]any{"command": "cat mine.txt"}, metaA)
			if res.IsError || !strings.Contains(text, "from-a") {
				t.Errorf("a does not keep its workspace: %q", text)
			}
			text, res = call(t, b, "workspace_exec", map[string]any{"command": "cat mine.txt"}, metaB)
			if strings.Contains(text, "from-a") {
				t.Errorf("b sees a's file: %q", text)
			}
			if _, err := os.Stat(filepath.Join(dirA, "mine.txt")); err != nil {
				t.Fatalf("a's file is not in its workspace: %v", err)
			}
			if srv.Sessions() != 2 {
				t.Errorf("%d sessions, want 2", srv.Sessions())
			}
			if text, _ := call(t, a, "skill", map[string]any{"name": "greet"}, metaA); !strings.Contains(text, "Base URL for this skill: skill://greet/\n") || strings.Contains(text, "Base directory") {
				t.Errorf("over HTTP the skill's base is not its skill:// URL: %q", text)
			}
			_ = kit
			if stateless {
				// Without sessions, a's workspace lasts until it idles
				// out or the server closes.
				if err := srv.Close(); err != nil {
					t.Fatal(err)
				}
			} else if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			waitGone(t, dirA)
		})
	}
}

// waitGone waits for path to be removed (the session's end is seen by
// the server asynchronously), failing after a generous bound.
func waitGone(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists after its session ended", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStatelessSessionMeta(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), localRunner(t), &mcp.Options{Refresh: -1, MaxSessions: 2})
	cs := connectHTTP(t, serveHTTP(t, srv, nil), "2026-07-28", nil)
	_, res := call(t, cs, "skill", map[string]any{"name": "greet"}, nil)
	id, _ := res.Meta[mcp.SessionMetaKey].(string)
	if id == "" {
		t.Fatal("no session in the result's _meta")
	}
	_, again := call(t, cs, "skill", map[string]any{"name": "greet"}, sdk.Meta{mcp.SessionMetaKey: id})
	if again.Meta[mcp.SessionMetaKey] != id {
		t.Errorf("session %v, want %s", again.Meta[mcp.SessionMetaKey], id)
	}
	for _, bad := range []any{"forged-session", 42, ""} {
		_, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "skill", Arguments: map[string]any{"name": "greet"}, Meta: sdk.Meta{mcp.SessionMetaKey: bad}})
		text := ""
		if err == nil {
			text = "no error"
		}
		if bad == "forged-session" && (err == nil || !strings.Contains(err.Error(), "unknown session")) {
			t.Errorf("a forged session: %v %s", err, text)
		}
	}
	// The limit is 2: new sessions evict the idle stateless ones.
	for range 3 {
		call(t, cs, "skill", map[string]any{"name": "greet"}, nil)
	}
	if n := srv.Sessions(); n > 2 {
		t.Errorf("%d sessions over the limit of 2", n)
	}
}

func TestHTTPRefusesHostileRequests(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), nil, nil)
	endpoint := serveHTTP(t, srv, &mcp.HTTPOptions{Token: "s3cret", MaxBodyBytes: 4096})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		name   string
		mutate func(r *http.Request)
		body   string
		status int
	}{
		{"no token", func(r *http.Request) { r.Header.Del("Authorization") }, init, http.StatusUnauthorized},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cres") }, init, http.StatusUnauthorized},
		{"basic scheme", func(r *http.Request) { r.Header.Set("Authorization", "Basic s3cret") }, init, http.StatusUnauthorized},
		{"foreign host", func(r *http.Request) { r.Host = "evil.example:80" }, init, http.StatusForbidden},
		{"foreign origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, init, http.StatusForbidden},
		{"null origin", func(r *http.Request) { r.Header.Set("Origin", "null") }, init, http.StatusForbidden},
		{"oversized body", nil, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 5000) + `"}}`, http.StatusRequestEntityTooLarge},
		{"malformed JSON", nil, `{"jsonrpc":`, http.StatusBadRequest},
		{"loopback origin", func(r *http.Request) { r.Header.Set("Origin", "http://localhost:3000") }, init, http.StatusOK},
		{"token, any case scheme", func(r *http.Request) { r.Header.Set("Authorization", "bearer s3cret") }, init, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer s3cret")
			if tc.mutate != nil {
				tc.mutate(req)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
		})
	}
	// The server still serves a good client.
	cs := connectHTTP(t, endpoint, "2025-11-25", &http.Client{Transport: bearer{"s3cret"}})
	if text, _ := call(t, cs, "skill", map[string]any{"name": "greet"}, nil); !strings.Contains(text, "Say hello") {
		t.Errorf("after hostile requests: %q", text)
	}
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestCheckListenAddr(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:0", "", true},
		{"localhost:8080", "", true},
		{"[::1]:0", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"192.0.2.1:80", "", false},
		{"0.0.0.0:8080", "t", true},
		{"nonsense", "", false},
	} {
		err := mcp.CheckListenAddr(tc.addr, tc.token)
		if (err == nil) != tc.ok {
			t.Errorf("CheckListenAddr(%q, %q) = %v, want ok %v", tc.addr, tc.token, err, tc.ok)
		}
	}
}

// TestMaxCalls holds one call in a session and sees the next refused.
func TestMaxCalls(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), localRunner(t), &mcp.Options{Refresh: -1, MaxCalls: 1})
	cs := connectHTTP(t, serveHTTP(t, srv, nil), "2025-11-25", nil)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "release")
	started := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		call(t, cs, "workspace_exec", map[string]any{"command": "touch " + started + " && cat " + fifo}, nil)
	})
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	text, res := call(t, cs, "skill", map[string]any{"name": "greet"}, nil)
	if !res.IsError || !strings.Contains(text, "limit") {
		t.Errorf("a second call while one runs: %v %q", res.IsError, text)
	}
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	wg.Wait()
}

// TestListenAndServe serves on a real port and shuts down on cancel.
func TestListenAndServe(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), nil, nil)
	ctx, cancel := context.WithCancel(t.Context())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0", nil, func(a net.Addr) { addrs <- a }) }()
	addr := <-addrs
	cs := connectHTTP(t, "http://"+addr.String()+"/mcp", "2025-11-25", nil)
	if text, _ := call(t, cs, "skill", map[string]any{"name": "greet"}, nil); !strings.Contains(text, "Say hello") {
		t.Errorf("skill over ListenAndServe: %q", text)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := srv.ListenAndServe(t.Context(), "0.0.0.0:0", nil, nil); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("a non-loopback address without a token: %v", err)
	}
}

// TestEndingSessionStopsItsCalls ends a session while a command runs in
// it: the command is stopped and the workspace removed, without waiting
// for the command (which would take five minutes).
func TestEndingSessionStopsItsCalls(t *testing.T) {
	for _, end := range []string{"delete", "close"} {
		t.Run(end, func(t *testing.T) {
			_, srv := newServer(t, writeSkills(t), localRunner(t), &mcp.Options{Refresh: -1})
			endpoint := serveHTTP(t, srv, nil)
			cs := connectHTTP(t, endpoint, "2025-11-25", nil)
			_, res := call(t, cs, "workspace_exec", map[string]any{"command": "pwd"}, nil)
			raw, _ := json.Marshal(res.StructuredContent)
			var out tools.ExecResult
			if err := json.Unmarshal(raw, &out); err != nil {
				t.Fatal(err)
			}
			dir := strings.TrimSpace(out.Stdout)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "workspace_exec",
					Arguments: map[string]any{"command": "touch started && sleep 300", "timeout_sec": 600}})
			}()
			for {
				if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if end == "delete" {
				// The SDK's client waits for its running calls before it
				// sends DELETE; a client that does not is served too.
				req, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
				req.Header.Set("Mcp-Session-Id", cs.ID())
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			} else if err := srv.Close(); err != nil {
				t.Fatal(err)
			}
			waitGone(t, dir)
			<-done
		})
	}
}

// listen serves srv on a free loopback port with o until the test ends
// and returns its address.
func listen(t *testing.T, srv *mcp.Server, o *mcp.HTTPOptions) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- srv.ListenAndServe(ctx, "127.0.0.1:0", o, func(a net.Addr) { addrs <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return (<-addrs).String()
}

// TestStreamLimit holds a notification stream at the limit: one more is
// refused with 503.
func TestStreamLimit(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), nil, nil)
	endpoint := "http://" + listen(t, srv, &mcp.HTTPOptions{MaxStreams: 1}) + "/mcp"
	listenReq := func() (*http.Response, error) {
		body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "subscriptions/listen")
		return (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	}
	first, err := listenReq()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	if first.StatusCode != http.StatusOK {
		t.Fatalf("the first stream: %s", first.Status)
	}
	second, err := listenReq()
	if err != nil {
		t.Fatal(err)
	}
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a stream over the limit: %s", second.Status)
	}
}

// TestConnectionLimit fills the server with idle connections: one more
// is told so (503) and closed, and the server serves again once they go.
func TestConnectionLimit(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), nil, nil)
	addr := listen(t, srv, &mcp.HTTPOptions{MaxConns: 3})
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Accepted in order: the fourth finds the three slots taken.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	reply, _ := io.ReadAll(c)
	c.Close()
	if !strings.HasPrefix(string(reply), "HTTP/1.1 503") {
		t.Errorf("a connection over the limit got %q", reply)
	}
	for _, c := range conns {
		c.Close()
	}
	// The server frees the slots as it sees the connections close.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/nothing")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the slots were not freed")
		}
	}
	cs := connectHTTP(t, "http://"+addr+"/mcp", "2025-11-25", nil)
	if text, _ := call(t, cs, "skill", map[string]any{"name": "greet"}, nil); !strings.Contains(text, "Say hello") {
		t.Errorf("after the limit: %q", text)
	}
}

// TestHTTPHidesHostPaths: over HTTP a skill's base is its skill:// URL in
// prompts too, never the server's folder.
func TestHTTPHidesHostPaths(t *testing.T) {
	root := writeSkills(t)
	_, srv := newServer(t, root, nil, nil)
	cs := connectHTTP(t, serveHTTP(t, srv, nil), "2025-11-25", nil)
	gp, err := cs.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "greet"})
	if err != nil {
		t.Fatal(err)
	}
	text := gp.Messages[0].Content.(*sdk.TextContent).Text
	if strings.Contains(text, root) || !strings.Contains(text, "Base URL for this skill: skill://greet/") {
		t.Errorf("prompt greet over HTTP: %q", text)
	}
}

// TestExecOutputFiles returns a command's output files as embedded
// resources: text inline, binary as a blob, with their MIME types.
func TestExecOutputFiles(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), localRunner(t), &mcp.Options{Refresh: -1})
	cs := connectHTTP(t, serveHTTP(t, srv, nil), "2025-11-25", nil)
	_, res := call(t, cs, "workspace_exec", map[string]any{
		"command":      `mkdir -p out && echo 'a,b' > out/t.csv && printf '\211PNG\r\n\032\n\000\000\000\rIHDR' > out/p.png`,
		"output_files": []string{"out/**"},
	}, nil)
	if res.IsError {
		t.Fatalf("exec: %+v", res.Content)
	}
	got := map[string]*sdk.ResourceContents{}
	for _, c := range res.Content {
		if er, ok := c.(*sdk.EmbeddedResource); ok {
			got[er.Resource.URI] = er.Resource
		}
	}
	if c := got["workspace:///out/t.csv"]; c == nil || c.Text != "a,b\n" || !strings.HasPrefix(c.MIMEType, "text/") {
		t.Errorf("the text output: %+v", c)
	}
	if c := got["workspace:///out/p.png"]; c == nil || len(c.Blob) != 16 || c.MIMEType != "image/png" {
		t.Errorf("the binary output: %+v", c)
	}
}

// TestDescriptionsEscaped lists a skill whose description carries an
// escape sequence and a bidi override: prompts and resources show them
// escaped, as hosts list them in terminals.
func TestDescriptionsEscaped(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "tricky")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: tricky\ndescription: \"Looks fine\\e]0;pwned\\a \\u202Eevil\"\n---\n\nBody.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	_, srv := newServer(t, root, nil, nil)
	cs := connectMemory(t, srv)
	lp, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var descs []string
	for _, p := range lp.Prompts {
		if p.Name == "tricky" {
			descs = append(descs, p.Description)
		}
	}
	for _, r := range lr.Resources {
		descs = append(descs, r.Description)
	}
	if len(descs) != 2 {
		t.Fatalf("descriptions %q", descs)
	}
	for _, d := range descs {
		if strings.ContainsAny(d, "\x1b\x07\u202e") || !strings.Contains(d, `\x1b]0;pwned\x07`) {
			t.Errorf("description %q is not escaped", d)
		}
	}
}

// TestBodyLimit sends bodies of exactly MaxBodyBytes and one byte more.
func TestBodyLimit(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), nil, nil)
	endpoint := serveHTTP(t, srv, &mcp.HTTPOptions{MaxBodyBytes: 4096})
	body := func(size int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`
		tail := `","version":"1"}}}`
		return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	}
	for _, tc := range []struct {
		size    int
		refused bool
	}{{4096, false}, {4097, true}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, endpoint, strings.NewReader(body(tc.size)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusRequestEntityTooLarge; got != tc.refused {
			t.Errorf("a %d-byte body: %s, refused %v", tc.size, resp.Status, tc.refused)
		}
	}
}

// TestExecOutputBlobLimit embeds a binary output file of exactly 1 MiB
// and links one a byte larger.
func TestExecOutputBlobLimit(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), localRunner(t), &mcp.Options{Refresh: -1})
	cs := connectHTTP(t, serveHTTP(t, srv, nil), "2025-11-25", nil)
	_, res := call(t, cs, "workspace_exec", map[string]any{
		"command":      `mkdir -p out && head -c 1048576 /dev/urandom > out/at.bin && head -c 1048577 /dev/urandom > out/over.bin`,
		"output_files": []string{"out/**"},
	}, nil)
	var embedded, linked []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.EmbeddedResource:
			if len(c.Resource.Blob) == 1<<20 {
				embedded = append(embedded, c.Resource.URI)
			}
		case *sdk.ResourceLink:
			linked = append(linked, c.URI)
		}
	}
	if strings.Join(embedded, ",") != "workspace:///out/at.bin" || strings.Join(linked, ",") != "workspace:///out/over.bin" {
		t.Errorf("embedded %v, linked %v", embedded, linked)
	}
}

// TestExecOutputBlobTotal embeds binary outputs up to 4 MiB in one
// result: of five 1 MiB files, four are embedded and one linked.
func TestExecOutputBlobTotal(t *testing.T) {
	_, srv := newServer(t, writeSkills(t), localRunner(t), &mcp.Options{Refresh: -1})
	cs := connectHTTP(t, serveHTTP(t, srv, nil), "2025-11-25", nil)
	_, res := call(t, cs, "workspace_exec", map[string]any{
		"command":      `mkdir -p out && for i in 1 2 3 4 5; do head -c 1048576 /dev/urandom > out/$i.bin; done`,
		"output_files": []string{"out/**"},
	}, nil)
	var embedded, linked int
	for _, c := range res.Content {
		switch c.(type) {
		case *sdk.EmbeddedResource:
			embedded++
		case *sdk.ResourceLink:
			linked++
		}
	}
	if embedded != 4 || linked != 1 {
		t.Errorf("%d embedded and %d linked, want 4 and 1", embedded, linked)
	}
}
