// Package skillkit is the one entry point of the Agent Skills runtime: it
// discovers skills, gives each agent its catalog and its tools, and opens
// conversations that record a model's turns and run its tool calls —
// in a sandbox when commands are enabled.
//
// A program adds skills to its own model loop in a few lines: build a Kit,
// open a conversation, then alternate Request (the exact next request:
// messages and tools, in the Chat Completions shape) and Respond (what the
// model answered: text and tool calls with the provider's IDs):
//
//	kit, err := skillkit.New(ctx, &skillkit.Options{Roots: []string{"skills"}})
//	if err != nil { ... }
//	defer kit.Close()
//	conv, err := kit.Open(ctx, "", "assistant") // "" starts a new session
//	conv.User(ctx, "Summarise data.csv")
//	for {
//		req, _ := conv.Request(ctx)          // send req.Messages and req.Tools
//		answer := askYourModel(req)          // a skillkit.Assistant
//		conv.Respond(ctx, answer)            // records it, runs the calls
//		if len(answer.Calls) == 0 { break }
//	}
//
// Everything is configured once, in Options, whose zero value is a working
// kit: the default skill roots, an in-memory session store, every agent
// with the skill tools, turn lifetime and tool-result placement, and no
// command execution. Options.Exec adds workspace_exec, sandboxed by the
// isolated runner unless another Runner is named. Bad values are errors
// from New that name the field.
package skillkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/source/archive"
	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/workspace"
)

// Conversation is one agent's handle on a session: see package
// conversation.
type Conversation = conversation.Conversation

// Assistant is one answer of the model: its text and tool calls.
type Assistant = conversation.Assistant

// ToolCall is one tool call of an answer, with the provider's ID.
type ToolCall = session.ToolCall

// Request is a model request: messages and tool definitions.
type Request = assembly.Request

// Options configures a Kit. A nil *Options, like the zero value, means the
// defaults.
type Options struct {
	// Roots are folders of skills, best first (a skill of an earlier root
	// shadows a same-name one of a later root, which is reported), or
	// .zip, .tar and .tar.gz archives of them: http(s) URLs (an optional
	// #sha256=HEX pins the content) or files, unpacked into the cache of
	// package source/archive ($SKILLKIT_CACHE_DIR). When
	// Roots and Sources are both empty the default roots are searched:
	// $SKILLKIT_PATH, the project's .agents/skills and ~/.agents/skills.
	Roots []string
	// Sources are further skill sources (embedded files, any fs.FS),
	// ranked after Roots by their own Rank.
	Sources []source.Source
	// Registry bounds what is read of each skill; nil means defaults.
	Registry *registry.Options
	// Filters hide skills per request (by tenant, user or role found in
	// the context); a skill any filter rejects is invisible to catalogs,
	// tools and requests alike.
	Filters []registry.Filter
	// Store keeps the sessions. Nil means an in-memory store, closed by
	// Close; a store passed here is the caller's to close.
	Store session.Store
	// Agent configures every agent not named in Agents.
	Agent AgentOptions
	// Agents configures the named agents, each instead of Agent.
	Agents map[string]AgentOptions
	// Exec, when set, gives every agent the workspace_exec tool, which runs
	// commands in the session's workspace, and its companions for
	// background commands (workspace_exec_read, workspace_exec_write,
	// workspace_exec_kill). Nil means no execution.
	Exec *ExecOptions
}

