// Package tools defines model-facing tools as plain values — a name, a
// description, a JSON Schema for the arguments and a handler — and the
// skill tools built on them: skill, skill_load, skill_select_docs,
// skill_list_docs, skill_read and workspace_exec, with its companions for
// background commands workspace_exec_read, workspace_exec_write and
// workspace_exec_kill.
//
// Tools depend on no model SDK, so the same values serve an agent's own
// model loop, the agent runtime and the MCP server. A handler returns the
// result the model sees (text, a tool-error flag, structured content,
// attachments) and, apart from it, an error for a failure that is not the
// model's to see (cancellation, I/O). The skill tools read skills from a
// registry snapshot (already filtered for the request) and the calling
// agent's load state; they never write state themselves but return the
// Effects that the recording layer applies. New builds a tool from a Go
// argument type, deriving its schema and decoding strictly in one place.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit/registry"
)

// Tool is one model-facing tool. Tools are values: copy one to rename it
// or to wrap its Handler (tracing, logging).
type Tool struct {
	// Name is what the model calls.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema describes the arguments (a JSON object).
	InputSchema *jsonschema.Schema
	// Handler does the work.
	Handler Handler

	// builtin is the name of the skill tool this is ("" for others), kept
	// when the tool is renamed: a catalog tells the model to call the
	// shipped tool, not one that merely has its name.
	builtin string
	// framework marks a tool the runtime offers rather than the agent's
	// configuration (Framework): tool activation never replaces it.
	framework bool
	// check validates the arguments before Handler runs; set by New and
	// for tools whose handler decodes strictly itself (nil: the schema is
	// checked on each call).
	check func(json.RawMessage) error
}

// Handler runs one call. A Result with IsError is a failure the model
// sees and can act on (bad arguments, an unknown skill, a command that
// failed); a non-nil error is a failure of the infrastructure (the
// context ended, a store or disk failed) that the caller reports instead
// of recording a result — except an error wrapping registry.ErrStale (a
// skill's files changed on disk while read), returned with the Result
// that reports it: Tool.Call runs the handler again on a renewed snapshot
// (Call.Renew), or returns that Result (one saying the files are
// changing when the handler gave none).
type Handler func(ctx context.Context, c Call) (Result, error)

// Builtin returns the name this package gave the tool when it is one of
// the skill tools (even after a rename), or "".
func (t Tool) Builtin() string { return t.builtin }

// Framework returns t marked as a tool of the runtime, like the skill
// tools: one the agent runner adds (a sub-agent's transfer tool, say) and
// that an agent's configuration does not choose. Tool activation keeps
// framework tools in every mode, and an activated tool never takes one's
// name.
func Framework(t Tool) Tool {
	t.framework = true
	return t
}

// IsFramework reports whether t is a skill tool or was marked with
// Framework.
func (t Tool) IsFramework() bool { return t.builtin != "" || t.framework }

// Call runs the tool: it checks the arguments against the tool's schema
// (a violation is an error Result naming what is wrong), then runs the
// Handler. Empty or null arguments mean {}. A nil Handler is an error,
// since tools may be assembled from configuration.
func (t Tool) Call(ctx context.Context, c Call) (Result, error) {
	if t.Handler == nil {
		return Result{}, fmt.Errorf("tools: tool %q has no handler; set Tool.Handler", t.Name)
	}
	check := t.check
	if check == nil {
		check = func(raw json.RawMessage) error { return checkSchema(t.InputSchema, raw) }
	}
	if err := check(c.Args); err != nil {
		return invalidArgs(t.Name, err), nil
	}
	// A skill's files changed on disk since the snapshot was taken:
	// again on renewed snapshots that have them as they are now.
	res, err := registry.Retry(ctx, c.Skills, c.Renew, func(snap *registry.Snapshot) (Result, error) {
		c.Skills = snap
		return t.Handler(ctx, c)
	})
	switch {
	case !errors.Is(err, registry.ErrStale):
		return res, err
	case ctx.Err() != nil:
		return Result{}, ctx.Err()
	case c.Renew == nil && res.IsError:
		return res, nil // the handler's own report of it
	}
	return Errorf("Error: the skill's files are changing on disk (being edited or replaced); try again in a moment"), nil
}

