// Package conversation records one agent's side of a stored session the
// way a model's turn happens — a user message, then the model's answers
// (text and any number of tool calls, with the provider's call IDs) and
// every call's result — applying load lifetimes and the loaded-skills
// cap, and builds the next model request from what was recorded.
//
// A Conversation is what the agent runtime drives once per model step
// (Request → model → Respond) and what `skillkit session` drives by hand.
// Every change goes through the session Store as events whose state
// changes and load records are part of the same atomic append; building a
// request never changes the session.
package conversation

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/catalog"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// DefaultMaxParallel is how many tool calls of one answer run at once when
// Options.MaxParallel is 0.
const DefaultMaxParallel = 4

// ErrInvalidAnswer wraps the error Respond returns for an answer that
// cannot be recorded as the model gave it (two calls with one ID, a call
// without a tool name); nothing is recorded then.
var ErrInvalidAnswer = errors.New("conversation: invalid model answer")

// Options configures a conversation. A nil *Options means defaults: no
// skills, the default skill tools, turn lifetime, tool-result placement,
// no cap, the reminder catalog.
type Options struct {
	// Skills returns the skills a request sees (filters applied); it is
	// called once per request and per answer. Nil means no skills.
	Skills func(ctx context.Context) *registry.Snapshot
	// Renew is called when a tool's read of a snapshot Skills returned
	// found a skill's files changed on disk (registry.ErrStale): it makes
	// the registry hold a newer snapshot (Registry.Renew), and the call
	// runs once more on what Skills returns then. Nil: such a call fails
	// with an error the model sees.
	Renew func(ctx context.Context, stale *registry.Snapshot) error
	// Tools chooses the tools of each request from the agent's load state;
	// nil means tools.Static(tools.Defaults()).
	Tools tools.Set
	// System is the system prompt.
	System string
	// Lifetime is how long loads last.
	Lifetime loadstate.Lifetime
	// Placement is where loaded content goes in requests.
	Placement assembly.Placement
	// MaxLoaded caps the loaded skills, least recently used evicted first
	// (0: no cap).
	MaxLoaded int
	// Catalog configures the skill catalog published to the agent.
	Catalog assembly.CatalogOptions
	// MaxParallel bounds the tool calls of one answer that run at once;
	// 0 means DefaultMaxParallel.
	MaxParallel int
	// FallbackOnSummary keeps the "Loaded skill context:" message for
	// skills loaded before the current turn once a summary (Compact)
	// replaced their loads. By default it is left out then, as content the
	// summary condensed; skills the current turn loaded are shown again
	// either way when a compaction cut their results.
	FallbackOnSummary bool
	// Activation, when set, brings tool sets into the agent's requests
	// once it loads the skills its rules name. Nil activates nothing.
	Activation *Activation
	// WrapCall, when set, is called around each call of an answer, in the
	// goroutine that runs it: run runs the call (its checks and handler)
	// with the context given, and what WrapCall returns is the call's
	// outcome — so it can time the call, trace it, look at or replace its
	// result, or fail it (an error stops the answer, as a handler's does).
	WrapCall func(ctx context.Context, call session.ToolCall, run func(context.Context) (tools.Result, error)) (tools.Result, error)
}

// Conversation is one agent's handle on a stored session. It is safe for
// concurrent use; concurrent answers on one session are recorded one
// after the other, each against the state at its own append.
type Conversation struct {
	store session.Store
	id    string
	agent string
	opts  Options
	act   *activator
}

// Open returns agent's conversation over the existing session id. Every
// option is checked here; an invalid one is an error naming the field.
func Open(ctx context.Context, store session.Store, id, agent string, opts *Options) (*Conversation, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("conversation: Options.%w", err)
	}
	if store == nil {
		return nil, errors.New("conversation: the store is nil; pass a session.Store such as session.NewMemoryStore(nil)")
	}
	if err := CheckAgent(agent); err != nil {
		return nil, fmt.Errorf("conversation: %w", err)
	}
	if _, _, err := store.State(ctx, id); err != nil {
		return nil, err
	}
	if o.Tools == nil {
		o.Tools = tools.Static(tools.Defaults())
	}
	if o.MaxParallel == 0 {
		o.MaxParallel = DefaultMaxParallel
	}
	act, err := newActivator(o.Activation)
	if err != nil {
		return nil, fmt.Errorf("conversation: Options.%w", err)
	}
	return &Conversation{store: store, id: id, agent: agent, opts: o, act: act}, nil
}