// AgentOptions configures one agent.
type AgentOptions struct {
	// System is the system prompt.
	System string
	// Lifetime is how long loaded skills stay in requests.
	Lifetime loadstate.Lifetime
	// Placement is where loaded content goes in requests.
	Placement assembly.Placement
	// MaxLoaded caps the loaded skills, least recently used evicted
	// (0: no cap).
	MaxLoaded int
	// Catalog configures the skill catalog the agent is shown.
	Catalog assembly.CatalogOptions
	// FallbackOnSummary shows the skills loaded before the current turn
	// again, in the "Loaded skill context:" message, once a compaction
	// summarised their loads away (conversation.Options.FallbackOnSummary).
	// By default only the current turn's loads are shown again, and the
	// summary stands for the rest — which, under the session lifetime,
	// leaves earlier skills loaded but their instructions unseen.
	FallbackOnSummary bool
	// SkillTools names the skill tools the agent offers, in order: any of
	// tools.DefaultNames and, when Options.Exec is set, workspace_exec and
	// its companions (tools.ExecToolNames), which follow workspace_exec
	// when none of them is named (tools.WithExecCompanions). Nil offers
	// them all (workspace_exec and its companions last);
	// tools.DefaultNames() is the knowledge-only profile — instructions
	// and documents, no commands — for an agent of a kit that runs
	// commands for others.
	SkillTools []string
	// Tools are the agent's own tools, offered after the skill tools (and
	// workspace_exec). Their names must differ from those and each other.
	Tools []tools.Tool
	// Select, when set, chooses each request's tools from all the agent's
	// (in the order above) given its load state: a profile that offers
	// fewer tools, or tools a loaded skill activates. Nil offers them all.
	// The catalog is published only while the agent offers the shipped
	// tool it tells the model to call (skill for the reminder format, skill
	// or skill_load for the list format); a selection that drops it, or a
	// user tool that reuses its name, hides the catalog.
	Select func(ctx context.Context, st tools.State, all []tools.Tool) ([]tools.Tool, error)
	// MaxParallel bounds the tool calls of one answer that run at once; 0
	// means conversation.DefaultMaxParallel.
	MaxParallel int
	// Activation brings tool sets into the agent's requests once it loads
	// the skills its rules name: candidate sets registered by name, rules
	// from a skill to sets, include or only mode, invocation or session
	// lifetime (see conversation.Activation). Nil activates nothing. The
	// agent runner refuses it together with an output schema, since a
	// final answer held to a schema cannot also be a call of a tool that
	// appeared meanwhile.
	Activation *Activation
}

// Activation configures tool activation on skill load: see
// conversation.Activation.
type Activation = conversation.Activation

// ActivationRule activates tool sets when an agent loads a skill: see
// conversation.ActivationRule.
type ActivationRule = conversation.ActivationRule

// ExecOptions enables and configures command execution (workspace_exec).
type ExecOptions struct {
	// Runner runs the commands. Nil means the isolated sandbox
	// (sandbox.NewIsolated with Isolated), closed by Close. Anything less
	// confining must be named here, such as sandbox.NewUnconfinedLocal.
	Runner sandbox.Runner
	// Isolated configures the isolated sandbox the kit makes; it may only
	// be set when Runner is nil.
	Isolated *sandbox.IsolatedOptions
	// Workspaces holds the sessions' workspaces, one per session, named by
	// the session ID (every agent of a session shares it). Nil means
	// temporary workspaces under one host directory that Close removes;
	// pass a workspace.Manager to keep them (it stays the caller's to
	// close). Only the isolated runner keeps a command inside its own
	// workspace: under an unconfined runner a command can reach the other
	// sessions' workspaces beside it.
	Workspaces *workspace.Manager
	// Tool bounds each command (timeouts, resources, network, collected
	// outputs, background commands); nil means defaults. A MaxTimeout
	// above what the runner accepts is an error.
	Tool *tools.ExecOptions
	// Env, when set, supplies variables for each command from the
	// context of the call (a per-user token the application put there,
	// say), so the model never sees them. Variables the call names itself
	// win over provided ones.
	Env sandbox.EnvProvider
}

// Kit is a configured skills runtime. It is safe for concurrent use.
type Kit struct {
	reg      *registry.Registry
	filters  []registry.Filter
	store    session.Store
	agent    agentConfig
	agents   map[string]agentConfig
	warnings []string
	// workspaces holds the sessions' workspaces when Exec is set, and
	// runner runs their commands.
	workspaces *workspace.Manager
	runner     sandbox.Runner

	mu      sync.Mutex // guards closers and closed
	closers []func() error
	closed  bool
}

// agentConfig is one agent's checked configuration.
type agentConfig struct {
	opts AgentOptions
	all  []tools.Tool
}

