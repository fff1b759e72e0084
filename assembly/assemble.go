package assembly

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// FallbackHeader opens the dedicated system message that carries loaded
// content whose tool result is not in the request (seed 003).
const FallbackHeader = "Loaded skill context:"

// SummaryHeader opens the system message that carries a session summary.
const SummaryHeader = "Session summary:"

// Options configures assembly. A nil *Options means the defaults.
type Options struct {
	// Placement is where loaded content goes; "" means DefaultPlacement.
	Placement Placement
	// Mode is the load lifetime the session uses; "" means
	// session.DefaultMode.
	Mode session.Mode
	// FallbackOnSummary keeps the fallback message even when a session
	// summary replaced the load's tool result in an earlier turn. By
	// default (false) it is skipped there, as upstream does, so content
	// the summary already condensed is not sent again.
	FallbackOnSummary bool
}

// Input is everything one request is built from.
type Input struct {
	// System is the system prompt.
	System string
	// Session holds the events and state (not modified).
	Session *session.Session
	// Agent is the agent the request is for; only its own assistant and
	// tool events, its context events and the user messages are sent.
	Agent string
	// Skills is the snapshot (already filtered) the request uses.
	Skills *registry.Snapshot
	// Tools are the tools the agent exposes, in order.
	Tools []tools.Tool
	// From is the index of the first event sent; earlier events were
	// suppressed or truncated by the caller. 0 sends the whole history.
	From int
	// Summary, when not empty, is a session summary that stands in for
	// the events before From; it follows the system message.
	Summary string
}

// Assemble builds the next request. It reads files only through the
// snapshot's caches and never changes the session.
func Assemble(ctx context.Context, in Input, opts *Options) (*Request, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Placement == "" {
		o.Placement = DefaultPlacement
	}
	if _, err := ParsePlacement(string(o.Placement)); err != nil {
		return nil, err
	}
	if o.Mode == "" {
		o.Mode = session.DefaultMode
	}
	if _, err := session.ParseMode(string(o.Mode)); err != nil {
		return nil, err
	}
	if in.Session == nil {
		return nil, fmt.Errorf("assembly: Input.Session is nil")
	}
	events := in.Session.Events
	if in.From < 0 || in.From > len(events) {
		return nil, fmt.Errorf("assembly: Input.From is %d; it must be between 0 and the %d events of the session", in.From, len(events))
	}
	a := &assembler{ctx: ctx, in: in, o: o, state: session.NewAgentState(in.Session.State, in.Agent), turn: in.Session.Turn()}
	a.indexCalls()
	return a.build(), nil
}

type assembler struct {
	ctx   context.Context
	in    Input
	o     Options
	state session.AgentState
	turn  int
	calls map[string]call // tool-call ID → call, for this agent
	// lastAssistant is the index of the agent's last assistant event.
	lastAssistant int
}

// call is one tool call of the agent with the load effects its arguments
// describe, decoded once per request.
type call struct {
	session.ToolCall
	effects []tools.Effect
}

func (a *assembler) indexCalls() {
	a.calls = map[string]call{}
	a.lastAssistant = -1
	for i, ev := range a.in.Session.Events {
		if ev.Kind == session.KindAssistant && ev.Agent == a.in.Agent {
			a.lastAssistant = i
			for _, c := range ev.ToolCalls {
				a.calls[c.ID] = call{c, tools.CallEffects(c.Name, json.RawMessage(c.Arguments))}
			}
		}
	}
}

// mine reports whether an event belongs in this agent's request.
func (a *assembler) mine(ev session.Event) bool {
	switch ev.Kind {
	case session.KindUser:
		return true
	case session.KindAssistant, session.KindTool, session.KindContext:
		return ev.Agent == a.in.Agent
	}
	return false
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
	if a.in.Summary != "" {
		req.Messages = append(req.Messages, Message{Role: "system", Content: SummaryHeader + "\n" + a.in.Summary})
	}
	events := a.in.Session.Events
	fallback := a.fallbacks() // event index (-1: at the start) → skills
	if items := fallback[-1]; len(items) > 0 {
		req.Messages = append(req.Messages, a.fallbackMessage(items))
	}
	for i := a.in.From; i < len(events); i++ {
		ev := events[i]
		if a.mine(ev) {
			req.Messages = append(req.Messages, a.message(i, ev))
		}
		if items := fallback[i]; len(items) > 0 {
			req.Messages = append(req.Messages, a.fallbackMessage(items))
		}
	}
	for _, t := range a.in.Tools {
		req.Tools = append(req.Tools, ToolSpec{Type: "function", Function: FunctionSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema}})
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
		if a.o.Placement == PlacementToolResult && !ev.IsError {
			if extra := a.expansion(i, ev); extra != "" {
				content += "\n\n" + extra
			}
		}
		return Message{Role: "tool", Content: content, ToolCallID: ev.ToolCallID}
	}
}

