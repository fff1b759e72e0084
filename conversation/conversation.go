// Package conversation records one agent's side of a session — user
// messages, tool calls and their results, declared loads — applying the
// load lifetime and the loaded-skills cap, and builds the next model
// request from what was recorded.
//
// It is the layer the agent runtime drives once per model step and that
// `skillkit session` drives by hand. Every change goes through the
// session Store as events whose state changes are part of the same append;
// building a request never changes the session.
package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// Config is a conversation's behaviour. It is stored in the session's
// metadata so every later command sees the same settings.
type Config struct {
	// Roots are the skill roots the session reads, as absolute paths.
	// They are fixed when the session is made (skillkit session new
	// resolves the default roots then); empty means no skills.
	Roots []string `json:"roots,omitempty"`
	// Mode is the load lifetime ("" means session.DefaultMode).
	Mode session.Mode `json:"mode"`
	// Placement of loaded content ("" means assembly.DefaultPlacement).
	Placement assembly.Placement `json:"placement"`
	// MaxLoaded caps the loaded skills per agent (0: no cap).
	MaxLoaded int `json:"max_loaded"`
	// Tools are the tool names exposed (empty: tools.DefaultNames()).
	Tools []string `json:"tools,omitempty"`
	// System is the system prompt.
	System string `json:"system,omitempty"`
	// CatalogFormat is assembly.FormatReminder (default) or FormatList.
	CatalogFormat string `json:"catalog_format,omitempty"`
}

// MetaKey is the session metadata key holding the JSON Config.
const MetaKey = "skillkit.conversation"

// Normalize fills defaults and validates every field; an invalid value is
// an error naming the field.
func (c Config) Normalize() (Config, error) {
	if c.Mode == "" {
		c.Mode = session.DefaultMode
	}
	if _, err := session.ParseMode(string(c.Mode)); err != nil {
		return c, fmt.Errorf("config mode: %w", err)
	}
	if c.Placement == "" {
		c.Placement = assembly.DefaultPlacement
	}
	if _, err := assembly.ParsePlacement(string(c.Placement)); err != nil {
		return c, fmt.Errorf("config placement: %w", err)
	}
	if c.MaxLoaded < 0 {
		return c, fmt.Errorf("config max_loaded is %d; use 0 for no cap or a positive count", c.MaxLoaded)
	}
	switch c.CatalogFormat {
	case "":
		c.CatalogFormat = assembly.FormatReminder
	case assembly.FormatReminder, assembly.FormatList:
	default:
		return c, fmt.Errorf("config catalog_format %q is not one of reminder, list", c.CatalogFormat)
	}
	if len(c.Tools) == 0 {
		c.Tools = tools.DefaultNames()
	}
	// Names are checked here for shape only: tools built by the caller
	// (workspace_exec needs a workspace and a sandbox) are known only to
	// Open, which checks every name against what it was given.
	seen := map[string]bool{}
	for _, n := range c.Tools {
		if n == "" || seen[n] {
			return c, fmt.Errorf("config tools: name %q is empty or listed twice; list each tool once", n)
		}
		seen[n] = true
	}
	return c, nil
}

// Meta encodes the config as session metadata.
func (c Config) Meta() map[string]string {
	b, _ := json.Marshal(c)
	return map[string]string{MetaKey: string(b)}
}

// ConfigFromMeta decodes the config stored by Meta.
func ConfigFromMeta(meta map[string]string) (Config, error) {
	raw, ok := meta[MetaKey]
	if !ok {
		return Config{}, fmt.Errorf("session has no %s metadata; it was not created by skillkit session new", MetaKey)
	}
	var c Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return Config{}, fmt.Errorf("session metadata %s: %w", MetaKey, err)
	}
	return c.Normalize()
}

// Conversation is one agent's handle on a stored session.
type Conversation struct {
	Store  session.Store
	ID     string
	Agent  string
	Config Config
	// Skills is the snapshot (already filtered for the request) tools and
	// requests use.
	Skills *registry.Snapshot
	// Tools are the exposed tools, built from Config.Tools (plus extras
	// such as workspace_exec supplied by the caller).
	Tools []tools.Tool
}

