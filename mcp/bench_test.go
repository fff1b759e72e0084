package mcp_test

// Benchmarks of the MCP server's targets, measured over streamable HTTP on
// 127.0.0.1 with the Go SDK's own client (sdk.StreamableClientTransport),
// against a generated tree of 1,000 skills (internal/benchtree's skills:
// a ≈2 KB SKILL.md and a 1 KB reference.md each, plus a 4 KB
// references/data.md in the first 32). Each benchmark reports its
// figure as a custom metric:
//
//	BenchmarkSkillCalls    calls/s        target ≥ 2,000 (32 sessions)
//	BenchmarkResourceRead  reads/s        target ≥ 5,000 (32 sessions, 4 KB file)
//	BenchmarkIdleSession   bytes/session  target ≤ 64 KB
//	BenchmarkSkillsList    ms/list        target ≤ 20 ms (1,000 skills, digests warm)
//	BenchmarkServeStart    ms/start       target ≤ 300 ms (process start to first response)
//
// Commands and figures are in docs/performance.md ("MCP server").

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit/internal/benchtree"
	"github.com/skillkit/skillkit/mcp"
)

const (
	// benchSkills is the size of the generated tree.
	benchSkills = 1000
	// benchSessions is the number of concurrent client sessions.
	benchSessions = 32
	// benchFileSize is the size of the file resources/read reads.
	benchFileSize = 4096
	// benchFile is that file, in each of the first benchSessions skills.
	benchFile = "references/data.md"
	// benchVersion is the protocol revision of the session-based clients.
	benchVersion = "2025-11-25"
)

// benchTreeVersion keys the cached tree; bump it when benchTree changes.
const benchTreeVersion = "v1"

// benchTree returns the 1,000-skill tree, written once into
// os.TempDir (skillkit-bench-mcp-VERSION) and reused, as
// internal/benchtree does for its larger tree: writing 2,000 files on a
// busy disk costs seconds, more than a benchmark's run.
func benchTree(b *testing.B) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "skillkit-bench-mcp-"+benchTreeVersion)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "skillkit-bench-mcp-tmp-")
	if err != nil {
		b.Fatal(err)
	}
	if err := benchWriteTree(tmp); err != nil {
		os.RemoveAll(tmp)
		b.Fatal(err)
	}
	// Another process may have won the race; its tree is as good.
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, statErr := os.Stat(filepath.Join(dir, ".complete")); statErr != nil {
			b.Fatalf("installing the benchmark tree: %v", err)
		}
	}
	return dir
}

// benchWriteTree writes the tree into root.
func benchWriteTree(root string) error {
	if err := benchtree.Write(root, benchSkills); err != nil {
		return err
	}
	line := strings.Repeat("Data line for the resources/read benchmark, plain UTF-8 text. ", 3)[:127] + "\n"
	data := strings.Repeat(line, benchFileSize/len(line))
	for i := range benchSessions {
		p := filepath.Join(root, benchSkillName(i), filepath.FromSlash(benchFile))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(root, ".complete"), nil, 0o644)
}

func benchSkillName(i int) string { return fmt.Sprintf("skill-%05d", i) }

// benchServer serves the tree over HTTP on 127.0.0.1 with the tools
// `skillkit serve` offers (skill, skill_read, workspace_exec, here with
// the unconfined runner: no command runs) and returns the endpoint.
func benchServer(b *testing.B, root string, o *mcp.Options, ho *mcp.HTTPOptions) (*mcp.Server, string) {
	b.Helper()
	if o == nil {
		o = &mcp.Options{}
	}
	o.Refresh = -1 // no background refresh competing with the clients
	if os.Getenv("GOGC") == "" {
		// The collector's target `skillkit serve` runs with (see
		// internal/cli's serveGCPercent); GOGC=100 measures Go's default.
		old := debug.SetGCPercent(400)
		b.Cleanup(func() { debug.SetGCPercent(old) })
	}
	_, srv := newServer(b, root, localRunner(b), o)
	return srv, serveHTTP(b, srv, ho)
}

// benchConnect opens one client session on its own HTTP transport, as a
// separate client process would have.
func benchConnect(ctx context.Context, endpoint, version string) (*sdk.ClientSession, error) {
	return benchConnectWith(ctx, endpoint, version, benchHTTPClient())
}

// benchHTTPClient is an HTTP client with a transport of its own.
func benchHTTPClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