// New builds a kit: it discovers the skills and checks every option,
// making the sandbox and the workspaces when Exec asks for them. Nothing
// is left open when it fails.
func New(ctx context.Context, opts *Options) (*Kit, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	k := &Kit{filters: slices.Clone(o.Filters)}
	if err := k.init(ctx, o); err != nil {
		_ = k.Close()
		return nil, err
	}
	return k, nil
}

func (k *Kit) init(ctx context.Context, o Options) error {
	srcs, err := k.sources(ctx, o)
	if err != nil {
		return err
	}
	if k.reg, err = registry.New(ctx, srcs, o.Registry); err != nil {
		return fmt.Errorf("skillkit: %w", err)
	}
	k.store = o.Store
	if k.store == nil {
		mem := session.NewMemoryStore(nil)
		k.store = mem
		k.closers = append(k.closers, mem.Close)
	}
	var exec []tools.Tool
	if o.Exec != nil {
		if exec, err = k.execTools(ctx, *o.Exec); err != nil {
			return err
		}
	}
	if k.agent, err = configure("Options.Agent", o.Agent, exec); err != nil {
		return err
	}
	k.agents = make(map[string]agentConfig, len(o.Agents))
	for _, name := range slices.Sorted(maps.Keys(o.Agents)) {
		if name == "" {
			return errors.New("skillkit: Options.Agents has an empty agent name; name each agent")
		}
		if err := conversation.CheckAgent(name); err != nil {
			return fmt.Errorf("skillkit: Options.Agents[%q]: %w", name, err)
		}
		if k.agents[name], err = configure(fmt.Sprintf("Options.Agents[%q]", name), o.Agents[name], exec); err != nil {
			return err
		}
	}
	return nil
}

// sources returns the skill sources of the options.
func (k *Kit) sources(ctx context.Context, o Options) ([]source.Source, error) {
	var srcs []source.Source
	for i, root := range o.Roots {
		if root == "" {
			return nil, fmt.Errorf("skillkit: Options.Roots[%d] is empty; name a folder (\".\" for the current one)", i)
		}
		if source.IsURL(root) || archive.IsArchivePath(root) {
			src, err := archive.Open(ctx, root, &archive.Options{CacheDir: archive.CacheDirFromEnv(os.Getenv)})
			if err != nil {
				return nil, fmt.Errorf("skillkit: Options.Roots[%d]: %w", i, err)
			}
			src.Rank = i
			srcs = append(srcs, src)
			continue
		}
		src, err := source.Dir(root, root, i)
		if err != nil {
			return nil, fmt.Errorf("skillkit: Options.Roots[%d]: %w", i, err)
		}
		srcs = append(srcs, src)
	}
	for i, src := range o.Sources {
		src.Rank += len(o.Roots)
		if src.FS == nil {
			return nil, fmt.Errorf("skillkit: Options.Sources[%d] (%q) has no file system", i, src.Label)
		}
		srcs = append(srcs, src)
	}
	if len(srcs) > 0 {
		return srcs, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("skillkit: the default roots: %w", err)
	}
	home, _ := os.UserHomeDir()
	openURL := func(url, label string, rank int) (source.Source, error) {
		src, err := archive.Open(ctx, url, &archive.Options{CacheDir: archive.CacheDirFromEnv(os.Getenv)})
		src.Label, src.Rank = label, rank
		return src, err
	}
	srcs, k.warnings, err = source.DefaultRootsURL(cwd, os.Getenv, home, openURL)
	if err != nil {
		return nil, fmt.Errorf("skillkit: the default roots: %w", err)
	}
	return srcs, nil
}

