package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/tools"
)

// Defaults of Options.
const (
	// DefaultAgent is the kit agent whose tools and sessions the server
	// serves when Options.Agent is empty.
	DefaultAgent = "mcp"
	// DefaultIdleTimeout ends a session that made no request for this long.
	DefaultIdleTimeout = 30 * time.Minute
	// DefaultMaxSessions bounds the sessions alive at once.
	DefaultMaxSessions = 256
	// DefaultMaxCalls bounds the tool calls one session runs at once.
	DefaultMaxCalls = 4
	// DefaultRefresh is how often the skill roots are checked for changes.
	DefaultRefresh = 2 * time.Second
	// DefaultPageSize is the number of entries of a skills/list page.
	DefaultPageSize = 100
)

// SessionMetaKey is the _meta key of a tool call and its result that
// carries the skillkit session a stateless (2026-07-28) client continues:
// the server puts it on every tool result, and a client that sends it back
// on its next tools/call keeps its load state and workspace. A call
// without it starts a new session.
const SessionMetaKey = "io.github.skillkit/session"

// Options configure a Server. The zero value serves the kit's default
// agent configuration under DefaultAgent with the defaults above.
type Options struct {
	// Agent names the kit agent whose tools the server offers and whose
	// sessions it opens ("" is DefaultAgent): configure its SkillTools in
	// skillkit.Options.Agents to choose the tools.
	Agent string
	// Name and Version identify the server to clients ("skillkit" and
	// "dev" when empty).
	Name, Version string
	// IdleTimeout ends a session (and removes its workspace) after this
	// long without a request; 0 is DefaultIdleTimeout, negative never.
	IdleTimeout time.Duration
	// MaxSessions bounds the sessions alive at once; 0 is
	// DefaultMaxSessions. A stateless client's idle session is ended to
	// make room; when none can be, new sessions are refused.
	MaxSessions int
	// MaxCalls bounds the tool calls one session runs at once; 0 is
	// DefaultMaxCalls. A call over it fails at once with a tool error.
	MaxCalls int
	// Refresh is how often the kit's registry is refreshed, so changed
	// skills reach clients (resources/list_changed, the catalog, the
	// prompts); 0 is DefaultRefresh, negative never.
	Refresh time.Duration
	// PageSize is the number of skills per skills/list page; 0 is
	// DefaultPageSize.
	PageSize int
	// NoPrompts leaves out the prompts (the catalog and one per
	// user-invocable skill).
	NoPrompts bool
	// KeepSessions keeps a session's events in the kit's store when it
	// ends; by default they are deleted with its workspace.
	KeepSessions bool
	// Shared says the kit's store (and its workspaces' root) is shared
	// with other servers, replicas behind one address: a stateless call
	// may then continue a session the store holds that this server has
	// not seen, and a session that ends here (idle, shutdown) is only
	// forgotten — its events and workspace stay for the other servers,
	// until the store's expiry and the workspaces' TTL sweep end them.
	Shared bool
	// Logger receives what the server reports (sessions ended, refresh
	// failures); nil discards it.
	Logger *slog.Logger
}