func benchConnectWith(ctx context.Context, endpoint, version string, hc *http.Client) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	if err := sdk.AddSendingCustomMethod[*benchListParams, *benchListResult](client, "skills/list"); err != nil {
		return nil, err
	}
	return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
}

// benchSessionsOpen opens n sessions, closed when b ends.
func benchSessionsOpen(b *testing.B, endpoint, version string, n int) []*sdk.ClientSession {
	b.Helper()
	css := make([]*sdk.ClientSession, n)
	for i := range css {
		var cs *sdk.ClientSession
		var err error
		pprof.Do(b.Context(), benchClientLabels, func(ctx context.Context) { cs, err = benchConnect(ctx, endpoint, version) })
		if err != nil {
			b.Fatal(err)
		}
		css[i] = cs
		b.Cleanup(func() { _ = cs.Close() })
	}
	return css
}

// benchClientLabels mark the client's goroutines (and those they start:
// the SDK client's, the HTTP transport's) in CPU profiles, so that
// go tool pprof -tagignore side=client shows the server's share.
var benchClientLabels = pprof.Labels("side", "client")

// benchParallel runs b.N operations over benchSessions goroutines, one
// session each, and returns the operations per second and the CPU time
// (user and system, of the whole process: server, clients and
// collector) per operation in µs. The second holds steadier than the
// first while other work shares the machine. An op's error fails the
// benchmark.
func benchParallel(b *testing.B, css []*sdk.ClientSession, op func(ctx context.Context, i int, cs *sdk.ClientSession) error) (perSec, cpuMicros float64) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	b.ResetTimer()
	cpu0 := benchCPU(b)
	start := time.Now()
	for i, cs := range css {
		wg.Go(func() {
			pprof.Do(b.Context(), benchClientLabels, func(ctx context.Context) {
				for next.Add(1) <= int64(b.N) {
					if err := op(ctx, i, cs); err != nil {
						once.Do(func() { first = err })
						return
					}
				}
			})
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := benchCPU(b) - cpu0
	b.StopTimer()
	if first != nil {
		b.Fatal(first)
	}
	return float64(b.N) / elapsed.Seconds(), float64(cpu.Microseconds()) / float64(b.N)
}

// benchCPU returns the CPU time the process has used.
func benchCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSkillCalls measures `skill` tool calls per second, 32 sessions
// calling at once, each loading one of eight skills in turn (a call
// records its load in the session, as a host's call does). Stateful
// sessions (2025-11-25) and the stateless revision, whose calls carry the
// session in _meta, are measured separately.
func BenchmarkSkillCalls(b *testing.B) {
	root := benchTree(b)
	for _, version := range []string{benchVersion, "2026-07-28"} {
		b.Run(version, func(b *testing.B) {
			_, endpoint := benchServer(b, root, nil, nil)
			css := benchSessionsOpen(b, endpoint, version, benchSessions)
			metas := make([]sdk.Meta, len(css))
			counts := make([]int, len(css))
			call := func(ctx context.Context, i int, cs *sdk.ClientSession) error {
				name := benchSkillName((i*8 + counts[i]%8) % benchSkills)
				counts[i]++
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "skill", Arguments: map[string]any{"name": name}, Meta: metas[i]})
				if err != nil {
					return fmt.Errorf("skill %s: %w", name, err)
				}
				if res.IsError || len(res.Content) == 0 {
					return fmt.Errorf("skill %s: error result %+v", name, res.Content)
				}
				if id, ok := res.Meta[mcp.SessionMetaKey].(string); ok && metas[i] == nil {
					metas[i] = sdk.Meta{mcp.SessionMetaKey: id}
				}
				return nil
			}
			for i, cs := range css { // each session's first call opens its skillkit session
				if err := call(b.Context(), i, cs); err != nil {
					b.Fatal(err)
				}
				if text := res0(b, cs, metas[i]); !strings.Contains(text, "# skill-") {
					b.Fatalf("the skill tool's text lacks the body: %.200q", text)
				}
			}
			perSec, cpu := benchParallel(b, css, call)
			b.ReportMetric(perSec, "calls/s")
			b.ReportMetric(cpu, "cpu-µs/call")
		})
	}
}

// res0 calls `skill` once more for its text, as a check.
func res0(b *testing.B, cs *sdk.ClientSession, meta sdk.Meta) string {
	b.Helper()
	res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "skill", Arguments: map[string]any{"name": benchSkillName(0)}, Meta: meta})
	if err != nil {
		b.Fatal(err)
	}
	tc, _ := res.Content[0].(*sdk.TextContent)
	if tc == nil {
		b.Fatalf("skill: content %T", res.Content[0])
	}
	return tc.Text
}

