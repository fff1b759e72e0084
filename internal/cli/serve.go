package cli

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/mcp"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session/redisstore"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
	rootwatch "github.com/skillkit/skillkit/watch"
	"github.com/skillkit/skillkit/workspace"
)

// serveFlags are the flags of `skillkit serve`.
type serveFlags struct {
	http           string
	token          string
	noExec         bool
	localExec      bool
	tools          []string
	allowedHosts   []string
	allowedOrigins []string
	idle           time.Duration
	maxSessions    int
	maxCalls       int
	noPrompts      bool
	verbose        bool
	store          string
	workspaces     string
	sandbox        execFlags
}

// serveGCPercent is serve's garbage collection target when GOGC is unset.
const serveGCPercent = 400

// tokenEnv is the variable serve reads its bearer token from.
const tokenEnv = "SKILLKIT_TOKEN"

// protocolRevisions is what serve tells the operator it speaks.
const protocolRevisions = "2026-07-28 (stateless: the session travels in _meta), 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05 (sessions)"

func newServe(env *Env) *cobra.Command {
	f := &serveFlags{sandbox: execFlags{timeout: execMaxTimeout}}
	cmd := &cobra.Command{
		Use:   "serve [--http ADDR] [--token T] [--no-exec | --local-exec | --runner container --image IMG] [--tools NAMES] [--from-mcp URL]... [ROOT...]",
		Short: "Serve the skills over MCP (stdio, or streamable HTTP with --http) to any MCP client",
		Long: "serve offers the skills of the ROOTs (or the default roots) to MCP clients — Claude Code,\n" +
			"Codex, Cursor, Goose or any other host:\n" +
			"  tools      skill (its description lists the skills), skill_read, and workspace_exec, which\n" +
			"             runs commands in the session's own workspace in the isolated sandbox (--no-exec\n" +
			"             leaves it out; --local-exec runs them UNCONFINED, trusted skills only, and is\n" +
			"             refused on a non-loopback address). --tools NAMES picks the tools instead, from\n" +
			"             skill, skill_load, skill_select_docs, skill_list_docs, skill_read, workspace_exec.\n" +
			"  prompts    skills-catalog, and one per user-invocable skill (a host's /name commands).\n" +
			"  resources  every file of every skill as skill://NAME/PATH, and the skills extension\n" +
			"             (io.modelcontextprotocol/skills: skills/list, skills/get with sha256 digests,\n" +
			"             resources/directory/read). Skills over 512 files or 16 MiB are not served as\n" +
			"             resources, and serve says so when it starts.\n\n" +
			"Without --http, serve speaks MCP on stdin and stdout (how a host starts it) and ends when\n" +
			"stdin closes. With --http ADDR it listens on ADDR (default port 0 picks one; the endpoint is\n" +
			"/mcp) until interrupted, then lets running calls finish. It binds loopback only unless a\n" +
			"bearer token is set (--token, else $" + tokenEnv + "; clients send Authorization: Bearer TOKEN);\n" +
			"Host and Origin headers other than loopback are refused unless --allowed-host or\n" +
			"--allowed-origin names them.\n\n" +
			"Each MCP session is a skillkit session with its own load state and workspace, removed\n" +
			"when the session ends (DELETE, end of stdio, --idle-timeout without a request). Clients of\n" +
			"revision 2026-07-28 have no sessions: every tool result carries\n" +
			"_meta[\"" + mcp.SessionMetaKey + "\"], and a call that sends it back continues that session.\n" +
			"Skill roots are watched: an added, changed or removed skill reaches clients within about\n" +
			"a quarter of a second as list_changed notifications (a root too large to watch is re-read\n" +
			"every " + mcp.DefaultRefresh.String() + " instead).\n\n" +
			"--from-mcp URL adds the skills another MCP server lists through the skills extension: read\n" +
			"lazily from that server only, each read checked against the listing (size, sha256, front\n" +
			"matter), their allowed-tools ignored; $" + fromMCPTokenEnv + " is sent to them as a bearer token.\n\n" +
			"On start, serve prints to stderr what it serves: skills, tools, prompts, the endpoint and\n" +
			"the protocol revisions.",
		RunE: func(cmd *cobra.Command, roots []string) error {
			return runServe(cmd, env, f, roots)
		},
	}
	addDepthFlag(cmd, env)
	addLimitFlags(cmd, env, false)
	addFromMCPFlag(cmd, &env.mcp)
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on ADDR (HOST:PORT, e.g. 127.0.0.1:8080) instead of stdio")
	fl.StringVar(&f.token, "token", "", "bearer token HTTP clients must send (default $"+tokenEnv+"); needed off loopback")
	fl.BoolVar(&f.noExec, "no-exec", false, "leave workspace_exec out: serve knowledge only")
	fl.BoolVar(&f.localExec, "local-exec", false, "run workspace_exec commands UNCONFINED, without the sandbox (trusted skills only; loopback only)")
	fl.StringSliceVar(&f.tools, "tools", nil, "serve these tools, comma-separated (default skill,skill_read,workspace_exec)")
	fl.StringArrayVar(&f.allowedHosts, "allowed-host", nil, "accept this Host header besides loopback names (repeatable)")
	fl.StringArrayVar(&f.allowedOrigins, "allowed-origin", nil, "accept this Origin header besides loopback origins (repeatable)")
	fl.DurationVar(&f.idle, "idle-timeout", mcp.DefaultIdleTimeout, "end a session, removing its workspace, after this long without a request")
	fl.IntVar(&f.maxSessions, "max-sessions", mcp.DefaultMaxSessions, "most sessions alive at once")
	fl.IntVar(&f.maxCalls, "max-calls", mcp.DefaultMaxCalls, "most tool calls one session runs at once")
	fl.BoolVar(&f.noPrompts, "no-prompts", false, "offer no prompts")
	fl.StringVar(&f.store, "store", "", "keep sessions in this Redis server (redis://HOST:PORT[/PREFIX]), shared with other serve replicas")
	fl.StringVar(&f.workspaces, "workspaces", "", "keep workspaces under DIR (shared with the replicas on this host) instead of a temporary folder")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log sessions and refreshes to stderr")
	fl.BoolVar(&f.sandbox.network, "network", false, "allow network access in the isolated sandbox")
	fl.BoolVar(&f.sandbox.unboundedDisk, "unbounded-disk", false, "accept workspaces whose disk use the sandbox cannot bound (needed without root)")
	fl.BoolVar(&f.sandbox.allowDowngrade, "allow-downgrade", false, "run the sandbox without a layer this host lacks (Landlock, seccomp, cgroups), with a warning")
	addRunnerFlags(fl, &f.sandbox)
	return cmd
}