// Validate reports the first unusable option; the error starts with the
// field's name and says what to use instead. Open calls it.
func (o *Options) Validate() error {
	switch {
	case !o.Lifetime.Valid():
		return fmt.Errorf("Lifetime %d is not one of loadstate.Once, Turn, Session", int(o.Lifetime))
	case o.Placement != assembly.PlacementToolResult && o.Placement != assembly.PlacementSystem:
		return fmt.Errorf("Placement %d is not one of assembly.PlacementToolResult, PlacementSystem", int(o.Placement))
	case o.MaxLoaded < 0:
		return fmt.Errorf("MaxLoaded is %d; use 0 for no cap or a positive count", o.MaxLoaded)
	case o.MaxParallel < 0:
		return fmt.Errorf("MaxParallel is %d; use 0 for %d or a positive count", o.MaxParallel, DefaultMaxParallel)
	case o.Catalog.Format != assembly.FormatReminder && o.Catalog.Format != assembly.FormatList:
		return fmt.Errorf("Catalog.Format %d is not one of assembly.FormatReminder, FormatList", int(o.Catalog.Format))
	}
	if _, err := catalog.New(nil, &catalog.Options{DescriptionMaxLength: o.Catalog.DescriptionMaxLength}); err != nil {
		return fmt.Errorf("Catalog.DescriptionMaxLength: %w", err)
	}
	if err := o.Catalog.Budget.Validate(); err != nil {
		return fmt.Errorf("Catalog.%w", err)
	}
	if err := o.Catalog.Guidance.Validate(); err != nil {
		return fmt.Errorf("Catalog.%w", err)
	}
	if o.Catalog.Guidance.Exec != "" && o.Catalog.Format != assembly.FormatList {
		return errors.New("Catalog.Guidance.Exec is set, but only the list format (Catalog.Format FormatList) publishes the default guidance it changes; the reminder format carries its own instructions")
	}
	if _, err := newActivator(o.Activation); err != nil {
		return err
	}
	return nil
}

// CheckAgent reports whether name can name an agent: 1 to 128 bytes of
// printable UTF-8 without '/', which separates the agent from the skill in
// its state keys.
func CheckAgent(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the agent name is empty; use a name such as %q", "assistant")
	case len(name) > 128:
		return fmt.Errorf("the agent name is %d bytes; use at most 128", len(name))
	case strings.ContainsRune(name, '/'):
		return fmt.Errorf("the agent name %q has a '/'; use letters, digits, '-' or '_'", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return fmt.Errorf("the agent name %q has a control or invalid character; use printable UTF-8", name)
		}
	}
	return nil
}

// ID returns the session's ID.
func (c *Conversation) ID() string { return c.id }

// Agent returns the agent's name.
func (c *Conversation) Agent() string { return c.agent }

// skills returns the snapshot of this request or answer.
func (c *Conversation) skills(ctx context.Context) *registry.Snapshot {
	if c.opts.Skills == nil {
		return nil
	}
	return c.opts.Skills(ctx)
}

// toolsFor returns the tools offered in the given load state, checked.
func (c *Conversation) toolsFor(ctx context.Context, st loadstate.View) ([]tools.Tool, error) {
	ts, err := c.opts.Tools.Tools(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("conversation: the tool set of agent %q: %w", c.agent, err)
	}
	ts = c.act.compose(ts, st.Activations())
	if err := tools.Check(ts); err != nil {
		return nil, fmt.Errorf("conversation: the tool set of agent %q: %w", c.agent, err)
	}
	return ts, nil
}

// Tools returns the tools the agent's next request offers.
func (c *Conversation) Tools(ctx context.Context) ([]tools.Tool, error) {
	state, _, err := c.store.State(ctx, c.id)
	if err != nil {
		return nil, err
	}
	return c.toolsFor(ctx, loadstate.Of(state, c.agent))
}

// PublishCatalog appends the agent's catalog (or its replacement) when it
// differs from the one the agent saw last. It reports whether an event was
// appended. The check and the append are one atomic step, so concurrent
// callers publish once.
func (c *Conversation) PublishCatalog(ctx context.Context) (bool, error) {
	ts, err := c.Tools(ctx)
	if err != nil {
		return false, err
	}
	snap := c.skills(ctx)
	co := c.catalogOptions(ctx, snap)
	evs, err := c.store.AppendFunc(ctx, c.id, func(state map[string]string, _ int64) ([]session.Event, error) {
		ev, err := assembly.CatalogEvent(ctx, state, c.agent, snap, ts, co)
		if err != nil || ev == nil {
			return nil, err
		}
		return []session.Event{*ev}, nil
	})
	return len(evs) > 0, err
}