// BenchmarkResourceRead measures resources/read of a 4 KB file per
// second, 32 sessions reading at once, each its own skill's file.
func BenchmarkResourceRead(b *testing.B) {
	_, endpoint := benchServer(b, benchTree(b), nil, nil)
	css := benchSessionsOpen(b, endpoint, benchVersion, benchSessions)
	read := func(ctx context.Context, i int, cs *sdk.ClientSession) error {
		uri := "skill://" + benchSkillName(i) + "/" + benchFile
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			return fmt.Errorf("resources/read %s: %w", uri, err)
		}
		if len(res.Contents) != 1 || len(res.Contents[0].Text) != benchFileSize {
			return fmt.Errorf("resources/read %s: %d contents, want one text of %d bytes", uri, len(res.Contents), benchFileSize)
		}
		return nil
	}
	for i, cs := range css {
		if err := read(b.Context(), i, cs); err != nil {
			b.Fatal(err)
		}
	}
	perSec, cpu := benchParallel(b, css, read)
	b.ReportMetric(perSec, "reads/s")
	b.ReportMetric(cpu, "cpu-µs/read")
}

// Wire types of skills/list, as a host declares them.
type (
	benchListParams struct {
		sdk.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	benchListResult struct {
		sdk.ResultBase
		Skills []struct {
			URI       string `json:"uri"`
			Resources []struct {
				URI    string `json:"uri"`
				Digest string `json:"digest"`
			} `json:"resources"`
		} `json:"skills"`
		NextCursor string `json:"nextCursor,omitempty"`
	}
)

// benchListAll pages through skills/list and returns the skills listed.
func benchListAll(ctx context.Context, cs *sdk.ClientSession) (int, error) {
	n := 0
	cursor := ""
	for range 1000 {
		res, err := sdk.CallCustomMethod[*benchListParams, *benchListResult](ctx, cs, "skills/list", &benchListParams{Cursor: cursor})
		if err != nil {
			return n, fmt.Errorf("skills/list cursor %q: %w", cursor, err)
		}
		n += len(res.Skills)
		if res.NextCursor == "" {
			return n, nil
		}
		cursor = res.NextCursor
	}
	return n, fmt.Errorf("skills/list did not end")
}

// BenchmarkSkillsList measures listing all 1,000 skills with skills/list
// (every page, at the server's default page size of 100; each entry with
// the sha256 of every file), the digests warm: a first listing computed
// them. "one-client" is the latency of a listing on an otherwise idle
// server; "32-sessions" lists from 32 sessions at once and reports the
// mean latency of one listing under that load, and the server's
// throughput as ms of wall time per listing (ms/list-throughput).
func BenchmarkSkillsList(b *testing.B) {
	root := benchTree(b)
	_, endpoint := benchServer(b, root, nil, nil)
	css := benchSessionsOpen(b, endpoint, benchVersion, benchSessions)
	list := func(ctx context.Context, _ int, cs *sdk.ClientSession) error {
		n, err := benchListAll(ctx, cs)
		if err == nil && n != benchSkills {
			err = fmt.Errorf("skills/list listed %d skills, want %d", n, benchSkills)
		}
		return err
	}
	if err := list(b.Context(), 0, css[0]); err != nil { // digests warm
		b.Fatal(err)
	}
	b.Run("one-client", func(b *testing.B) {
		start, cpu0 := time.Now(), benchCPU(b)
		pprof.Do(b.Context(), benchClientLabels, func(ctx context.Context) {
			for b.Loop() {
				if err := list(ctx, 0, css[0]); err != nil {
					b.Fatal(err)
				}
			}
		})
		n := float64(b.N)
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000/n, "ms/list")
		b.ReportMetric(float64((benchCPU(b)-cpu0).Microseconds())/1000/n, "cpu-ms/list")
	})
	b.Run("32-sessions", func(b *testing.B) {
		var total atomic.Int64
		timed := func(ctx context.Context, i int, cs *sdk.ClientSession) error {
			s := time.Now()
			err := list(ctx, i, cs)
			total.Add(int64(time.Since(s)))
			return err
		}
		perSec, cpu := benchParallel(b, css, timed)
		b.ReportMetric(float64(total.Load())/1e6/float64(b.N), "ms/list")
		b.ReportMetric(1000/perSec, "ms/list-throughput")
		b.ReportMetric(cpu/1000, "cpu-ms/list")
	})
}