// check refuses contradictory flags before anything starts.
func (f *serveFlags) check(cmd *cobra.Command) error {
	if f.sandbox.runner == "local" {
		f.localExec = true // --runner local is --local-exec, with its checks
	}
	if f.noExec && (cmd.Flags().Changed("runner") || f.sandbox.image != "") {
		return errors.New("serve: --runner and --image choose where workspace_exec runs, which --no-exec leaves out; drop one of them")
	}
	if f.noExec && f.localExec {
		return errors.New("serve: --no-exec and --local-exec contradict each other; drop one")
	}
	if f.noExec || f.localExec {
		for _, name := range []string{"network", "unbounded-disk", "allow-downgrade"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("serve: --%s configures the isolated sandbox, which --no-exec and --local-exec do not use; drop --%s", name, name)
			}
		}
	}
	if f.localExec {
		if f.http == "" {
			return nil
		}
		host, _, err := net.SplitHostPort(f.http)
		if err == nil && !isLoopbackHost(host) {
			return fmt.Errorf("serve: --local-exec runs commands unconfined, so it is refused on the non-loopback address %s; listen on 127.0.0.1, or drop --local-exec", f.http)
		}
	}
	if f.workspaces != "" && f.noExec {
		return errors.New("serve: --workspaces holds the workspaces of workspace_exec, which --no-exec leaves out; drop one of them")
	}
	if f.http == "" {
		for _, name := range []string{"token", "allowed-host", "allowed-origin", "store"} {
			if cmd.Flags().Changed(name) {
				return fmt.Errorf("serve: --%s applies to --http only; add --http ADDR or drop --%s", name, name)
			}
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"max-sessions", f.maxSessions}, {"max-calls", f.maxCalls}} {
		if n.v < 1 {
			return fmt.Errorf("serve: --%s is %d; give a positive number", n.name, n.v)
		}
	}
	if f.idle <= 0 {
		return fmt.Errorf("serve: --idle-timeout is %v; give a positive duration such as 30m", f.idle)
	}
	return nil
}

