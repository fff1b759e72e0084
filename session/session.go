// Package session keeps conversations durable: a session is an ordered log of
// events (user messages, assistant messages with tool calls, tool results,
// context the runtime adds and bookkeeping state changes) plus a small
// string→string state map that the events' state deltas build up.
//
// The package is storage only, as database/sql is to an application: it
// knows nothing of skills. The layers above decide what an event means and
// which state keys exist; a Store keeps events and applies their deltas
// atomically. MemoryStore is the in-process implementation; the
// sqlitestore package keeps sessions in one SQLite file, redisstore in a
// Redis server that several processes share; session/driver
// holds what a Store implementation needs and session/sessiontest the
// conformance suite every Store passes. An AppendHook may rewrite or veto
// an event before it is persisted:
//
//	store := session.NewMemoryStore(nil)
//	s, _ := store.Create(ctx, "", nil)
//	ev, _ := store.Append(ctx, s.ID, session.Event{
//		Kind: session.KindUser, Agent: "assistant", Text: "hello",
//	})
//	fmt.Println(ev.Seq, ev.Turn) // 1 1
package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Kind says what an event records.
type Kind string

// Event kinds. A KindUser event starts a new turn.
const (
	// KindUser is a message from the user.
	KindUser Kind = "user"
	// KindAssistant is a model response: text and/or tool calls.
	KindAssistant Kind = "assistant"
	// KindTool is the result of one tool call (ToolCallID names the call).
	KindTool Kind = "tool"
	// KindState is bookkeeping: an event that exists to carry a StateDelta
	// (for example clearing turn-scoped skill keys). Text, if any, is a note
	// for humans and is not part of the conversation sent to a model.
	KindState Kind = "state"
	// KindContext is context the runtime adds to the conversation for the
	// model, such as the skill catalog or a replacement catalog. It is sent
	// as a user-role message at its place in the history, so later
	// requests keep it byte for byte (prompt caches survive).
	KindContext Kind = "context"
	// KindSummary condenses an agent's earlier events, made when its
	// history outgrew a budget: Text is the summary, and Summarizes is the
	// Seq of the last event it stands in for. Requests send the summary in
	// place of those events (and of any earlier summary).
	KindSummary Kind = "summary"
)

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindUser, KindAssistant, KindTool, KindState, KindContext, KindSummary:
		return true
	}
	return false
}

// StartsTurn reports whether an event of kind k begins a new turn.
func (k Kind) StartsTurn() bool { return k == KindUser }

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	// ID is the provider's call ID; the matching KindTool event carries it
	// as ToolCallID.
	ID string `json:"id"`
	// Name is the tool name.
	Name string `json:"name"`
	// Arguments is the argument text exactly as the model produced it,
	// normally a JSON object. It is kept even when it is not valid JSON,
	// so that the conversation shows the model its own mistake next to the
	// error result that answers it. Empty means no arguments.
	Arguments string `json:"arguments,omitempty"`
}

// Load records, on the event that brought it, content a request shows by
// reference: the event stores the names, a request materialises the
// content. The layer that records events fills it in; a Store only keeps
// it.
type Load struct {
	// Skill names what was loaded.
	Skill string `json:"skill"`
	// Instructions reports that the event brings the skill's instructions.
	Instructions bool `json:"instructions,omitempty"`
	// Inline reports that the event's own Text already holds what it
	// brings, so nothing is added to it at request time.
	Inline bool `json:"inline,omitempty"`
	// Docs are the documents the event brings, sorted.
	Docs []string `json:"docs,omitempty"`
	// Lifetime is how long the content stays in requests, as the recording
	// layer names it ("once", "turn", "session"); empty means its default.
	Lifetime string `json:"lifetime,omitempty"`
}