// ErrUnknownTool is returned by Call for a tool the agent does not expose.
var ErrUnknownTool = errors.New("tool not exposed")

// Open prepares a conversation over an existing session. extra supplies
// tools built elsewhere (by name in Config.Tools).
func Open(ctx context.Context, store session.Store, id, agent string, snap *registry.Snapshot, extra ...tools.Tool) (*Conversation, error) {
	if agent == "" {
		return nil, fmt.Errorf("agent name is empty; use a name such as %q", "default")
	}
	s, err := store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	cfg, err := ConfigFromMeta(s.Meta)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	ts, err := tools.Select(cfg.Tools, extra...)
	if err != nil {
		return nil, err
	}
	return &Conversation{Store: store, ID: id, Agent: agent, Config: cfg, Skills: snap, Tools: ts}, nil
}

// PublishCatalog appends the agent's catalog (or its replacement) when it
// differs from the one the agent saw last. It reports whether an event was
// appended.
func (c *Conversation) PublishCatalog(ctx context.Context) (bool, error) {
	state, _, err := c.Store.State(ctx, c.ID)
	if err != nil {
		return false, err
	}
	ev, err := assembly.CatalogEvent(&session.Session{ID: c.ID, State: state}, c.Agent, c.Skills, c.Tools, &assembly.CatalogOptions{Format: c.Config.CatalogFormat})
	if err != nil || ev == nil {
		return false, err
	}
	_, err = c.Store.Append(ctx, c.ID, *ev)
	return err == nil, err
}

// mentionRE finds direct invocations: "/name" at the start of the message
// or after white space, ending at white space, punctuation or the end.
var mentionRE = regexp.MustCompile(`(?:^|\s)/([a-z0-9]+(?:-[a-z0-9]+)*)(?:$|[\s.,;:!?)])`)

// invocation is a skill a user invoked directly, rendered.
type invocation struct{ name, text string }

// invocations renders the skills text invokes directly (/name) that exist
// and that the user may invoke, in order of first mention. Other
// /words are left alone: they may be paths or commands.
func (c *Conversation) invocations(ctx context.Context, text string) []invocation {
	var out []invocation
	seen := map[string]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		name := m[1]
		if seen[name] {
			continue
		}
		seen[name] = true
		if block, err := tools.RenderUserSkill(ctx, c.Skills, name); err == nil {
			out = append(out, invocation{name, block})
		}
	}
	return out
}

// User records a user message, which starts a turn. In turn mode the
// message's state change unloads every agent's skills; the agent's
// catalog is republished first when the skill set changed. A skill the
// message invokes directly (/name, for any user-invocable skill, including
// those hidden from the model) is added right after it as the skill tool's
// rendered block and marked loaded, so its files can be read and run.
func (c *Conversation) User(ctx context.Context, text string) (session.Event, error) {
	if _, err := c.PublishCatalog(ctx); err != nil {
		return session.Event{}, err
	}
	invoked := c.invocations(ctx, text)
	evs, err := c.Store.AppendFunc(ctx, c.ID, func(state map[string]string, _ int64) ([]session.Event, error) {
		user := session.Event{Kind: session.KindUser, Text: text}
		if c.Config.Mode == session.ModeTurn {
			if d := session.ResetDelta(state, ""); len(d) > 0 {
				user.StateDelta = d
				session.ApplyDelta(state, d)
			}
		}
		out := []session.Event{user}
		for _, inv := range invoked {
			d, err := session.EffectsDelta(state, c.Agent, []tools.Effect{{Kind: tools.EffectLoad, Skill: inv.name, DocsMode: tools.DocsKeep}}, c.Config.MaxLoaded)
			if err != nil {
				return nil, err
			}
			session.ApplyDelta(state, d)
			out = append(out, session.Event{Kind: session.KindContext, Agent: c.Agent, Text: inv.text, StateDelta: d})
		}
		return out, nil
	})
	if err != nil {
		return session.Event{}, err
	}
	return evs[0], nil
}

