// Package session keeps conversations durable: a session is an ordered log of
// events (user messages, assistant messages with tool calls, tool results and
// bookkeeping state changes) plus a small string→string state map that the
// events' state deltas build up.
//
// The session is what is persisted; a model request is assembled from it on
// every call and never written back. Skill tools record only small marker keys
// in the state (see LoadedKey, DocsKey, LoadedOrderKey); request assembly
// reads them and materializes skill bodies into the next request.
//
// A Store keeps sessions. MemoryStore is the in-process implementation; the
// sqlitestore package keeps them in one SQLite file, and the sessiontest
// package holds the conformance suite every Store passes. Appending an event
// applies its StateDelta in the same atomic step, and an AppendHook may
// rewrite or veto an event before it is persisted:
//
//	store := session.NewMemoryStore(nil)
//	s, _ := store.Create(ctx, "", map[string]string{"mode": "turn"})
//	ev, _ := store.Append(ctx, s.ID, session.Event{
//		Kind: session.KindUser, Agent: "assistant", Text: "hello",
//	})
//	fmt.Println(ev.Seq, ev.Turn) // 1 1
package session

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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
)

// Valid reports whether k is one of the defined kinds.
func (k Kind) Valid() bool {
	switch k {
	case KindUser, KindAssistant, KindTool, KindState, KindContext:
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
	// Arguments is the raw JSON argument object as the model produced it.
	// Empty means no arguments; otherwise it must be valid JSON.
	Arguments string `json:"arguments,omitempty"`
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
	// Agent is the name of the agent that authored the event (for user
	// events, the agent the message was addressed to).
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

// Clone returns a deep copy of e (tool calls and state delta included).
func (e Event) Clone() Event {
	c := e
	c.ToolCalls = slices.Clone(e.ToolCalls)
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
		return fmt.Errorf("%w: event.Kind %q is not one of %q, %q, %q, %q, %q",
			ErrInvalidEvent, e.Kind, KindUser, KindAssistant, KindTool, KindState, KindContext)
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
		case tc.Arguments != "" && !json.Valid([]byte(tc.Arguments)):
			return fmt.Errorf("%w: event.ToolCalls[%d].Arguments is not valid JSON; pass the raw JSON object (or empty for none)", ErrInvalidEvent, i)
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

// Ptr returns a pointer to v: shorthand for StateDelta values.
func Ptr(v string) *string { return &v }

// cloneMeta copies m, returning an empty (non-nil) map for nil.
func cloneMeta(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	maps.Copy(c, m)
	return c
}