// isLoopbackHost reports whether a listen host is loopback.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// toolNames returns the tools to serve, checked against --no-exec.
func (f *serveFlags) toolNames() ([]string, error) {
	names := f.tools
	if len(names) == 0 {
		names = []string{tools.SkillName, tools.ReadName}
		if !f.noExec {
			names = append(names, tools.WorkspaceExecName)
		}
		return names, nil
	}
	for _, n := range names {
		if slices.Contains(tools.ExecToolNames(), n) && f.noExec {
			return nil, fmt.Errorf("serve: --tools names %s, but --no-exec leaves commands out; drop one of them", n)
		}
	}
	return names, nil
}

func runServe(cmd *cobra.Command, env *Env, f *serveFlags, roots []string) error {
	ctx := cmd.Context()
	if env.Getenv("GOGC") == "" {
		// A server's heap is mostly short-lived request garbage: collecting
		// less often gives back a sixth of the CPU a read costs, for a
		// larger peak heap. GOGC overrides it.
		defer debug.SetGCPercent(debug.SetGCPercent(serveGCPercent))
	}
	if err := f.check(cmd); err != nil {
		return err
	}
	names, err := f.toolNames()
	if err != nil {
		return err
	}
	exec := slices.ContainsFunc(names, func(n string) bool { return slices.Contains(tools.ExecToolNames(), n) })
	token := f.token
	if token == "" {
		token = env.Getenv(tokenEnv)
	}
	if f.http != "" {
		if err := mcp.CheckListenAddr(f.http, token); err != nil {
			return fmt.Errorf("serve: --http: %s", strings.TrimPrefix(err.Error(), "mcp: "))
		}
	}
	srcs, err := env.rootSources(ctx, roots)
	if err != nil {
		return err
	}
	remote, err := env.mcp.sources(ctx, env, len(srcs))
	if err != nil {
		return err
	}
	srcs = append(srcs, remote...)
	if len(srcs) == 0 {
		srcs = []source.Source{source.FS(embed.FS{}, "no skill roots", 0)}
	}
	regOpts, err := env.registryOptions()
	if err != nil {
		return err
	}
	kopts := &skillkit.Options{Sources: srcs, Registry: regOpts,
		Agents: map[string]skillkit.AgentOptions{mcp.DefaultAgent: {SkillTools: names}}}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	shared := f.store != ""
	if shared {
		// The Redis client reports its retries on its own: with -v only.
		redis.SetLogger(redisLog{logger})
		st, err := openSharedStore(ctx, f.store, f.idle)
		if err != nil {
			return err
		}
		defer st.Close()
		kopts.Store = st
	}
	closeRunner := func() {}
	if exec {
		sf := f.sandbox
		sf.local = f.localExec
		runner, err := execRunner(env, sf, "serve", "every workspace_exec command")
		if err != nil {
			return err
		}
		if c, ok := runner.(io.Closer); ok {
			closeRunner = func() { _ = c.Close() }
		}
		wsDir := os.TempDir()
		if f.workspaces != "" {
			wsDir = hostPath(env, f.workspaces)
		}
		if err := checkWorkspaceDisk(runner, sf, "serve", "every workspace_exec command", wsDir, "pass --no-exec to serve without commands"); err != nil {
			closeRunner()
			return err
		}
		kopts.Exec = &skillkit.ExecOptions{Runner: runner, Tool: &tools.ExecOptions{Network: f.sandbox.network}}
		if f.workspaces != "" {
			// Replicas on this host share the folder: a session continued
			// on another finds its files. Unused workspaces are swept after
			// the idle timeout.
			wm, err := workspace.New(&workspace.Options{Root: hostPath(env, f.workspaces), TTL: f.idle})
			if err != nil {
				closeRunner()
				return fmt.Errorf("serve: --workspaces: %w", err)
			}
			defer wm.Close()
			kopts.Exec.Workspaces = wm
		}
	}
	defer closeRunner()
	kit, err := skillkit.New(ctx, kopts)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer func() {
		if err := kit.Close(); err != nil {
			fmt.Fprintf(env.Stderr, "skillkit serve: warning: closing the kit (workspaces): %v\n", err)
		}
	}()
	snap := kit.Registry().Snapshot()
	printDiagnostics(env.Stderr, snap.Diagnostics())
	say := func(format string, args ...any) { fmt.Fprintf(env.Stderr, "skillkit serve: "+format+"\n", args...) }
	// Local roots are watched; the server polls only when the watcher
	// cannot cover them.
	var srv *mcp.Server
	var published sync.WaitGroup
	w, werr := rootwatch.Start(ctx, kit.Registry(), &rootwatch.Options{
		OnChange: func(ctx context.Context, snap *registry.Snapshot) {
			published.Wait() // the server exists once New returned
			if srv == nil {
				return
			}
			say("skills changed: %d now", snap.Len())
			printDiagnostics(env.Stderr, snap.Diagnostics())
			if err := srv.Publish(ctx); err != nil {
				say("warning: telling clients of the change: %v", err)
			}
		},
		OnError: func(err error) { say("warning: %v", err) },
	})
	published.Add(1)
	refresh := time.Duration(-1)
	if werr != nil {
		say("warning: %v; polling the roots every %v instead", werr, mcp.DefaultRefresh)
		refresh = 0
	} else {
		defer w.Close()
	}
	srv, err = mcp.New(ctx, kit, &mcp.Options{IdleTimeout: f.idle, MaxSessions: f.maxSessions, MaxCalls: f.maxCalls,
		NoPrompts: f.noPrompts, Logger: logger, Version: version(), Refresh: refresh, Shared: shared})
	published.Done()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer srv.Close()
	var from []string
	for _, s := range srcs {
		from = append(from, s.Label)
	}
	say("skills: %d from %s", snap.Len(), strings.Join(from, ", "))
	for _, w := range srv.Withheld(ctx) {
		say("not served as resources: %s", w)
	}
	runnerName := "isolated sandbox"
	switch {
	case f.localExec:
		runnerName = "UNCONFINED (--local-exec)"
	case f.sandbox.runner == "container":
		runnerName = "container runner (image " + f.sandbox.image + ")"
	}
	toolLine := strings.Join(srv.ToolNames(), ", ")
	if exec {
		toolLine += " — commands run in the " + runnerName
	}
	say("tools: %s", toolLine)
	if !f.noPrompts {
		say("prompts: %d (%s and one per user-invocable skill)", len(srv.PromptNames()), mcp.CatalogPrompt)
	}
	say("protocol revisions: %s", protocolRevisions)
	if shared {
		say("sessions: shared in %s (stateless clients may move between replicas; session-based ones need sticky routing)", redactStore(f.store))
	}
	if f.http == "" {
		say("transport: stdio (ends when stdin closes)")
		return srv.ServeStdio(ctx, io.NopCloser(env.Stdin), nopWriteCloser{env.Stdout})
	}
	opts := &mcp.HTTPOptions{Token: token, AllowedHosts: f.allowedHosts, AllowedOrigins: f.allowedOrigins}
	return srv.ListenAndServe(ctx, f.http, opts, func(a net.Addr) {
		auth := "no token (loopback only)"
		if token != "" {
			auth = "bearer token required"
		}
		say("endpoint: http://%s/mcp", a)
		say("auth: %s", auth)
	})
}

