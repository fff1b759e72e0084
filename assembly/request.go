// Package assembly builds the exact next model request — messages and
// tools — from a system prompt, a session's events and load state, and a
// registry snapshot. It reads what each event recorded it brought into the
// conversation (session.Load records) and never a tool's name, so renamed,
// prefixed and user-written tools that load skills place their content
// like the built-in ones.
//
// Loaded skill content is materialised at request time; the session
// stores only small state keys and short tool-result stubs. Two
// placements decide where the content goes:
//
//   - tool-result (the default): the result of each call that loaded a
//     skill or selected documents carries the content that call brought.
//     Within a turn earlier messages never change, so every request is a
//     byte-exact prefix of the next and the provider's prompt cache is
//     fully reused.
//   - system: the content of every loaded skill is appended to the system
//     message, sorted by name. Any load changes the very first message.
//
// When a loaded skill has no tool result in the history sent, a dedicated
// "Loaded skill context:" system message carries it: right after the
// event that recorded the load (a declared load), showing the documents
// it selected, or at the start when that event was cut (Input.From) —
// unless a session summary replaced that history (then it is skipped,
// except when the load happened in the current turn).
//
// Lifetimes, read from each record: with turn (the default) the agent's
// next user message ends the content of earlier turns; session keeps each
// result live while its skill stays loaded (an eviction rewrites the
// evicted skill's earlier results); once shows content until the model's
// next step, so every step rewrites the previous result. User messages
// are sent to the agent they are addressed to (Event.Agent), or to every
// agent when they name none.
//
// Content is rendered from the snapshot given, so the prefix holds only
// while the skills it shows stay the same: a registry Refresh in the
// middle of a turn that replaces a skill whose content an earlier result
// showed rewrites that result in the next request (the new text, not the
// one the model read). Applications refresh between turns to keep the
// cache whole.
package assembly

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// Placement says where loaded skill content goes in a request. The zero
// value is PlacementToolResult.
type Placement int

const (
	// PlacementToolResult puts content in the tool result of the call that
	// loaded it. The default.
	PlacementToolResult Placement = iota
	// PlacementSystem appends content to the system message.
	PlacementSystem
)

// String returns the placement's name: "tool-result" or "system".
func (p Placement) String() string {
	switch p {
	case PlacementToolResult:
		return "tool-result"
	case PlacementSystem:
		return "system"
	}
	return fmt.Sprintf("Placement(%d)", int(p))
}

// ParsePlacement reads a placement name; anything else is an error naming
// the value.
func ParsePlacement(s string) (Placement, error) {
	for _, p := range []Placement{PlacementToolResult, PlacementSystem} {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("placement %q is not one of tool-result, system", s)
}

// MarshalText encodes the placement by name.
func (p Placement) MarshalText() ([]byte, error) {
	if p != PlacementToolResult && p != PlacementSystem {
		return nil, fmt.Errorf("placement %d is not one of PlacementToolResult, PlacementSystem", int(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText decodes a placement name (see ParsePlacement).
func (p *Placement) UnmarshalText(b []byte) error {
	v, err := ParsePlacement(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Request is one model request in the OpenAI Chat Completions shape.
type Request struct {
	// Messages is the conversation so far, oldest first.
	Messages []Message `json:"messages"`
	// Tools declares the tools the model may call.
	Tools []ToolSpec `json:"tools"`
}

// Message is one chat message.
type Message struct {
	// Role is the author: "system", "user", "assistant" or "tool".
	Role string `json:"role"`
	// Content is the message text.
	Content string `json:"content"`
	// ToolCalls are the calls an assistant message requests.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is, on a tool message, the ID of the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is a function call requested by the assistant.
type ToolCall struct {
	// ID identifies the call; the tool message answering it repeats it.
	ID string `json:"id"`
	// Type is the kind of call, "function".
	Type string `json:"type"`
	// Function is the function called and its arguments.
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its JSON arguments.
type FunctionCall struct {
	// Name is the function's (the tool's) name.
	Name string `json:"name"`
	// Arguments is the arguments object, as JSON text.
	Arguments string `json:"arguments"`
}

// ToolSpec declares a tool to the model.
type ToolSpec struct {
	// Type is the kind of tool, "function".
	Type string `json:"type"`
	// Function is the tool's name, description and argument schema.
	Function FunctionSpec `json:"function"`
}

// FunctionSpec is a tool's name, description and argument schema.
type FunctionSpec struct {
	// Name is the tool's name, as the model calls it.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description"`
	// Parameters is the JSON Schema of the tool's arguments object.
	Parameters *jsonschema.Schema `json:"parameters"`
}

// Text renders the request as plain text, one block per message, for
// people reading a prompt: role, then content, then tool calls.
func (r *Request) Text() string {
	var out []byte
	for i, m := range r.Messages {
		if i > 0 {
			out = append(out, '\n')
		}
		out = fmt.Appendf(out, "── %s", m.Role)
		if m.ToolCallID != "" {
			out = fmt.Appendf(out, " (%s)", m.ToolCallID)
		}
		out = append(out, " ──\n"...)
		out = append(out, m.Content...)
		if len(m.Content) > 0 && m.Content[len(m.Content)-1] != '\n' {
			out = append(out, '\n')
		}
		for _, c := range m.ToolCalls {
			out = fmt.Appendf(out, "→ %s %s [%s]\n", c.Function.Name, c.Function.Arguments, c.ID)
		}
	}
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Function.Name
	}
	b, _ := json.Marshal(names)
	out = fmt.Appendf(out, "\n── tools ──\n%s\n", b)
	return string(out)
}
