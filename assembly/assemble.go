package assembly

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// FallbackHeader opens the dedicated system message that carries loaded
// content whose tool result is not in the request.
const FallbackHeader = "Loaded skill context:"

// SummaryHeader opens the system message that carries a session summary.
const SummaryHeader = "Session summary:"

// Options configures assembly. A nil *Options means the defaults.
type Options struct {
	// Placement is where loaded content goes.
	Placement Placement
	// FallbackOnSummary keeps the fallback message even when a session
	// summary replaced the load's tool result in an earlier turn. By
	// default (false) it is skipped there, so content the summary already
	// condensed is not sent again.
	FallbackOnSummary bool
}

// Input is everything one request is built from.
type Input struct {
	// System is the system prompt.
	System string
	// Session holds the events and state (not modified).
	Session *session.Session
	// Agent is the agent the request is for; only its own assistant, tool
	// and context events and the user messages addressed to it (or to
	// every agent) are sent.
	Agent string
	// Skills is the snapshot (already filtered) the request uses.
	Skills *registry.Snapshot
	// Tools are the tools the agent offers this request, in order.
	Tools []tools.Tool
	// From is the index of the first event sent; earlier events were
	// suppressed or truncated by the caller. 0 sends the whole history.
	From int
	// Summary, when not empty, is a session summary that stands in for
	// the events before From; it follows the system message.
	Summary string
	// AfterSummary are indexes of events (from From on) sent right after
	// the summary rather than at their place in the history: the catalog
	// a compaction published anew belongs before the history it precedes,
	// not after the events kept verbatim. Ignored without a Summary.
	AfterSummary []int
}

// Assemble builds the next request. It reads files only through the
// snapshot (whose content is pinned) and never changes the session.
func Assemble(ctx context.Context, in Input, opts *Options) (*Request, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if _, err := o.Placement.MarshalText(); err != nil {
		return nil, fmt.Errorf("assembly: Options.Placement: %w", err)
	}
	if in.Session == nil {
		return nil, fmt.Errorf("assembly: Input.Session is nil")
	}
	events := in.Session.Events
	if in.From < 0 || in.From > len(events) {
		return nil, fmt.Errorf("assembly: Input.From is %d; it must be between 0 and the %d events of the session", in.From, len(events))
	}
	a := &assembler{ctx: ctx, in: in, o: o, state: loadstate.Of(in.Session.State, in.Agent), turnStart: -1, lastAssistant: -1}
	for i, ev := range events {
		switch {
		case ev.Kind == session.KindUser && a.visible(ev):
			a.turnStart = i
		case ev.Kind == session.KindAssistant && ev.Agent == in.Agent:
			a.lastAssistant = i
		}
	}
	return a.build(), nil
}

type assembler struct {
	ctx   context.Context
	in    Input
	o     Options
	state loadstate.View
	// turnStart is the index of the last user message the agent sees
	// (-1: none): the agent's current turn begins there.
	turnStart int
	// lastAssistant is the index of the agent's last assistant event.
	lastAssistant int
}

// visible reports whether an event belongs in this agent's request.
func (a *assembler) visible(ev session.Event) bool {
	switch ev.Kind {
	case session.KindUser:
		return ev.Agent == "" || ev.Agent == a.in.Agent
	case session.KindAssistant, session.KindTool, session.KindContext:
		return ev.Agent == a.in.Agent
	}
	return false
}

// records returns the load records of the agent's event, or nil.
func (a *assembler) records(ev session.Event) []session.Load {
	if ev.Agent != a.in.Agent || ev.Kind == session.KindUser || ev.Kind == session.KindTool && ev.IsError {
		return nil
	}
	return ev.Loads
}