// Call is what one invocation of a tool sees.
type Call struct {
	// Args is the raw JSON object of arguments from the model.
	Args json.RawMessage
	// Skills is the registry snapshot as visible to this request (filters
	// already applied); nil means no skills.
	Skills *registry.Snapshot
	// State is the calling agent's current load state; nil means nothing
	// is loaded.
	State State
	// SessionID names the session the call belongs to ("" outside one);
	// workspace_exec uses the session's workspace.
	SessionID string
	// Agent names the calling agent.
	Agent string
	// ID is the call's ID as the model gave it.
	ID string
	// Renew returns a snapshot, filtered as Skills, that is newer than
	// stale, for a call whose read of stale found a skill's files changed
	// on disk (registry.ErrStale): Tool.Call then runs the handler again
	// on it (registry.Retry). Nil: such a call fails with an error the
	// model sees.
	Renew func(ctx context.Context, stale *registry.Snapshot) (*registry.Snapshot, error)
}

// State is the read side of an agent's skill load state.
type State interface {
	// Loaded reports whether the skill is loaded for the calling agent.
	Loaded(skill string) bool
	// Docs returns the skill's selected documents; all is true when every
	// document is selected.
	Docs(skill string) (docs []string, all bool)
}

// Result is the outcome of a call as the model and the client see it.
type Result struct {
	// Text is exactly what the model sees as the tool result.
	Text string
	// IsError marks a failed call (the model sees the failure).
	IsError bool
	// Structured is the result as one JSON object, when the tool has one
	// (workspace_exec's result object); MCP clients receive it as
	// structured content. The model still sees Text.
	Structured json.RawMessage
	// Attachments are files the call produced, with their media types.
	Attachments []Attachment
	// Effects are the load-state changes to record with the result.
	Effects []Effect
}

// Attachment is one file a call returns beside its text.
type Attachment struct {
	// Name is the file's path relative to where the tool found it (for
	// workspace_exec, the workspace), with slashes.
	Name string `json:"name"`
	// MIMEType is the detected media type, e.g. "text/csv".
	MIMEType string `json:"mime_type"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// Text is the content of a text file, when it was within the inline
	// limits; empty otherwise.
	Text string `json:"text,omitempty"`
	// Truncated reports that Text is cut short (possibly to nothing).
	Truncated bool `json:"truncated,omitempty"`
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
	// AllDocs selects every document; Docs then lists the documents the
	// skill had when the selection was made.
	AllDocs bool `json:"all_docs,omitempty"`
	// Inline reports that the result's text already holds the skill's
	// instructions (the skill tool), so nothing is added to it when the
	// next request is built.
	Inline bool `json:"inline,omitempty"`
}

// schemaFor derives the schema of one of this package's argument types.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := schemaOf[T]()
	if err != nil {
		// The argument types are fixed in this package; a failure here is a
		// programming error caught by the package tests.
		panic(fmt.Sprintf("tools: schema for %T: %v", *new(T), err))
	}
	return s
}

// invalidArgs is the result for arguments that are not one JSON object
// of the tool's schema.
func invalidArgs(tool string, err error) Result {
	return Errorf("Error: invalid arguments to %s: %s; send one JSON object that matches the tool's schema", tool, describe(err))
}

// describe words a decoding error for the model, without Go type names.
func describe(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	if te.Field == "" {
		return fmt.Sprintf("the arguments are %s, not %s", jsonKind(te.Value), goKind(te.Type))
	}
	return fmt.Sprintf("%s is %s, not %s", strconv.Quote(te.Field), jsonKind(te.Value), goKind(te.Type))
}

// jsonKind names a JSON value kind as encoding/json reports it.
func jsonKind(v string) string {
	switch v {
	case "array", "object":
		return "an " + v
	case "bool":
		return "a boolean"
	}
	if strings.HasPrefix(v, "number") {
		return "a number"
	}
	return "a " + v
}

// goKind names the JSON kind a Go type decodes from.
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// decode reads the arguments of tool into v with DecodeArgs, or returns
// the error result. Unknown, misspelt and repeated properties are refused,
// as the schemas say (additionalProperties: false), so a mistake is
// reported instead of silently ignored. Empty or null arguments mean {}.
func decode(tool string, raw json.RawMessage, v any) (Result, bool) {
	if err := DecodeArgs(raw, v); err != nil {
		return invalidArgs(tool, err), false
	}
	return Result{}, true
}