// Event is one entry of a session's log. Seq and Turn are assigned by the
// store; ID and Time are assigned when empty.
type Event struct {
	// Seq is the 1-based position in the session, strictly increasing
	// without gaps. Assigned by the store; any value passed in is ignored.
	Seq int64 `json:"seq"`
	// ID identifies the event; a random one is assigned when empty.
	ID string `json:"id"`
	// Time is when the event was appended (UTC); now when zero.
	Time time.Time `json:"time"`
	// Agent is the name of the agent that authored the event. On a user
	// event it is the agent the message is addressed to; empty addresses
	// every agent of the session.
	Agent string `json:"agent,omitempty"`
	// Kind says what the event records.
	Kind Kind `json:"kind"`
	// Text is the message text, the tool result, or a note.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant event requests.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a KindTool event answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName is the name of the tool that produced a KindTool event.
	ToolName string `json:"tool_name,omitempty"`
	// IsError marks a KindTool result as a failure.
	IsError bool `json:"is_error,omitempty"`
	// Turn is the turn number: the count of KindUser events up to and
	// including this one. Assigned by the store.
	Turn int `json:"turn"`
	// StateDelta is applied to the session state atomically with the
	// append: a non-nil value sets the key, a nil value deletes it.
	StateDelta map[string]*string `json:"state_delta,omitempty"`
	// Loads records what the event brought into the conversation by
	// reference (see Load).
	Loads []Load `json:"loads,omitempty"`
	// Summarizes is, on a KindSummary event, the Seq of the last event the
	// summary stands in for; 0 on other kinds.
	Summarizes int64 `json:"summarizes,omitempty"`
}

// Session is a snapshot of one session. Stores hand out copies: mutating a
// Session never changes what is stored.
type Session struct {
	// ID names the session.
	ID string `json:"id"`
	// Created is when the session was created (UTC).
	Created time.Time `json:"created"`
	// Meta is application-level configuration fixed at creation (roots,
	// load mode, placement, limits, ...). Never nil in a snapshot.
	Meta map[string]string `json:"meta"`
	// Events is the log in Seq order.
	Events []Event `json:"events"`
	// State is the result of applying every event's StateDelta in order.
	// Never nil in a snapshot.
	State map[string]string `json:"state"`
}

// Info describes a session without its events, as Store.List returns it.
type Info struct {
	// ID names the session.
	ID string `json:"id"`
	// Created is when the session was created (UTC).
	Created time.Time `json:"created"`
	// Meta is the session's metadata.
	Meta map[string]string `json:"meta"`
	// LastSeq is the Seq of the newest event, 0 when there is none.
	LastSeq int64 `json:"last_seq"`
}

// LastSeq returns the Seq of the newest event, 0 when there is none.
func (s *Session) LastSeq() int64 {
	if len(s.Events) == 0 {
		return 0
	}
	return s.Events[len(s.Events)-1].Seq
}

// Turn returns the current turn number: that of the newest event, 0 before
// the first user message.
func (s *Session) Turn() int {
	if len(s.Events) == 0 {
		return 0
	}
	return s.Events[len(s.Events)-1].Turn
}

// Clone returns a deep copy of s.
func (s *Session) Clone() *Session {
	c := &Session{
		ID:      s.ID,
		Created: s.Created,
		Meta:    cloneMeta(s.Meta),
		State:   cloneMeta(s.State),
		Events:  make([]Event, len(s.Events)),
	}
	for i := range s.Events {
		c.Events[i] = s.Events[i].Clone()
	}
	return c
}

// Clone returns a deep copy of e (tool calls, state delta and loads
// included).
func (e Event) Clone() Event {
	c := e
	c.ToolCalls = slices.Clone(e.ToolCalls)
	if e.Loads != nil {
		c.Loads = make([]Load, len(e.Loads))
		for i, l := range e.Loads {
			l.Docs = slices.Clone(l.Docs)
			c.Loads[i] = l
		}
	}
	if e.StateDelta != nil {
		c.StateDelta = make(map[string]*string, len(e.StateDelta))
		for k, v := range e.StateDelta {
			if v != nil {
				s := *v
				v = &s
			}
			c.StateDelta[k] = v
		}
	}
	return c
}