// mentionRE finds direct invocations: "/name" at the start of the message
// or after white space, ending at white space, punctuation or the end.
var mentionRE = regexp.MustCompile(`(?:^|\s)/([a-z0-9]+(?:-[a-z0-9]+)*)(?:$|[\s.,;:!?)])`)

// invocation is a skill a user invoked directly, rendered.
type invocation struct{ name, text string }

// invocations renders the skills text invokes directly (/name) that exist
// and that the user may invoke, in order of first mention. Other /words
// are left alone: they may be paths or commands.
func invocations(ctx context.Context, snap *registry.Snapshot, text string) []invocation {
	var out []invocation
	seen := map[string]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		name := m[1]
		if seen[name] {
			continue
		}
		seen[name] = true
		if block, err := tools.RenderUserSkill(ctx, snap, name); err == nil {
			out = append(out, invocation{name, block})
		}
	}
	return out
}

// User records a user message addressed to this agent, which starts the
// agent's turn: under the turn lifetime it unloads the agent's skills.
// The agent's catalog is published first when the skill set changed. A
// skill the message invokes directly (/name, for any user-invocable
// skill, including those hidden from the model) is added right after it
// as the skill tool's rendered block and marked loaded, so its files can
// be read and run. It returns the user event as stored.
func (c *Conversation) User(ctx context.Context, text string) (session.Event, error) {
	user, _, err := c.user(ctx, c.skills(ctx), text, nil)
	return user, err
}

// UserDeclare records a user message as User does and, in the same
// atomic append, the loads declared for the turn it starts, as Declare
// records them (one state event after the message and any skill it
// invokes). The declarations are validated first (loadstate.Declare): when
// they fail nothing is recorded, and the error wraps
// loadstate.ErrInvalidLoadRequest or loadstate.ErrSkillUnavailable. It
// returns the user event and the declaration's event as stored; with no
// declarations it is User, and declared is zero.
func (c *Conversation) UserDeclare(ctx context.Context, text string, decls []loadstate.Declaration) (user, declared session.Event, err error) {
	snap := c.skills(ctx)
	var effects []tools.Effect
	if len(decls) > 0 {
		if effects, err = loadstate.Declare(ctx, snap, decls, c.opts.MaxLoaded); err != nil {
			return session.Event{}, session.Event{}, err
		}
	}
	return c.user(ctx, snap, text, effects)
}

// user records a user message and, when effects are given, declared
// loads after it, in one append.
func (c *Conversation) user(ctx context.Context, snap *registry.Snapshot, text string, declared []tools.Effect) (session.Event, session.Event, error) {
	ts, err := c.Tools(ctx)
	if err != nil {
		return session.Event{}, session.Event{}, err
	}
	invoked := invocations(ctx, snap, text)
	co := c.catalogOptions(ctx, snap)
	var userAt int
	evs, err := c.store.AppendFunc(ctx, c.id, func(state map[string]string, _ int64) ([]session.Event, error) {
		var out []session.Event
		cat, err := assembly.CatalogEvent(ctx, state, c.agent, snap, ts, co)
		if err != nil {
			return nil, err
		}
		if cat != nil {
			out = append(out, *cat)
			session.ApplyDelta(state, cat.StateDelta)
		}
		user := session.Event{Kind: session.KindUser, Agent: c.agent, Text: text}
		if c.opts.Lifetime == loadstate.Turn {
			if d := loadstate.Reset(state, c.agent); len(d) > 0 {
				user.StateDelta = d
				session.ApplyDelta(state, d)
			}
		}
		// The agent's turn starts: what was activated for the last one
		// ends.
		if d := loadstate.EndInvocation(state, c.agent); d != nil {
			user.StateDelta = mergeDelta(user.StateDelta, d)
			session.ApplyDelta(state, d)
		}
		userAt = len(out)
		out = append(out, user)
		for _, inv := range invoked {
			effects := []tools.Effect{{Kind: tools.EffectLoad, Skill: inv.name, DocsMode: tools.DocsKeep, Inline: true}}
			loads := loadstate.Records(state, c.agent, effects, c.opts.Lifetime)
			d, err := c.apply(state, effects)
			if err != nil {
				return nil, err
			}
			session.ApplyDelta(state, d)
			ad, err := c.act.activate(state, c.agent, loads)
			if err != nil {
				return nil, err
			}
			out = append(out, session.Event{Kind: session.KindContext, Agent: c.agent, Text: inv.text, StateDelta: mergeDelta(d, ad), Loads: loads})
		}
		if len(declared) > 0 {
			ev, err := c.declaration(state, declared)
			if err != nil {
				return nil, err
			}
			out = append(out, ev)
		}
		return out, nil
	})
	if err != nil {
		return session.Event{}, session.Event{}, err
	}
	var decl session.Event
	if len(declared) > 0 {
		decl = evs[len(evs)-1]
	}
	return evs[userAt], decl, nil
}