// Declare validates declared loads atomically (session.ResolveLoads) and
// records them as one state event; no tool call or result is invented.
func (c *Conversation) Declare(ctx context.Context, reqs []session.LoadRequest) (session.Event, error) {
	effects, err := session.ResolveLoads(ctx, c.Skills, reqs, c.Config.MaxLoaded)
	if err != nil {
		return session.Event{}, err
	}
	names := make([]string, len(effects))
	for i, e := range effects {
		names[i] = e.Skill
	}
	evs, err := c.Store.AppendFunc(ctx, c.ID, func(state map[string]string, _ int64) ([]session.Event, error) {
		delta, err := session.EffectsDelta(state, c.Agent, effects, c.Config.MaxLoaded)
		if err != nil {
			return nil, err
		}
		return []session.Event{{Kind: session.KindState, Agent: c.Agent, Text: "declared loads: " + strings.Join(names, ", "), StateDelta: delta}}, nil
	})
	if err != nil {
		return session.Event{}, err
	}
	return evs[0], nil
}

// Call records a model tool call and its result: the assistant message
// carrying the call (in once mode its state change unloads what the
// request that produced it showed), then the tool result with the load
// changes the tool asked for. When the skill set changed since the agent's
// catalog was published, a replacement catalog follows.
func (c *Conversation) Call(ctx context.Context, tool string, args json.RawMessage) (tools.Result, error) {
	var t *tools.Tool
	for i := range c.Tools {
		if c.Tools[i].Name == tool {
			t = &c.Tools[i]
		}
	}
	if t == nil {
		names := make([]string, len(c.Tools))
		for i, x := range c.Tools {
			names[i] = x.Name
		}
		return tools.Result{}, fmt.Errorf("%w: %q; this agent exposes %s", ErrUnknownTool, tool, strings.Join(names, ", "))
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		return tools.Result{}, fmt.Errorf("tool arguments are not valid JSON: %s", args)
	}
	// The tool runs outside the store's lock (it may run a command for a
	// minute) against the state as the model saw it: in once mode that is
	// before this response's reset, so a skill loaded for the request the
	// model is answering can still be read or run.
	state, _, err := c.Store.State(ctx, c.ID)
	if err != nil {
		return tools.Result{}, err
	}
	res := t.Call(ctx, tools.Call{Args: args, Skills: c.Skills, State: session.NewAgentState(state, c.Agent)})
	// The assistant message and its result are appended together, and
	// their state changes are computed from the state at that moment:
	// concurrent calls on one session neither lose a change nor share a
	// call ID, and a crash never leaves a call without its result.
	_, err = c.Store.AppendFunc(ctx, c.ID, func(state map[string]string, lastSeq int64) ([]session.Event, error) {
		callID := "call_" + strconv.FormatInt(lastSeq+1, 10)
		asst := session.Event{Kind: session.KindAssistant, Agent: c.Agent,
			ToolCalls: []session.ToolCall{{ID: callID, Name: tool, Arguments: string(args)}}}
		if c.Config.Mode == session.ModeOnce {
			if d := session.ResetDelta(state, c.Agent); len(d) > 0 {
				asst.StateDelta = d
				session.ApplyDelta(state, d)
			}
		}
		ev := session.Event{Kind: session.KindTool, Agent: c.Agent, ToolCallID: callID, ToolName: tool, Text: res.Text, IsError: res.IsError}
		if !res.IsError && len(res.Effects) > 0 {
			d, err := session.EffectsDelta(state, c.Agent, res.Effects, c.Config.MaxLoaded)
			if err != nil {
				return nil, err
			}
			ev.StateDelta = d
		}
		return []session.Event{asst, ev}, nil
	})
	if err != nil {
		return res, err
	}
	// A skill set that changed during the turn is announced before the
	// next request, after what is already there.
	if _, err := c.PublishCatalog(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// Request builds the next model request. It never changes the session.
func (c *Conversation) Request(ctx context.Context) (*assembly.Request, error) {
	s, err := c.Store.Get(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	return assembly.Assemble(ctx, assembly.Input{System: c.Config.System, Session: s, Agent: c.Agent, Skills: c.Skills, Tools: c.Tools},
		&assembly.Options{Placement: c.Config.Placement, Mode: c.Config.Mode})
}