// Validate checks the fields a caller sets. It names the offending field and
// says what to do. Seq and Turn are not checked: the store assigns them.
func (e *Event) Validate() error {
	if !e.Kind.Valid() {
		return fmt.Errorf("%w: event.Kind %q is not one of %q, %q, %q, %q, %q, %q",
			ErrInvalidEvent, e.Kind, KindUser, KindAssistant, KindTool, KindState, KindContext, KindSummary)
	}
	switch {
	case e.Kind == KindSummary && e.Summarizes <= 0:
		return fmt.Errorf("%w: event.Summarizes is %d on a %q event; set it to the Seq of the last event the summary stands in for", ErrInvalidEvent, e.Summarizes, KindSummary)
	case e.Kind != KindSummary && e.Summarizes != 0:
		return fmt.Errorf("%w: event.Summarizes belongs to %q events, not %q", ErrInvalidEvent, KindSummary, e.Kind)
	}
	if len(e.ToolCalls) > 0 && e.Kind != KindAssistant {
		return fmt.Errorf("%w: event.ToolCalls is set on a %q event; only %q events carry tool calls",
			ErrInvalidEvent, e.Kind, KindAssistant)
	}
	seen := make(map[string]bool, len(e.ToolCalls))
	for i, tc := range e.ToolCalls {
		switch {
		case tc.ID == "":
			return fmt.Errorf("%w: event.ToolCalls[%d].ID is empty; set the provider's call ID", ErrInvalidEvent, i)
		case seen[tc.ID]:
			return fmt.Errorf("%w: event.ToolCalls[%d].ID %q repeats an earlier call; call IDs must be unique", ErrInvalidEvent, i, tc.ID)
		case tc.Name == "":
			return fmt.Errorf("%w: event.ToolCalls[%d].Name is empty; set the tool name", ErrInvalidEvent, i)
		}
		seen[tc.ID] = true
	}
	if e.Kind == KindTool && e.ToolCallID == "" {
		return fmt.Errorf("%w: event.ToolCallID is empty on a %q event; set it to the ID of the call it answers", ErrInvalidEvent, KindTool)
	}
	if e.Kind != KindTool && (e.ToolCallID != "" || e.ToolName != "" || e.IsError) {
		return fmt.Errorf("%w: event.ToolCallID, ToolName and IsError belong to %q events, not %q", ErrInvalidEvent, KindTool, e.Kind)
	}
	for k := range e.StateDelta {
		if k == "" {
			return fmt.Errorf("%w: event.StateDelta has an empty key; state keys must be non-empty", ErrInvalidEvent)
		}
	}
	for i, l := range e.Loads {
		if l.Skill == "" {
			return fmt.Errorf("%w: event.Loads[%d].Skill is empty; name what was loaded", ErrInvalidEvent, i)
		}
	}
	return nil
}

// ApplyDelta applies delta to state in place: a non-nil value sets the key,
// a nil value deletes it. Hooks use it to predict the state after an append.
func ApplyDelta(state map[string]string, delta map[string]*string) {
	for k, v := range delta {
		if v == nil {
			delete(state, k)
			continue
		}
		state[k] = *v
	}
}

// NewID returns a random 128-bit identifier in lowercase hex, used for
// session and event IDs the caller did not choose.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error.
	return hex.EncodeToString(b[:])
}

// MergeDelta adds the changes of src to dst and returns dst (a new map
// when dst is nil); where both change a key, src wins.
func MergeDelta(dst, src map[string]*string) map[string]*string {
	if dst == nil {
		dst = make(map[string]*string, len(src))
	}
	maps.Copy(dst, src)
	return dst
}

// Ptr returns a pointer to v: shorthand for StateDelta values.
func Ptr(v string) *string { return &v }

// cloneMeta copies m, returning an empty (non-nil) map for nil.
func cloneMeta(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	maps.Copy(c, m)
	return c
}