// Declare validates declared loads atomically (loadstate.Declare) against
// the skills of the next request and records them as one state event
// carrying their load records; no tool call or result is invented. The
// next request shows them in a "Loaded skill context:" message.
//
// Under the turn lifetime a user message unloads the agent's loads, so a
// declaration meant for the coming turn is made after User, not before;
// UserDeclare records both in one step.
func (c *Conversation) Declare(ctx context.Context, decls []loadstate.Declaration) (session.Event, error) {
	effects, err := loadstate.Declare(ctx, c.skills(ctx), decls, c.opts.MaxLoaded)
	if err != nil {
		return session.Event{}, err
	}
	evs, err := c.store.AppendFunc(ctx, c.id, func(state map[string]string, _ int64) ([]session.Event, error) {
		ev, err := c.declaration(state, effects)
		if err != nil {
			return nil, err
		}
		return []session.Event{ev}, nil
	})
	if err != nil {
		return session.Event{}, err
	}
	return evs[0], nil
}

// declaration is the state event of declared loads, applied to state.
func (c *Conversation) declaration(state map[string]string, effects []tools.Effect) (session.Event, error) {
	names := make([]string, len(effects))
	for i, e := range effects {
		names[i] = e.Skill
	}
	loads := loadstate.Records(state, c.agent, effects, c.opts.Lifetime)
	delta, err := c.apply(state, effects)
	if err != nil {
		return session.Event{}, err
	}
	session.ApplyDelta(state, delta)
	ad, err := c.act.activate(state, c.agent, loads)
	if err != nil {
		return session.Event{}, err
	}
	return session.Event{Kind: session.KindState, Agent: c.agent, Text: "declared loads: " + strings.Join(names, ", "),
		StateDelta: mergeDelta(delta, ad), Loads: loads}, nil
}

// Request builds the next model request: the agent's history with loaded
// content placed where the placement says, and the tools its load state
// offers. After a compaction the agent's latest summary is sent in place
// of the events it covers. It never changes the session.
func (c *Conversation) Request(ctx context.Context) (*assembly.Request, error) {
	if v, ok := c.store.(session.Viewer); ok {
		return c.requestViewed(ctx, v)
	}
	s, err := c.store.Get(ctx, c.id)
	if err != nil {
		return nil, err
	}
	ts, err := c.toolsFor(ctx, loadstate.Of(s.State, c.agent))
	if err != nil {
		return nil, err
	}
	return c.assemble(ctx, s, ts)
}

// requestViewed is Request on a store that shows sessions without
// copying them. The tools are chosen first, from a copy of the state,
// since choosing them runs the application's code, which must not run
// under the store's lock; the request is then assembled on the session
// as stored, if no event came in between (else it starts again).
func (c *Conversation) requestViewed(ctx context.Context, v session.Viewer) (*assembly.Request, error) {
	for {
		state, last, err := c.store.State(ctx, c.id)
		if err != nil {
			return nil, err
		}
		ts, err := c.toolsFor(ctx, loadstate.Of(state, c.agent))
		if err != nil {
			return nil, err
		}
		var req *assembly.Request
		stale := false
		err = v.View(ctx, c.id, func(s *session.Session) error {
			if stale = s.LastSeq() != last; stale {
				return nil
			}
			req, err = c.assemble(ctx, s, ts)
			return err
		})
		if err != nil || !stale {
			return req, err
		}
	}
}

// assemble builds the request from the session and the tools; the
// agent's latest summary stands in for the events it covers.
func (c *Conversation) assemble(ctx context.Context, s *session.Session, ts []tools.Tool) (*assembly.Request, error) {
	from, summary, cat := c.summaryOf(s.Events)
	var after []int
	if cat >= 0 {
		after = []int{cat}
	}
	return assembly.Assemble(ctx, assembly.Input{System: c.opts.System, Session: s, Agent: c.agent, Skills: c.skills(ctx), Tools: ts,
		From: from, Summary: summary, AfterSummary: after},
		&assembly.Options{Placement: c.opts.Placement, FallbackOnSummary: c.opts.FallbackOnSummary})
}
