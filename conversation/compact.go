package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/session"
)

// ErrStaleCompaction is wrapped by Compact's error when the history it
// would summarize is already covered by a newer summary (another
// compaction won), or names events that do not exist.
var ErrStaleCompaction = errors.New("conversation: the compaction is stale")

// SummaryStateKey is the state key holding the Seq through which agent's
// history is summarized, so that compactions of one history are ordered
// atomically: skillkit:summarized_through:<agent>.
func SummaryStateKey(agent string) string { return "skillkit:summarized_through:" + agent }

// Compaction is a cut of the agent's history that a summary can stand in
// for: the events through Seq Through, which Transcript renders for the
// model that writes the summary.
type Compaction struct {
	// Through is the Seq of the last event the summary stands in for;
	// pass it to Compact.
	Through int64
	// Events is how many of the agent's events the summary replaces.
	Events int
	// Tokens are those events' tokens, as PlanCompaction's count counted
	// them: what the summary takes out of a request, before adding itself.
	Tokens int
	// Previous is the summary the new one replaces, "" when none; it
	// opens Transcript.
	Previous string
	// Transcript is the history to summarize as plain text: the previous
	// summary, then each message with its role. Skill content is named,
	// never copied — a load appears as its stored stub, a skill shown
	// whole as "[the instructions of skill NAME]" — so a summary never
	// carries a skill's body next to the one requests still show.
	Transcript string
}

// maxTranscriptText bounds the text one event contributes to a
// transcript: a summary of a long tool output needs its start, not all
// of it.
const maxTranscriptText = 4000

// PlanCompaction chooses the part of the agent's history a summary would
// replace: everything the agent's requests send, but the newest events
// whose text fits keepTokens (counted by count, such as catalog.Counter's
// Count), and never the newest answer with its results (nor, at the start
// of a turn, its user message). The part kept
// starts at a user message or an answer, never between an answer's calls
// and their results; a cut inside the current turn is allowed (the
// requests then show the skills that turn loaded in a "Loaded skill
// context:" message). It returns nil when there is nothing to summarize.
func (c *Conversation) PlanCompaction(ctx context.Context, keepTokens int, count func(string) (int, error)) (*Compaction, error) {
	if keepTokens < 0 {
		return nil, fmt.Errorf("conversation: PlanCompaction: keepTokens is %d; use 0 or more", keepTokens)
	}
	s, err := c.store.Get(ctx, c.id)
	if err != nil {
		return nil, err
	}
	from, previous, _ := c.summaryOf(s.Events)
	var visible []int // indexes of the agent's events from `from` on
	for i := from; i < len(s.Events); i++ {
		if c.visible(s.Events[i]) {
			visible = append(visible, i)
		}
	}
	// The newest place a kept part may start: the last answer, or the
	// last user message when the turn it starts has no answer yet.
	last := -1
	for k := len(visible) - 1; k >= 0; k-- {
		if startsKept(s.Events[visible[k]].Kind) {
			last = k
			break
		}
	}
	if last <= 0 {
		return nil, nil // nothing before it
	}
	tokens := make([]int, len(visible))
	for k, i := range visible {
		n, err := count(eventText(s.Events[i]))
		if err != nil {
			return nil, fmt.Errorf("conversation: PlanCompaction: counting tokens: %w", err)
		}
		tokens[k] = n
	}
	cut, used := last, 0
	for k := len(visible) - 1; k >= 0; k-- {
		if used += tokens[k]; used > keepTokens {
			break
		}
		if k < last && startsKept(s.Events[visible[k]].Kind) {
			cut = k
		}
	}
	if !slices.ContainsFunc(visible[:cut], func(i int) bool { return s.Events[i].Kind != session.KindContext }) {
		return nil, nil // only catalogs and context before the cut
	}
	var b strings.Builder
	if previous != "" {
		b.WriteString("Earlier summary:\n" + previous + "\n\n")
	}
	for _, i := range visible[:cut] {
		if line := transcriptLine(s.Events[i]); line != "" {
			b.WriteString(line + "\n")
		}
	}
	summarized := 0
	for _, n := range tokens[:cut] {
		summarized += n
	}
	return &Compaction{Through: s.Events[visible[cut]-1].Seq, Events: cut, Tokens: summarized, Previous: previous, Transcript: b.String()}, nil
}

// startsKept reports whether the kept part of a history may start at an
// event of kind k.
func startsKept(k session.Kind) bool { return k == session.KindUser || k == session.KindAssistant }