// Server serves one kit's skills over MCP: the agent's tools, prompts,
// every skill file as a skill:// resource and the skills extension
// (io.modelcontextprotocol/skills). One MCP session is one skillkit
// session: its load state and its workspace last as long as it does.
// Serve it with ServeStdio, Handler or ListenAndServe; Close ends every
// session. It is safe for concurrent use.
type Server struct {
	kit   *skillkit.Kit
	o     Options
	tools []tools.Tool

	// stateful serves stdio and the session-based HTTP revisions;
	// stateless the 2026-07-28 requests, each in a session of its own.
	stateful, stateless *server

	sessions *sessionTable

	mu   sync.Mutex // guards snap and closed
	snap *registry.Snapshot
	// closed is set by Close.
	closed bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// server is one SDK server and the pieces that follow the snapshot.
type server struct {
	sdk     *sdk.Server
	skills  *skillsServer
	prompts []string // names of the prompts added
}

// New builds a server over kit. The kit stays the caller's: Close the
// server first, then the kit.
func New(ctx context.Context, kit *skillkit.Kit, opts *Options) (*Server, error) {
	if kit == nil {
		return nil, errors.New("mcp: New: kit is nil; build one with skillkit.New")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Agent == "" {
		o.Agent = DefaultAgent
	}
	if o.Name == "" {
		o.Name = "skillkit"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxSessions", o.MaxSessions}, {"MaxCalls", o.MaxCalls}, {"PageSize", o.PageSize}} {
		if f.v < 0 {
			return nil, fmt.Errorf("mcp: Options.%s is %d; give a positive number, or 0 for the default", f.name, f.v)
		}
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxCalls == 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.Refresh == 0 {
		o.Refresh = DefaultRefresh
	}
	if o.PageSize == 0 {
		o.PageSize = DefaultPageSize
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ts, err := kit.Tools(ctx, o.Agent)
	if err != nil {
		return nil, fmt.Errorf("mcp: the tools of agent %q: %w", o.Agent, err)
	}
	s := &Server{kit: kit, o: o, tools: ts, stop: make(chan struct{})}
	s.snap = kit.Registry().Snapshot()
	s.sessions = newSessionTable(s)
	catalog, err := kit.Catalog(ctx, o.Agent)
	if err != nil {
		return nil, fmt.Errorf("mcp: the catalog: %w", err)
	}
	if s.stateful, err = s.newServer(ctx, false, catalog); err != nil {
		return nil, err
	}
	if s.stateless, err = s.newServer(ctx, true, catalog); err != nil {
		return nil, err
	}
	if o.Refresh > 0 {
		s.wg.Add(1)
		go s.refreshLoop()
	}
	if o.IdleTimeout > 0 {
		s.wg.Add(1)
		go s.sweepLoop()
	}
	return s, nil
}

// ToolNames returns the names of the tools the server offers, in order.
func (s *Server) ToolNames() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name
	}
	return names
}

// PromptNames returns the names of the prompts the server offers now.
func (s *Server) PromptNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.stateful.prompts)
}

// Withheld returns a line for each skill the server does not serve as
// resources because it is over the extension's limits (512 files, 16
// MiB), saying which limit.
func (s *Server) Withheld(ctx context.Context) []string {
	return withheld(ctx, s.kit.Skills(ctx))
}

// Sessions returns the number of sessions alive.
func (s *Server) Sessions() int { return s.sessions.len() }

// newServer builds one SDK server with the tools, prompts and skills.
func (s *Server) newServer(ctx context.Context, stateless bool, catalog string) (*server, error) {
	caps := &sdk.ServerCapabilities{
		Tools:   &sdk.ToolCapabilities{ListChanged: true},
		Prompts: &sdk.PromptCapabilities{ListChanged: true},
	}
	capabilities(caps)
	srv := sdk.NewServer(&sdk.Implementation{Name: s.o.Name, Version: s.o.Version}, &sdk.ServerOptions{
		Capabilities: caps,
		Instructions: instructions,
		Logger:       slog.New(quietUnsent{s.o.Logger.Handler()}),
	})
	sv := &server{sdk: srv}
	for _, t := range s.tools {
		mt, err := s.mcpTool(t, catalog)
		if err != nil {
			return nil, err
		}
		srv.AddTool(mt, s.toolHandler(t, stateless))
	}
	if !s.o.NoPrompts {
		sv.prompts = s.setPrompts(ctx, srv, nil, s.kit.Skills(ctx), catalog)
	}
	sv.skills = addSkills(srv, skillsConfig{Snapshot: s.kit.Skills, PageSize: s.o.PageSize, TTL: ttlFor(s.o.Refresh),
		Renew: func(ctx context.Context, stale *registry.Snapshot) (*registry.Snapshot, error) {
			if _, err := s.kit.Registry().Renew(ctx, stale); err != nil {
				return nil, err
			}
			return s.kit.Skills(ctx), nil
		}})
	return sv, nil
}

