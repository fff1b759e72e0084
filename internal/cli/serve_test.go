package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestServeRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no-exec and local-exec", []string{"serve", "--no-exec", "--local-exec", examples}, "contradict"},
		{"local-exec off loopback", []string{"serve", "--local-exec", "--http", "0.0.0.0:0", "--token", "t", examples}, "refused on the non-loopback"},
		{"token without http", []string{"serve", "--token", "t", examples}, "--token applies to --http only"},
		{"non-loopback without token", []string{"serve", "--http", "0.0.0.0:0", "--no-exec", examples}, "no token is set"},
		{"bad address", []string{"serve", "--http", "nonsense", "--no-exec", examples}, "HOST:PORT"},
		{"exec tool with no-exec", []string{"serve", "--no-exec", "--tools", "skill,workspace_exec", examples}, "--no-exec leaves commands out"},
		{"unknown tool", []string{"serve", "--no-exec", "--tools", "skill,nope", examples}, `unknown tool "nope"`},
		{"sandbox flag with no-exec", []string{"serve", "--no-exec", "--network", examples}, "--network configures the isolated sandbox"},
		{"max-sessions", []string{"serve", "--no-exec", "--max-sessions", "0", examples}, "--max-sessions is 0"},
		{"missing root", []string{"serve", "--no-exec", "/no/such/root"}, "/no/such/root"},
		{"container without image", []string{"serve", "--runner", "container", examples}, "--runner container needs --image"},
		{"image without container", []string{"serve", "--image", "busybox", examples}, "--image applies to --runner container"},
		{"unknown runner", []string{"serve", "--runner", "vm", examples}, `--runner "vm"`},
		{"container and local", []string{"serve", "--runner", "container", "--image", "x", "--local-exec", examples}, "contradict"},
		{"runner with no-exec", []string{"serve", "--no-exec", "--runner", "container", examples}, "--no-exec leaves out"},
		{"store without http", []string{"serve", "--store", "redis://127.0.0.1:1", examples}, "--store applies to --http only"},
		{"run: negative context window", []string{"run", "--script", "s.json", "--context-window", "-1", examples, "hi"}, "--context-window is -1"},
		{"exec: container without image", []string{"exec", "--runner", "container", "--", "true"}, "--runner container needs --image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestServeStdio drives `skillkit serve` over its stdin and stdout with
// the Go SDK client, as a host that starts it does.
func TestServeStdio(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	code := -1
	wg.Go(func() {
		code = Run(ctx, []string{"serve", "--no-exec", examples}, Env{Stdin: inR, Stdout: outW, Stderr: &errb,
			Getenv: func(string) string { return "" }, Cwd: t.TempDir()})
		outW.Close()
	})
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "skill", Arguments: map[string]any{"name": "csv-stats"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*sdk.TextContent).Text; res.IsError || !strings.Contains(text, "CSV statistics") {
		t.Errorf("skill csv-stats: %q", text)
	}
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.Tools) != 2 {
		t.Errorf("--no-exec serves %d tools, want skill and skill_read", len(lt.Tools))
	}
	cs.Close()
	inW.Close()
	wg.Wait()
	if code != 0 {
		t.Errorf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"skills: 4 from", "tools: skill, skill_read\n", "transport: stdio", "protocol revisions: 2026-07-28"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("start message lacks %q:\n%s", want, errb.String())
		}
	}
}

// TestServeHotReload adds a skill under a served root: the client is told
// (tools/list_changed, resources/list_changed) and sees it without a
// restart.
func TestServeHotReload(t *testing.T) {
	root := t.TempDir()
	write := func(name, desc string) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "---\nname: " + name + "\ndescription: " + desc + "\n---\n\nBody.\n"
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("first", "The first skill.")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb syncBuffer
	var wg sync.WaitGroup
	wg.Go(func() {
		Run(t.Context(), []string{"serve", "--no-exec", root}, Env{Stdin: inR, Stdout: outW, Stderr: &errb,
			Getenv: func(string) string { return "" }, Cwd: t.TempDir()})
		outW.Close()
	})
	toolsChanged := make(chan struct{}, 8)
	resourcesChanged := make(chan struct{}, 8)
	client := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { toolsChanged <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { resourcesChanged <- struct{}{} },
	})
	cs, err := client.Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		inW.Close()
		wg.Wait()
	}()
	write("second", "Added while serving.")
	for _, ch := range []chan struct{}{toolsChanged, resourcesChanged} {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("no list_changed notification; stderr:\n%s", errb.String())
		}
	}
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(lt.Tools[0].Description, "second") {
		t.Errorf("the skill tool's catalog lacks the new skill: %q", lt.Tools[0].Description)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "skill", Arguments: map[string]any{"name": "second"}})
	if err != nil || res.IsError {
		t.Fatalf("skill second: %v %+v", err, res)
	}
	if !strings.Contains(errb.String(), "skills changed: 2 now") {
		t.Errorf("stderr does not report the change:\n%s", errb.String())
	}
}

// The Redis client's own messages reach the serve log at debug level
// (shown with -v), not stderr on their own.
func TestRedisLog(t *testing.T) {
	for _, verbose := range []bool{false, true} {
		var buf bytes.Buffer
		level := slog.LevelWarn
		if verbose {
			level = slog.LevelDebug
		}
		redisLog{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))}.Printf(context.Background(), "pool.go:770: %s", "failed to dial")
		if got := buf.String(); verbose != strings.Contains(got, `msg="redis: pool.go:770: failed to dial"`) || verbose != (got != "") {
			t.Errorf("verbose %v: logged %q", verbose, got)
		}
	}
}