// Compact records summary as standing in for the agent's events through
// Seq through (a Compaction's Through): one summary event, then the
// agent's catalog published anew, since the message that published it is
// no longer sent; both in one append. A summary that covers no more than
// the agent's last one, or a Seq beyond the session's last event, fails
// with ErrStaleCompaction and records nothing.
func (c *Conversation) Compact(ctx context.Context, through int64, summary string) (session.Event, error) {
	if strings.TrimSpace(summary) == "" {
		return session.Event{}, errors.New("conversation: Compact: the summary is empty; pass the text that stands in for the history")
	}
	ts, err := c.Tools(ctx)
	if err != nil {
		return session.Event{}, err
	}
	snap := c.skills(ctx)
	co := c.catalogOptions(ctx, snap)
	evs, err := c.store.AppendFunc(ctx, c.id, func(state map[string]string, lastSeq int64) ([]session.Event, error) {
		done, _ := strconv.ParseInt(state[SummaryStateKey(c.agent)], 10, 64)
		switch {
		case through > lastSeq:
			return nil, fmt.Errorf("%w: event %d does not exist (the session has %d)", ErrStaleCompaction, through, lastSeq)
		case through <= done:
			return nil, fmt.Errorf("%w: the agent's history is summarized through event %d already; plan again", ErrStaleCompaction, done)
		}
		sum := session.Event{Kind: session.KindSummary, Agent: c.agent, Text: summary, Summarizes: through,
			StateDelta: map[string]*string{SummaryStateKey(c.agent): session.Ptr(strconv.FormatInt(through, 10)),
				assembly.CatalogStateKey(c.agent): nil}}
		session.ApplyDelta(state, sum.StateDelta)
		return c.withCatalog(ctx, []session.Event{sum}, state, snap, ts, co)
	})
	if err != nil {
		return session.Event{}, err
	}
	return evs[0], nil
}

// summaryOf returns the index of the first event after the agent's
// latest summary's coverage, that summary's text (0 and "" when it has
// none) and the index of the catalog Compact published with it (-1 when
// none), which requests send right after the summary.
func (c *Conversation) summaryOf(events []session.Event) (from int, text string, catalog int) {
	for i := len(events) - 1; i >= 0; i-- {
		ev := events[i]
		if ev.Kind != session.KindSummary || ev.Agent != c.agent {
			continue
		}
		for from < len(events) && events[from].Seq <= ev.Summarizes {
			from++
		}
		catalog = -1
		if n := i + 1; n < len(events) && events[n].Kind == session.KindContext && events[n].Agent == c.agent {
			if _, ok := events[n].StateDelta[assembly.CatalogStateKey(c.agent)]; ok {
				catalog = n
			}
		}
		return from, ev.Text, catalog
	}
	return 0, "", -1
}

// visible reports whether an event is part of the agent's history: the
// user messages addressed to it (or to every agent) and its own answers,
// results and context.
func (c *Conversation) visible(ev session.Event) bool {
	switch ev.Kind {
	case session.KindUser:
		return ev.Agent == "" || ev.Agent == c.agent
	case session.KindAssistant, session.KindTool, session.KindContext:
		return ev.Agent == c.agent
	}
	return false
}

// eventText is what an event sends, for counting.
func eventText(ev session.Event) string {
	var b strings.Builder
	b.WriteString(ev.Text)
	for _, tc := range ev.ToolCalls {
		b.WriteString(tc.Name + tc.Arguments)
	}
	return b.String()
}

// transcriptLine renders one event of a history to summarize; "" leaves
// it out (catalogs, which are published anew after the summary).
func transcriptLine(ev session.Event) string {
	var inline []string
	for _, l := range ev.Loads {
		if l.Inline && l.Instructions {
			inline = append(inline, l.Skill)
		}
	}
	switch ev.Kind {
	case session.KindUser:
		return "User: " + clip(ev.Text)
	case session.KindAssistant:
		var b strings.Builder
		b.WriteString("Assistant: " + clip(ev.Text))
		for _, tc := range ev.ToolCalls {
			b.WriteString("\nAssistant called " + tc.Name + "(" + clip(tc.Arguments) + ")")
		}
		return b.String()
	case session.KindTool:
		text := clip(ev.Text)
		if len(inline) > 0 {
			text = skillsShown(inline)
		}
		status := ""
		if ev.IsError {
			status = " (error)"
		}
		return "Result of " + ev.ToolName + status + ": " + text
	case session.KindContext:
		if len(inline) > 0 {
			return "Context: " + skillsShown(inline)
		}
	}
	return ""
}

func skillsShown(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = "[the instructions of skill " + n + "]"
	}
	return strings.Join(parts, " ")
}

// clip bounds a text for a transcript, saying what was cut.
func clip(s string) string {
	if len(s) <= maxTranscriptText {
		return s
	}
	cut := maxTranscriptText
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + fmt.Sprintf(" […%d more bytes]", len(s)-cut)
}