// The idle-session benchmark's client runs in a child process (this test
// binary again, running TestBenchIdleClients), so the heap measured is the
// server's alone.
const benchClientsEnv = "SKILLKIT_MCP_BENCH_CLIENTS" // ENDPOINT,N,CLOSEIDLE

// benchIdleSkills is the number of skills the idle sessions load between
// them, one each, all loaded once before the measure: what the registry
// pins of a skill it read is shared by every session that loads it, and
// not a session's own.
const benchIdleSkills = 8

// TestBenchIdleClients is the client side of BenchmarkIdleSession; it
// skips unless the benchmark started it. It opens n sessions, makes one
// `skill` call in each, prints "ready" and holds the sessions open until
// its stdin closes. With CLOSEIDLE true each session's client closes its
// idle keep-alive connection after the call, as the server's idle timeout
// would.
func TestBenchIdleClients(t *testing.T) {
	spec := os.Getenv(benchClientsEnv)
	if spec == "" {
		t.Skip("the client process of BenchmarkIdleSession")
	}
	parts := strings.Split(spec, ",")
	if len(parts) != 3 {
		t.Fatalf("%s=%q; want ENDPOINT,N,CLOSEIDLE", benchClientsEnv, spec)
	}
	endpoint, closeIdle := parts[0], parts[2] == "true"
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	css := make([]*sdk.ClientSession, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range css {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			hc := benchHTTPClient()
			cs, err := benchConnectWith(ctx, endpoint, benchVersion, hc)
			if err != nil {
				errs <- err
				return
			}
			css[i] = cs
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "skill", Arguments: map[string]any{"name": benchSkillName(i % benchIdleSkills)}})
			if err == nil && res.IsError {
				err = fmt.Errorf("skill: error result %+v", res.Content)
			}
			if err != nil {
				errs <- err
			}
			if closeIdle {
				hc.CloseIdleConnections() // the standalone SSE stream stays
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, cs := range css {
		_ = cs.Close()
	}
}

// BenchmarkIdleSession measures the server's memory per idle session.
// Method: the server runs in this process; a child process (the test
// binary, TestBenchIdleClients) opens 500 session-based HTTP sessions,
// each of which makes one `skill` call (one of benchIdleSkills skills)
// and then idles (its client keeps
// the standalone SSE stream and a keep-alive connection open, as the Go
// SDK's client does). After a forced GC (twice, with the finalizers run
// between) in the server's process, HeapInuse+StackInuse with the
// sessions open minus the same with none open (the server started,
// warmed by one session that made the same calls and closed), divided by
// 500. No client state is in this process. Reported: bytes/session (heap
// and goroutine stacks; the target), heap-bytes/session and
// goroutines/session.
func BenchmarkIdleSession(b *testing.B) {
	root := benchTree(b)
	// keepalive: each client keeps the connection of its call open, idle,
	// as the Go SDK's client does; after-idle-timeout: that connection is
	// closed, as ListenAndServe's server does after 30 s idle
	// (http.Server.IdleTimeout falls back to its ReadTimeout), leaving
	// the standalone SSE stream.
	for _, closeIdle := range []bool{false, true} {
		name := "keepalive"
		if closeIdle {
			name = "after-idle-timeout"
		}
		b.Run(name, func(b *testing.B) { benchIdleSession(b, root, closeIdle) })
	}
}

func benchIdleSession(b *testing.B, root string, closeIdle bool) {
	const n = 500
	if os.Getenv(benchHeapProfileEnv) != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 4096
	}
	// Every session keeps its notification stream, as with fewer sessions
	// than HTTPOptions.MaxStreams (64 by default; the streams past it
	// are refused, and those sessions would cost less).
	srv, endpoint := benchServer(b, root, &mcp.Options{MaxSessions: 2 * n}, &mcp.HTTPOptions{MaxStreams: 2 * n})
	warm, err := benchConnect(b.Context(), endpoint, benchVersion)
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchIdleSkills { // their bodies pinned in the snapshot, shared by every session
		if _, err := warm.CallTool(b.Context(), &sdk.CallToolParams{Name: "skill", Arguments: map[string]any{"name": benchSkillName(i)}}); err != nil {
			b.Fatal(err)
		}
	}
	_ = warm.Close()
	http.DefaultClient.CloseIdleConnections()
	waitSessions(b, srv, 0)
	var heap, stack, goroutines float64
	for b.Loop() {
		before := benchMem()
		if path := os.Getenv(benchHeapProfileEnv); path != "" {
			benchHeapProfile(b, path+".base")
		}
		g0 := runtime.NumGoroutine()
		cmd := exec.Command(os.Args[0], "-test.run", "^TestBenchIdleClients$", "-test.count", "1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d,%t", benchClientsEnv, endpoint, n, closeIdle))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		ready := false
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready = true
				break
			}
			b.Log("client: ", sc.Text())
		}
		if !ready {
			_ = cmd.Wait()
			b.Fatal("the client process ended before its sessions were ready")
		}
		if got := srv.Sessions(); got != n {
			b.Errorf("%d sessions open, want %d", got, n)
		}
		time.Sleep(100 * time.Millisecond) // let the standalone SSE streams settle
		after := benchMem()
		goroutines += float64(runtime.NumGoroutine() - g0)
		if path := os.Getenv(benchHeapProfileEnv); path != "" {
			benchHeapProfile(b, path)
		}
		heap += float64(after.HeapInuse) - float64(before.HeapInuse)
		stack += float64(after.StackInuse) - float64(before.StackInuse)
		stdin.Close()
		go func() { _, _ = io.Copy(io.Discard, stdout) }()
		if err := cmd.Wait(); err != nil {
			b.Fatalf("client process: %v", err)
		}
		waitSessions(b, srv, 0)
	}
	runs := float64(b.N) * n
	b.ReportMetric((heap+stack)/runs, "bytes/session")
	b.ReportMetric(heap/runs, "heap-bytes/session")
	b.ReportMetric(goroutines/runs, "goroutines/session")
}