// execTools builds workspace_exec and its companions from the options.
func (k *Kit) execTools(ctx context.Context, e ExecOptions) ([]tools.Tool, error) {
	runner := e.Runner
	switch {
	case runner != nil && e.Isolated != nil:
		return nil, errors.New("skillkit: Options.Exec sets both Runner and Isolated; Isolated configures the runner the kit makes, so set one of them")
	case runner == nil:
		r, err := sandbox.NewIsolated(e.Isolated)
		if err != nil {
			return nil, fmt.Errorf("skillkit: Options.Exec: the isolated sandbox: %w", err)
		}
		if c, ok := r.(io.Closer); ok {
			k.closers = append(k.closers, c.Close)
		}
		runner = r
	}
	runner = sandbox.WithEnv(runner, e.Env)
	wm := e.Workspaces
	if wm == nil {
		m, err := workspace.NewTemp(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("skillkit: Options.Exec: temporary workspaces: %w", err)
		}
		k.closers = append(k.closers, func() error { return m.Discard(context.Background()) })
		wm = m
	}
	k.workspaces, k.runner = wm, runner
	et, err := tools.WorkspaceExecTools(tools.WorkspaceExecConfig{Runner: runner, Workspaces: wm, Options: e.Tool})
	if err != nil {
		return nil, fmt.Errorf("skillkit: Options.Exec: %w", err)
	}
	// Closed first: background commands end before their workspaces and
	// sandbox go, even in a Manager the caller keeps.
	k.closers = append(k.closers, et.Close)
	return et.Tools(), nil
}

// configure checks one agent's options and lists all its tools.
func configure(field string, o AgentOptions, exec []tools.Tool) (agentConfig, error) {
	if err := tools.Check(o.Tools); err != nil {
		return agentConfig{}, fmt.Errorf("skillkit: %s.Tools: %w", field, err)
	}
	builtins := slices.Concat(tools.Defaults(), exec)
	offered := builtins
	if o.SkillTools != nil {
		switch {
		case len(o.SkillTools) == 0:
			return agentConfig{}, fmt.Errorf("skillkit: %s.SkillTools is empty; leave it nil for every skill tool, or name the ones to offer", field)
		case len(exec) == 0 && slices.ContainsFunc(o.SkillTools, isExecName):
			n := o.SkillTools[slices.IndexFunc(o.SkillTools, isExecName)]
			return agentConfig{}, fmt.Errorf("skillkit: %s.SkillTools names %s, but Options.Exec is not set; set Exec to run commands, or leave %s out", field, n, n)
		}
		sel, err := tools.Select(tools.WithExecCompanions(o.SkillTools), exec...)
		if err != nil {
			return agentConfig{}, fmt.Errorf("skillkit: %s.SkillTools: %w", field, err)
		}
		offered = sel
	}
	for i, t := range o.Tools {
		if slices.ContainsFunc(builtins, func(b tools.Tool) bool { return b.Name == t.Name }) {
			return agentConfig{}, fmt.Errorf("skillkit: %s.Tools[%d] is named %q, like a skill tool; give it another name", field, i, t.Name)
		}
	}
	all := slices.Concat(offered, o.Tools)
	// An unusable value fails here, not at the first session.
	if err := convOptions(o, all, nil).Validate(); err != nil {
		return agentConfig{}, fmt.Errorf("skillkit: %s.%w", field, err)
	}
	return agentConfig{opts: o, all: all}, nil
}

// isExecName reports whether name is workspace_exec or a companion.
func isExecName(name string) bool { return slices.Contains(tools.ExecToolNames(), name) }

// convOptions are the conversation options of an agent.
func convOptions(o AgentOptions, all []tools.Tool, skills func(context.Context) *registry.Snapshot) *conversation.Options {
	var set tools.Set = tools.Static(all)
	if o.Select != nil {
		sel := o.Select
		set = tools.SetFunc(func(ctx context.Context, st tools.State) ([]tools.Tool, error) { return sel(ctx, st, all) })
	}
	return &conversation.Options{Skills: skills, Tools: set, System: o.System, Lifetime: o.Lifetime,
		Placement: o.Placement, MaxLoaded: o.MaxLoaded, Catalog: o.Catalog, MaxParallel: o.MaxParallel,
		Activation: o.Activation, FallbackOnSummary: o.FallbackOnSummary}
}

// AgentOptions returns the options the kit applies to the named agent:
// Options.Agents[name] when it is configured there, else Options.Agent.
// The slices and pointers it holds are the kit's; do not modify them.
func (k *Kit) AgentOptions(name string) AgentOptions { return k.config(name).opts }

