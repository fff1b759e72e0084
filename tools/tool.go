// Package tools defines the model-facing skill tools as plain values: a
// name, a description, a JSON Schema for the arguments and a Call that
// turns arguments into the text the model sees, an error flag and the
// load-state changes to record.
//
// Tools depend on no model SDK, so the same values serve the agent runtime
// and the MCP server. They read skills from a registry snapshot (already
// filtered for the request) and the calling agent's load state, and they
// never write state themselves: the session applies the Effects they
// return.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/registry"
)

// Tool is one model-facing tool.
type Tool struct {
	// Name is what the model calls.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema describes the arguments (a JSON object).
	InputSchema *jsonschema.Schema
	// Handler does the work. Wrap it to add tracing or logging.
	Handler func(ctx context.Context, c Call) Result
}

// Call runs the tool. A nil Handler is reported as an error result rather
// than a panic, since tools may be assembled from configuration.
func (t Tool) Call(ctx context.Context, c Call) Result {
	if t.Handler == nil {
		return Errorf("Error: tool %q has no handler", t.Name)
	}
	return t.Handler(ctx, c)
}

// Call is what one invocation of a tool sees.
type Call struct {
	// Args is the raw JSON object of arguments from the model.
	Args json.RawMessage
	// Skills is the registry snapshot as visible to this request (filters
	// already applied).
	Skills *registry.Snapshot
	// State is the calling agent's current load state; nil means nothing
	// is loaded.
	State State
}

// State is the read side of an agent's skill load state.
type State interface {
	// Loaded reports whether the skill is loaded for the calling agent.
	Loaded(skill string) bool
	// Docs returns the skill's selected documents; all is true when every
	// document is selected.
	Docs(skill string) (docs []string, all bool)
}

// Result is the outcome of a call.
type Result struct {
	// Text is exactly what the model sees as the tool result.
	Text string
	// IsError marks a failed call.
	IsError bool
	// Effects are the load-state changes to record with the result.
	Effects []Effect
}

// Errorf returns an error result whose text is the formatted message.
func Errorf(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// EffectKind names a load-state change.
type EffectKind string

const (
	// EffectLoad marks a skill loaded; Docs/AllDocs set its selection when
	// DocsMode says so.
	EffectLoad EffectKind = "load"
	// EffectSelectDocs changes a loaded skill's document selection.
	EffectSelectDocs EffectKind = "select_docs"
)

// DocsMode says how an effect changes a document selection.
type DocsMode string

const (
	// DocsKeep leaves the selection as it is.
	DocsKeep DocsMode = "keep"
	// DocsAdd adds Docs to the selection.
	DocsAdd DocsMode = "add"
	// DocsReplace makes Docs (or all documents) the whole selection.
	DocsReplace DocsMode = "replace"
	// DocsClear empties the selection.
	DocsClear DocsMode = "clear"
)

// Effect is one load-state change a tool asks the session to record.
type Effect struct {
	// Kind is the change.
	Kind EffectKind `json:"kind"`
	// Skill is the skill it applies to.
	Skill string `json:"skill"`
	// DocsMode says what happens to the document selection.
	DocsMode DocsMode `json:"docs_mode,omitempty"`
	// Docs are the documents to add or to make the selection: sorted,
	// without duplicates, each a document of the skill.
	Docs []string `json:"docs,omitempty"`
	// AllDocs selects every document (Docs is then empty).
	AllDocs bool `json:"all_docs,omitempty"`
}

// schemaFor derives a tool's input schema from its Go argument type.
// Slices are plain "array" (not ["null","array"], which several model APIs
// reject): an omitted list and an empty one mean the same to every tool.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[[]string](): {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
	}})
	if err != nil {
		// The argument types are fixed in this package; a failure here is a
		// programming error caught by the package tests.
		panic(fmt.Sprintf("tools: schema for %T: %v", *new(T), err))
	}
	return s
}

// decode reads the arguments of tool into v with DecodeArgs, or returns
// the error result. Unknown, misspelt and repeated properties are refused,
// as the schemas say (additionalProperties: false), so a mistake is
// reported instead of silently ignored. Empty or null arguments mean {}.
func decode(tool string, raw json.RawMessage, v any) (Result, bool) {
	if err := DecodeArgs(raw, v); err != nil {
		return Errorf("Error: invalid arguments to %s: %v; send one JSON object that matches the tool's schema", tool, err), false
	}
	return Result{}, true
}