// instructions tell a client what the server is for.
const instructions = "This server offers Agent Skills: folders of instructions, scripts and documents for " +
	"specific tasks. The skill tool's description lists them; call it with a skill's name to load " +
	"its instructions before doing a task it matches, and skill_read to read one of its files. " +
	"Every file is also a skill:// resource."

// ttlFor is how long a client may cache a listing: the refresh period,
// within which a change cannot be seen anyway.
func ttlFor(refresh time.Duration) time.Duration {
	if refresh <= 0 {
		return time.Minute
	}
	return refresh
}

// refreshLoop refreshes the registry every Options.Refresh and publishes
// a changed snapshot.
func (s *Server) refreshLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.o.Refresh)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := s.Refresh(context.Background()); err != nil {
				s.o.Logger.Warn("refreshing the skills", "error", err)
			}
		}
	}
}

// Refresh reads the skill roots again now and, when a skill changed,
// tells clients: resources/list_changed, the skill tool's catalog and the
// prompts (tools/list_changed, prompts/list_changed). The server does this
// every Options.Refresh on its own.
func (s *Server) Refresh(ctx context.Context) error {
	if _, err := s.kit.Registry().Refresh(ctx); err != nil {
		return err
	}
	return s.Publish(ctx)
}

// Publish tells clients about the registry's current snapshot when it is
// not the one they were last told of: what Refresh does after its
// refresh, for a caller that refreshes the registry itself (a file
// watcher, see package watch).
func (s *Server) Publish(ctx context.Context) error {
	snap := s.kit.Registry().Snapshot()
	s.mu.Lock()
	defer s.mu.Unlock()
	if snap == s.snap || s.closed {
		return nil
	}
	s.snap = snap
	catalog, err := s.kit.Catalog(ctx, s.o.Agent)
	if err != nil {
		return err
	}
	view := s.kit.Skills(ctx)
	for _, sv := range []*server{s.stateful, s.stateless} {
		for _, t := range s.tools {
			if t.Name != tools.SkillName {
				continue
			}
			mt, err := s.mcpTool(t, catalog)
			if err != nil {
				return err
			}
			// Replacing a tool sends tools/list_changed.
			sv.sdk.AddTool(mt, s.toolHandler(t, sv == s.stateless))
		}
		if !s.o.NoPrompts {
			sv.prompts = s.setPrompts(ctx, sv.sdk, sv.prompts, view, catalog)
		}
		sv.skills.Changed(ctx)
	}
	return nil
}

// sweepLoop ends idle sessions.
func (s *Server) sweepLoop() {
	defer s.wg.Done()
	period := min(max(s.o.IdleTimeout/4, 10*time.Millisecond), time.Minute)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sessions.sweep(time.Now().Add(-s.o.IdleTimeout))
		}
	}
}

// Close ends every session (killing what runs in its workspace and
// removing it) and stops the refresh. Connections still open get errors
// from then on. Close may be called more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	s.wg.Wait()
	return s.sessions.closeAll()
}

// quietUnsent turns the SDK's warning about a change notification that
// found no open stream into a debug record: a client that never opened
// its notification stream (or has gone) is normal, and the warning would
// come once per such session at every change of the skills.
type quietUnsent struct{ slog.Handler }

// Handle implements slog.Handler.
func (q quietUnsent) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && strings.HasPrefix(r.Message, "calling notifications/") && strings.Contains(r.Message, "stream not connected") {
		r.Level = slog.LevelDebug
		if !q.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return q.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (q quietUnsent) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietUnsent{q.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (q quietUnsent) WithGroup(name string) slog.Handler {
	return quietUnsent{q.Handler.WithGroup(name)}
}