func (k *Kit) config(agent string) agentConfig {
	if c, ok := k.agents[agent]; ok {
		return c
	}
	return k.agent
}

// Skills returns the skills a request sees now: the registry's current
// snapshot through the filters, which read ctx.
func (k *Kit) Skills(ctx context.Context) *registry.Snapshot {
	return k.reg.Snapshot().View(ctx, k.filters...)
}

// Registry returns the registry, to refresh it or read its diagnostics.
func (k *Kit) Registry() *registry.Registry { return k.reg }

// Store returns the session store.
func (k *Kit) Store() session.Store { return k.store }

// Warnings returns what the search of the default roots reported (an
// entry of $SKILLKIT_PATH that is not a folder, say).
func (k *Kit) Warnings() []string { return slices.Clone(k.warnings) }

// Tools returns the tools the agent's first request offers (before any
// skill is loaded), for a loop that sends tool definitions itself.
func (k *Kit) Tools(ctx context.Context, agent string) ([]tools.Tool, error) {
	c := k.config(agent)
	return convOptions(c.opts, c.all, nil).Tools.Tools(ctx, loadstate.Of(nil, agent))
}

// Catalog returns the catalog text the agent is shown first, or "" when
// it has none (no model-invocable skill, or no skill tool offered).
func (k *Kit) Catalog(ctx context.Context, agent string) (string, error) {
	ts, err := k.Tools(ctx, agent)
	if err != nil {
		return "", err
	}
	c := k.config(agent)
	ev, err := assembly.CatalogEvent(ctx, map[string]string{}, agent, k.Skills(ctx), ts, &c.opts.Catalog)
	if err != nil || ev == nil {
		return "", err
	}
	return ev.Text, nil
}