// benchHeapProfileEnv names a file BenchmarkIdleSession writes a heap
// profile to while the sessions are open, and FILE.base before they are,
// to see what a session holds (go tool pprof -base FILE.base FILE), and
// the goroutines in FILE.goroutines; setting it samples every 4 KB
// allocated.
const benchHeapProfileEnv = "SKILLKIT_MCP_BENCH_HEAPPROFILE"

func benchHeapProfile(b *testing.B, path string) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
	g, err := os.Create(path + ".goroutines")
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	if err := pprof.Lookup("goroutine").WriteTo(g, 1); err != nil {
		b.Fatal(err)
	}
}

// benchMem collects garbage and returns the memory statistics.
func benchMem() runtime.MemStats {
	runtime.GC()
	runtime.GC() // what finalizers of the first freed
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

// waitSessions waits until the server has n sessions.
func waitSessions(b *testing.B, srv *mcp.Server, n int) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for srv.Sessions() != n {
		if time.Now().After(deadline) {
			b.Fatalf("%d sessions after 30 s, want %d", srv.Sessions(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkServeStart measures `skillkit serve` on the 1,000-skill tree
// from starting the process to the first response: the initialize result
// over stdio. The binary is built into a temporary folder; serve runs
// with its default tools (workspace_exec in the isolated sandbox) when
// the sandbox works on this machine, else with --no-exec (b.Log says
// which). HOME and the XDG folders point into a temporary folder, so no
// default root or cache of the machine is read.
func BenchmarkServeStart(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "skillkit")
	build := exec.Command("go", "build", "-o", bin, "./cmd/skillkit")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	root := benchTree(b)
	home := b.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "SKILLKIT_PATH=")
	args := []string{"serve", root}
	if out, err := exec.Command(bin, "exec", "--", "true").CombinedOutput(); err != nil {
		b.Logf("the isolated sandbox does not run here (%v: %s); serving with --no-exec", err, strings.TrimSpace(string(out)))
		args = []string{"serve", "--no-exec", root}
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	start1 := func() time.Duration {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		// The request waits in the pipe from the start, as a host writes
		// it as soon as it has spawned the server.
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := io.WriteString(stdin, initialize); err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		d := time.Since(start)
		stdin.Close()
		werr := cmd.Wait()
		if err != nil || !strings.Contains(line, `"result"`) || !strings.Contains(line, `"serverInfo"`) {
			b.Fatalf("initialize: %v %q (exit %v)\n%s", err, line, werr, stderr.String())
		}
		if werr != nil {
			b.Fatalf("serve: %v\n%s", werr, stderr.String())
		}
		return d
	}
	start1() // the binary and the tree in the page cache
	var total time.Duration
	for b.Loop() {
		total += start1()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/start")
}