func (a *assembler) build() *Request {
	req := &Request{Messages: []Message{}, Tools: make([]ToolSpec, 0, len(a.in.Tools))}
	system := a.in.System
	if a.o.Placement == PlacementSystem {
		if extra := a.systemContent(); extra != "" {
			if system != "" {
				system += "\n\n"
			}
			system += extra
		}
	}
	if system != "" {
		req.Messages = append(req.Messages, Message{Role: "system", Content: system})
	}
	events := a.in.Session.Events
	hoisted := map[int]bool{}
	if a.in.Summary != "" {
		req.Messages = append(req.Messages, Message{Role: "system", Content: SummaryHeader + "\n" + a.in.Summary})
		for _, i := range a.in.AfterSummary {
			if i >= a.in.From && i < len(events) && !hoisted[i] && a.visible(events[i]) {
				hoisted[i] = true
				req.Messages = append(req.Messages, a.message(i, events[i]))
			}
		}
	}
	fallback := a.fallbacks() // event index (-1: at the start) → skills
	if items := fallback[-1]; len(items) > 0 {
		req.Messages = append(req.Messages, a.fallbackMessage(items))
	}
	ids := callIDs{seen: map[string]bool{}}
	for i := a.in.From; i < len(events); i++ {
		ev := events[i]
		if a.visible(ev) && !hoisted[i] {
			m := a.message(i, ev)
			ids.apply(&m)
			req.Messages = append(req.Messages, m)
		}
		if items := fallback[i]; len(items) > 0 {
			req.Messages = append(req.Messages, a.fallbackMessage(items))
		}
	}
	for _, t := range a.in.Tools {
		params := t.InputSchema
		if params == nil {
			params = &jsonschema.Schema{Type: "object"} // model APIs want an object schema
		}
		req.Tools = append(req.Tools, ToolSpec{Type: "function", Function: FunctionSpec{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return req
}

func (a *assembler) message(i int, ev session.Event) Message {
	switch ev.Kind {
	case session.KindUser, session.KindContext:
		return Message{Role: "user", Content: ev.Text}
	case session.KindAssistant:
		m := Message{Role: "assistant", Content: ev.Text}
		for _, c := range ev.ToolCalls {
			args := c.Arguments
			if args == "" {
				args = "{}"
			}
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: c.ID, Type: "function", Function: FunctionCall{Name: c.Name, Arguments: args}})
		}
		return m
	default: // KindTool
		content := ev.Text
		if a.o.Placement == PlacementToolResult {
			if extra := a.expansion(i, ev); extra != "" {
				content += "\n\n" + extra
			}
		}
		return Message{Role: "tool", Content: content, ToolCallID: ev.ToolCallID}
	}
}

// callIDs keeps the call IDs of a request unique: providers refuse a
// request that answers one ID twice, and a model that numbers its calls
// afresh in every answer (call_0, call_1, ...) repeats them. A repeated ID
// is renamed in its answer and in the results that follow it; the rename
// depends only on earlier messages, so the prefix holds.
type callIDs struct {
	seen    map[string]bool
	current map[string]string // renames of the latest answer
	// next is, per repeated ID, the suffix to try first: every smaller
	// one is taken, so a model that reuses call_1 in every answer costs
	// one lookup per answer, not one per earlier answer.
	next map[string]int
}

func (c *callIDs) apply(m *Message) {
	switch m.Role {
	case "assistant":
		c.current = nil
		for i := range m.ToolCalls {
			id := m.ToolCalls[i].ID
			if c.seen[id] {
				n := id
				k := max(c.next[id], 2)
				for ; c.seen[n]; k++ {
					n = id + "_" + strconv.Itoa(k)
				}
				if c.next == nil {
					c.next = map[string]int{}
				}
				c.next[id] = k
				if c.current == nil {
					c.current = map[string]string{}
				}
				c.current[id] = n
				m.ToolCalls[i].ID = n
				id = n
			}
			c.seen[id] = true
		}
	case "tool":
		if n, ok := c.current[m.ToolCallID]; ok {
			m.ToolCallID = n
		}
	}
}

// live reports whether the content a record of event i brought is still
// to be shown, under the record's lifetime.
func (a *assembler) live(i int, rec session.Load) bool {
	switch loadstate.LifetimeOf(rec) {
	case loadstate.Turn:
		// Within the turn the content stays, even if the skill was
		// evicted later in the turn: rewriting an earlier message would
		// break the prefix the provider has cached.
		return i > a.turnStart
	case loadstate.Once:
		return a.state.Loaded(rec.Skill) && i > a.lastAssistant
	default:
		return a.state.Loaded(rec.Skill)
	}
}

// expansion renders the content a tool result's records brought.
func (a *assembler) expansion(i int, ev session.Event) string {
	var blocks []string
	for _, rec := range a.records(ev) {
		if rec.Inline || !a.live(i, rec) {
			continue
		}
		if rec.Instructions {
			blocks = append(blocks, a.bodyBlock(rec.Skill))
		}
		// Outside the turn lifetime, content lasts as long as the
		// selection does: a document cleared or replaced later leaves this
		// result too (which rewrites it; see docs/performance.md).
		selected, all := a.state.Docs(rec.Skill)
		for _, d := range rec.Docs {
			if loadstate.LifetimeOf(rec) != loadstate.Turn && !all && !slices.Contains(selected, d) {
				continue
			}
			blocks = append(blocks, a.docBlock(rec.Skill, d))
		}
	}
	return strings.Join(blocks, "\n\n")
}

func (a *assembler) bodyBlock(name string) string {
	if a.in.Skills == nil {
		return "[Loaded] " + name + "\n\n(This skill is no longer available.)"
	}
	body, err := a.in.Skills.Body(a.ctx, name)
	if err != nil {
		return "[Loaded] " + name + "\n\n(This skill is no longer available: " + err.Error() + ")"
	}
	return "[Loaded] " + name + "\n\n" + body
}

func (a *assembler) docBlock(name, doc string) string {
	if a.in.Skills == nil {
		return "[Doc] " + doc + "\n\n(This document is no longer available.)"
	}
	text, err := a.in.Skills.DocText(a.ctx, name, doc)
	if err != nil {
		return "[Doc] " + doc + "\n\n(This document is no longer available: " + err.Error() + ")"
	}
	return "[Doc] " + doc + "\n\n" + text
}

func (a *assembler) allDocs(name string) []string {
	if a.in.Skills == nil {
		return nil
	}
	docs, _ := a.in.Skills.Docs(a.ctx, name)
	return docs
}

// content renders a skill's instructions and the selected documents.
func (a *assembler) content(name string, docs []string, all bool) string {
	blocks := []string{a.bodyBlock(name)}
	if all {
		docs = a.allDocs(name)
	}
	for _, d := range sortedUnique(docs) {
		blocks = append(blocks, a.docBlock(name, d))
	}
	return strings.Join(blocks, "\n\n")
}

// systemContent is what the system placement appends: every loaded skill
// with its current selection, sorted by name.
func (a *assembler) systemContent() string {
	names := a.state.Skills()
	slices.Sort(names)
	blocks := make([]string, 0, len(names))
	for _, n := range names {
		docs, all := a.state.Docs(n)
		blocks = append(blocks, a.content(n, docs, all))
	}
	return strings.Join(blocks, "\n\n")
}

// fallbackItem is one skill of a fallback message with the documents it
// shows.
type fallbackItem struct {
	name string
	docs []string
	all  bool
}

// fallbacks decides which loaded skills need the dedicated message and
// where it goes (key -1: at the start).
//
// After an event of the history sent whose records brought a skill
// without carrying its content (a declared load), the message shows what
// the record brought, while that event is live under the lifetime. Each
// such message depends only on the events up to it and on facts fixed for
// the turn, so within a turn it never changes or disappears and the
// prefix holds. A skill still loaded whose content appears nowhere in the
// history sent (its load was cut) goes at the start, as selected just
// before the first event sent, unless a session summary replaced that
// history (see Options.FallbackOnSummary).
func (a *assembler) fallbacks() map[int][]fallbackItem {
	out := map[int][]fallbackItem{}
	if a.o.Placement != PlacementToolResult {
		return out
	}
	events := a.in.Session.Events
	lastIntro := map[string]int{} // skill → latest event that loaded it
	covered := map[string]bool{}  // content shown in the history sent
	type intro struct {
		at  int
		rec session.Load
	}
	var intros []intro
	for i, ev := range events {
		for _, rec := range a.records(ev) {
			if !rec.Instructions {
				continue
			}
			lastIntro[rec.Skill] = i
			if i < a.in.From {
				continue
			}
			switch {
			case rec.Inline && ev.Kind == session.KindTool:
				covered[rec.Skill] = true // the result's text is the skill's block
			case ev.Kind == session.KindTool || ev.Kind == session.KindContext:
				if a.live(i, rec) {
					covered[rec.Skill] = true
				}
			default:
				intros = append(intros, intro{i, rec})
			}
		}
	}
	for _, in := range intros {
		n := in.rec.Skill
		live := a.live(in.at, in.rec)
		if loadstate.LifetimeOf(in.rec) != loadstate.Turn {
			live = live && lastIntro[n] == in.at
		}
		if live {
			out[in.at] = append(out[in.at], fallbackItem{name: n, docs: in.rec.Docs})
			covered[n] = true
		}
	}
	var start *loadstate.View
	for _, n := range a.state.Skills() {
		if covered[n] {
			continue
		}
		at, ok := lastIntro[n]
		if a.in.Summary != "" && !a.o.FallbackOnSummary && (!ok || at <= a.turnStart) {
			continue
		}
		if start == nil {
			v := a.stateAt(a.in.From)
			start = &v
		}
		docs, all := start.Docs(n)
		out[-1] = append(out[-1], fallbackItem{name: n, docs: docs, all: all})
	}
	for k := range out {
		slices.SortFunc(out[k], func(x, y fallbackItem) int { return strings.Compare(x.name, y.name) })
	}
	return out
}

// stateAt is the agent's load state before event i, replayed from the
// events' deltas.
func (a *assembler) stateAt(i int) loadstate.View {
	state := map[string]string{}
	for _, ev := range a.in.Session.Events[:i] {
		session.ApplyDelta(state, ev.StateDelta)
	}
	return loadstate.Of(state, a.in.Agent)
}

func (a *assembler) fallbackMessage(items []fallbackItem) Message {
	blocks := make([]string, 0, len(items)+1)
	blocks = append(blocks, FallbackHeader)
	for _, it := range items {
		blocks = append(blocks, a.content(it.name, it.docs, it.all))
	}
	return Message{Role: "system", Content: strings.Join(blocks, "\n\n")}
}

func sortedUnique(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