// live reports whether the content a tool event introduced for skill is
// still to be shown, under the load lifetime.
func (a *assembler) live(i int, ev session.Event, skill string) bool {
	switch a.o.Mode {
	case session.ModeTurn:
		// Within the turn the content stays, even if the skill was
		// evicted later in the turn: rewriting an earlier message would
		// break the prefix the provider has cached.
		return ev.Turn == a.turn
	case session.ModeOnce:
		return a.state.Loaded(skill) && i > a.lastAssistant
	default:
		return a.state.Loaded(skill)
	}
}

// expansion renders the content one tool result introduced.
func (a *assembler) expansion(i int, ev session.Event) string {
	c, ok := a.calls[ev.ToolCallID]
	if !ok || c.Name == tools.SkillName {
		return "" // the skill tool's result already is the skill's block
	}
	var blocks []string
	for _, e := range c.effects {
		if !a.live(i, ev, e.Skill) {
			continue
		}
		// skill_select_docs on a skill that was not loaded loads it: its
		// result then carries the instructions too.
		if e.Kind == tools.EffectLoad || a.loads(ev, e.Skill) {
			blocks = append(blocks, a.bodyBlock(e.Skill))
		}
		switch e.DocsMode {
		case tools.DocsReplace, tools.DocsAdd:
			docs := e.Docs
			if e.AllDocs {
				docs = a.allDocs(e.Skill)
			}
			// Outside the turn lifetime, content lasts as long as the
			// selection does: a document cleared or replaced later leaves
			// this result too (which rewrites it; see docs/performance.md).
			var selected []string
			var all bool
			if a.o.Mode != session.ModeTurn {
				selected, all = a.state.Docs(e.Skill)
			}
			for _, d := range sortedUnique(docs) {
				if a.o.Mode != session.ModeTurn && !all && !slices.Contains(selected, d) {
					continue
				}
				blocks = append(blocks, a.docBlock(e.Skill, d))
			}
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

// skillContent renders a loaded skill with its current document selection.
func (a *assembler) skillContent(name string) string {
	docs, all := a.state.Docs(name)
	return a.content(name, docs, all)
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

// systemContent is what the system placement appends: every loaded skill,
// sorted by name.
func (a *assembler) systemContent() string {
	names := a.state.Skills()
	slices.Sort(names)
	blocks := make([]string, 0, len(names))
	for _, n := range names {
		blocks = append(blocks, a.skillContent(n))
	}
	return strings.Join(blocks, "\n\n")
}

// fallbackItem is one skill of a fallback message with the document
// selection it had where the message is placed.
type fallbackItem struct {
	name string
	docs []string
	all  bool
}

// fallbacks decides which loaded skills need the dedicated message and
// where it goes (key -1: at the start).
//
// After an event of the history sent that loaded a skill without carrying
// its content (a declared load, a migrated legacy key), the message shows
// the skill as selected at that event, while that event is live under the
// lifetime. Each such message depends only on the events up to it and on
// facts fixed for the turn, so within a turn it never changes or
// disappears and the prefix holds. A skill still loaded whose content
// appears nowhere in the history sent (its load was cut) goes at the
// start, as selected just before the first event sent, unless a session
// summary replaced that history (see Options.FallbackOnSummary).
func (a *assembler) fallbacks() map[int][]fallbackItem {
	out := map[int][]fallbackItem{}
	if a.o.Placement != PlacementToolResult {
		return out
	}
	events := a.in.Session.Events
	agent := a.in.Agent
	// docs replays the agent's document selections event by event.
	docs := map[string]string{}
	lastIntro := map[string]int{} // skill → latest event that loaded it
	covered := map[string]bool{}  // content shown in the history sent
	type intro struct {
		at   int
		item fallbackItem
	}
	var intros []intro
	startDocs := map[string]fallbackItem{}
	loaded := a.state.Skills()
	for i, ev := range events {
		if i == a.in.From {
			for _, n := range loaded {
				startDocs[n] = a.selection(docs, n)
			}
		}
		for k, v := range ev.StateDelta {
			if strings.HasPrefix(k, session.SkillStatePrefix) {
				if v == nil {
					delete(docs, k)
				} else {
					docs[k] = *v
				}
			}
		}
		for _, n := range a.introduced(ev) {
			lastIntro[n] = i
			if i < a.in.From {
				continue
			}
			if a.carries(ev, n) {
				if a.live(i, ev, n) {
					covered[n] = true
				}
				continue
			}
			intros = append(intros, intro{i, a.selection(docs, n)})
		}
		if i >= a.in.From && ev.Kind == session.KindTool && ev.Agent == agent && !ev.IsError {
			if c, ok := a.calls[ev.ToolCallID]; ok && c.Name == tools.SkillName && len(c.effects) == 1 {
				covered[c.effects[0].Skill] = true // the skill tool's result is the body itself
			}
		}
	}
	if a.in.From == len(events) {
		for _, n := range loaded {
			startDocs[n] = a.selection(docs, n)
		}
	}
	for _, in := range intros {
		ev := events[in.at]
		n := in.item.name
		var live bool
		if a.o.Mode == session.ModeTurn {
			live = ev.Turn == a.turn
		} else {
			live = lastIntro[n] == in.at && a.live(in.at, ev, n)
		}
		if live {
			out[in.at] = append(out[in.at], in.item)
			covered[n] = true
		}
	}
	for _, n := range loaded {
		if covered[n] {
			continue
		}
		at, ok := lastIntro[n]
		if a.in.Summary != "" && !a.o.FallbackOnSummary && (!ok || events[at].Turn != a.turn) {
			continue
		}
		out[-1] = append(out[-1], startDocs[n])
	}
	for k := range out {
		slices.SortFunc(out[k], func(x, y fallbackItem) int { return strings.Compare(x.name, y.name) })
	}
	return out
}

// introduced returns the skills an event marks loaded for the agent.
func (a *assembler) introduced(ev session.Event) []string {
	var out []string
	prefix := session.LoadedPrefix(a.in.Agent)
	for k, v := range ev.StateDelta {
		if name, ok := strings.CutPrefix(k, prefix); ok && v != nil && *v != "" && !strings.Contains(name, "/") {
			out = append(out, name)
		}
	}
	return out
}

// loads reports whether an event marks the skill loaded for the agent.
func (a *assembler) loads(ev session.Event, name string) bool {
	v, ok := ev.StateDelta[session.LoadedKey(a.in.Agent, name)]
	return ok && v != nil && *v != ""
}

// carries reports whether the event shows the skill's instructions: a tool
// result of the agent (subject to liveness) or a direct invocation.
func (a *assembler) carries(ev session.Event, name string) bool {
	if ev.Kind == session.KindContext && ev.Agent == a.in.Agent && a.loads(ev, name) {
		return true // a skill the user invoked directly: the block is the event
	}
	if ev.Kind != session.KindTool || ev.IsError || ev.Agent != a.in.Agent {
		return false
	}
	c, ok := a.calls[ev.ToolCallID]
	if !ok {
		return false
	}
	if c.Name == tools.SkillName {
		return len(c.effects) == 1 && c.effects[0].Skill == name
	}
	for _, e := range c.effects {
		if e.Skill == name && (e.Kind == tools.EffectLoad || a.loads(ev, name)) {
			return true
		}
	}
	return false
}

// selection is the skill's document selection in a replayed state.
func (a *assembler) selection(state map[string]string, name string) fallbackItem {
	docs, all := session.NewAgentState(state, a.in.Agent).Docs(name)
	return fallbackItem{name: name, docs: docs, all: all}
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