// nopWriteCloser lets serve hand its stdout to the transport without the
// transport closing it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// version is the module's version as built, for serverInfo.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// openSharedStore opens the --store session store: a Redis server,
// redis://HOST:PORT[/PREFIX], whose sessions expire after idle.
func openSharedStore(ctx context.Context, raw string, idle time.Duration) (*redisstore.Store, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "redis" || u.Host == "" {
		return nil, fmt.Errorf("serve: --store %q: give a Redis server as redis://HOST:PORT[/PREFIX], e.g. redis://127.0.0.1:6379", redactStore(raw))
	}
	opts := &redisstore.Options{Addr: u.Host, IdleTTL: idle}
	if p := strings.Trim(u.Path, "/"); p != "" {
		opts.Prefix = p + ":"
	}
	if pw, ok := u.User.Password(); ok {
		opts.Client = redis.NewClient(&redis.Options{Addr: u.Host, Username: u.User.Username(), Password: pw})
		opts.Addr = ""
	}
	st, err := redisstore.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("serve: --store: %w", err)
	}
	return st, nil
}

// redisLog passes the Redis client's messages to the serve log at debug
// level (the client otherwise prints them on stderr).
type redisLog struct{ l *slog.Logger }

// Printf implements the Redis client's logging interface.
func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.l.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}

// redactStore hides a password in a --store URL.
func redactStore(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