// Open returns agent's conversation on the session id, creating the
// session when it does not exist; an empty id creates a new session with
// a random ID (Conversation.ID tells it). Because a missing session is
// created, a mistyped id starts an empty conversation rather than failing;
// callers that resume known sessions check Store().Get first. An agent not
// named in Options.Agents gets Options.Agent.
//
// Options adjust this handle only — tools the runner adds, a per-run
// catalog renderer or guidance — without changing the agent's
// configuration; a bad one is an error naming it.
func (k *Kit) Open(ctx context.Context, id, agent string, opts ...OpenOption) (*Conversation, error) {
	var oc openConfig
	for _, o := range opts {
		o(&oc)
	}
	k.mu.Lock()
	closed := k.closed
	k.mu.Unlock()
	if closed {
		return nil, errors.New("skillkit: the kit is closed")
	}
	if err := conversation.CheckAgent(agent); err != nil {
		return nil, fmt.Errorf("skillkit: %w", err)
	}
	if id == "" {
		s, err := k.store.Create(ctx, "", nil)
		if err != nil {
			return nil, err
		}
		id = s.ID
	} else if _, _, err := k.store.State(ctx, id); errors.Is(err, session.ErrNotFound) {
		if _, err := k.store.Create(ctx, id, nil); err != nil && !errors.Is(err, session.ErrExists) {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	c := k.config(agent)
	all, o, err := oc.apply(c)
	if err != nil {
		return nil, err
	}
	co := convOptions(o, all, k.Skills)
	co.Renew = func(ctx context.Context, stale *registry.Snapshot) error {
		_, err := k.reg.Renew(ctx, stale)
		return err
	}
	co.WrapCall = oc.wrapCall
	return conversation.Open(ctx, k.store, id, agent, co)
}

// OpenOption adjusts one conversation handle that Open returns.
type OpenOption func(*openConfig)

// openConfig is what the OpenOptions set.
type openConfig struct {
	tools     []tools.Tool
	render    func(context.Context, []skill.Summary) string
	hasRender bool
	guidance  *assembly.Guidance
	wrapCall  func(context.Context, session.ToolCall, func(context.Context) (tools.Result, error)) (tools.Result, error)
}

// WithWrapCall runs every tool call of the handle through wrap (see
// conversation.Options.WrapCall): the agent runner traces calls and runs
// its tool callbacks there.
func WithWrapCall(wrap func(ctx context.Context, call ToolCall, run func(context.Context) (tools.Result, error)) (tools.Result, error)) OpenOption {
	return func(c *openConfig) { c.wrapCall = wrap }
}

// WithTools adds tools to the handle's requests after the agent's own:
// tools of the run rather than of the agent (a sub-agent called as a
// tool, say). Their names must differ from every tool of the agent.
func WithTools(ts ...tools.Tool) OpenOption {
	return func(c *openConfig) { c.tools = append(c.tools, ts...) }
}

// WithCatalogRender renders the handle's catalog with render instead of
// the agent's Catalog.Render (see assembly.CatalogOptions.Render); nil
// goes back to the format's rendering. A catalog that renders differently
// from the one the session saw last is published again as a replacement.
func WithCatalogRender(render func(ctx context.Context, skills []skill.Summary) string) OpenOption {
	return func(c *openConfig) { c.render, c.hasRender = render, true }
}

// WithGuidance publishes g as the handle's tooling guidance instead of
// the agent's Catalog.Guidance.
func WithGuidance(g assembly.Guidance) OpenOption {
	return func(c *openConfig) { c.guidance = &g }
}

// apply returns the agent's tools and options as the handle's options
// change them.
func (oc openConfig) apply(c agentConfig) ([]tools.Tool, AgentOptions, error) {
	o, all := c.opts, c.all
	if len(oc.tools) > 0 {
		if err := tools.Check(oc.tools); err != nil {
			return nil, o, fmt.Errorf("skillkit: Open: WithTools: %w", err)
		}
		for _, t := range oc.tools {
			if slices.ContainsFunc(all, func(a tools.Tool) bool { return a.Name == t.Name }) || tools.IsSkillToolName(t.Name) {
				return nil, o, fmt.Errorf("skillkit: Open: WithTools: tool %q has the name of one of the agent's tools; give it another name", t.Name)
			}
		}
		all = slices.Concat(all, oc.tools)
	}
	if oc.hasRender {
		o.Catalog.Render = oc.render
	}
	if oc.guidance != nil {
		if err := oc.guidance.Validate(); err != nil {
			return nil, o, fmt.Errorf("skillkit: Open: WithGuidance: %w", err)
		}
		o.Catalog.Guidance = *oc.guidance
	}
	return all, o, nil
}

// EndSession ends what the kit keeps for session id outside the store:
// the session's workspace, with every command still running in it
// (background commands are killed first), when the kit runs commands. A
// server calls it when a client's session ends; the session's events stay
// in the store (delete them there when they should go too). Ending a
// session that has no workspace is not an error.
func (k *Kit) EndSession(ctx context.Context, id string) error {
	if k.workspaces == nil || id == "" {
		return nil
	}
	// What the runner keeps for the workspace (a container) goes first:
	// it holds the folder.
	rerr := sandbox.ReleaseWorkspace(k.runner, k.WorkspaceDir(id))
	if err := k.workspaces.Remove(ctx, workspace.IDFor(id)); err != nil {
		return fmt.Errorf("skillkit: ending session %s: %w", id, errors.Join(rerr, err))
	}
	if rerr != nil {
		return fmt.Errorf("skillkit: ending session %s: %w", id, rerr)
	}
	return nil
}

// WorkspaceDir returns the host folder of session id's workspace, or ""
// when the kit runs no commands. The folder exists only once a command ran
// in the session.
func (k *Kit) WorkspaceDir(id string) string {
	if k.workspaces == nil || id == "" {
		return ""
	}
	return filepath.Join(k.workspaces.Root(), workspace.IDFor(id))
}

// Close releases what the kit made: its background commands (killed),
// its in-memory store, its sandbox and its temporary workspaces. What the
// caller passed in stays open.
// Close may be called more than once and from several goroutines; Open
// fails after it.
func (k *Kit) Close() error {
	k.mu.Lock()
	closers := k.closers
	k.closers, k.closed = nil, true
	k.mu.Unlock()
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i]())
	}
	return errors.Join(errs...)
}
