package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// New returns a tool whose arguments are the Go type In (a struct): the
// input schema is derived from In (json tags name the properties,
// jsonschema tags describe them, fields without omitempty are required,
// slices are plain arrays, json.RawMessage is any value), and every call
// is checked against that schema and decoded strictly (DecodeArgs) before
// h runs, so a handler never repeats the preamble and a malformed call
// gets an error result that says what is wrong. New panics when In is not
// a struct, has no JSON Schema or uses the json ",string" option: that is
// a programming error, found the first time the program runs.
func New[In any](name, description string, h func(ctx context.Context, c Call, in In) (Result, error)) Tool {
	var err error
	if t := reflect.TypeFor[In](); t.Kind() != reflect.Struct {
		err = fmt.Errorf("it is a %s; use a struct, whose fields are the arguments", t.Kind())
	} else {
		err = noStringOption(t, map[reflect.Type]bool{})
	}
	var schema *jsonschema.Schema
	if err == nil {
		schema, err = schemaOf[In]()
	}
	var resolved *jsonschema.Resolved
	if err == nil {
		resolved, err = schema.Resolve(nil)
	}
	if err != nil {
		panic(fmt.Sprintf("tools.New(%q): argument type %v: %v", name, reflect.TypeFor[In](), err))
	}
	return Tool{
		Name:        name,
		Description: description,
		InputSchema: schema,
		check:       func(raw json.RawMessage) error { return validate(resolved, raw) },
		Handler: func(ctx context.Context, c Call) (Result, error) {
			var in In
			if err := DecodeArgs(c.Args, &in); err != nil {
				return invalidArgs(name, err), nil
			}
			return h(ctx, c, in)
		},
	}
}

// builtin returns one of this package's skill tools: its handler decodes
// strictly itself and reports each mistake with the tool's own words.
func builtin(name, description string, schema *jsonschema.Schema, h Handler) Tool {
	return Tool{Name: name, Description: description, InputSchema: schema, Handler: h, builtin: name,
		check: func(json.RawMessage) error { return nil }}
}

// schemaOf derives the schema of a Go argument type. Slices are plain
// "array" (not ["null","array"], which several model APIs reject): an
// omitted list and an empty one mean the same to every tool.
func schemaOf[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		// Raw JSON is any value, not the byte array it is in Go.
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		return nil, err
	}
	plainArrays(s, map[*jsonschema.Schema]bool{})
	return s, nil
}

// plainArrays turns every ["null","array"] type, which jsonschema gives Go
// slices, into "array".
func plainArrays(s *jsonschema.Schema, seen map[*jsonschema.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if len(s.Types) == 2 && s.Types[0] == "null" && s.Types[1] == "array" {
		s.Type, s.Types = "array", nil
	}
	plainArrays(s.Items, seen)
	plainArrays(s.AdditionalProperties, seen)
	for _, p := range s.Properties {
		plainArrays(p, seen)
	}
	for _, d := range s.Defs {
		plainArrays(d, seen)
	}
	for _, d := range s.Definitions {
		plainArrays(d, seen)
	}
}

// noStringOption refuses the json ",string" option anywhere in t: the
// value is then a string holding a number or a boolean, which no schema
// derived from the Go type describes.
func noStringOption(t reflect.Type, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return nil
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if slices.Contains(strings.Split(f.Tag.Get("json"), ",")[1:], "string") {
			return fmt.Errorf("field %s uses the json \",string\" option, which the schema cannot describe; make the field a string", f.Name)
		}
		if err := noStringOption(f.Type, seen); err != nil {
			return err
		}
	}
	return nil
}

// checkSchema validates raw arguments against a tool's schema: one JSON
// object (empty or null mean {}), no key twice, and, when there is a
// schema, every constraint of it.
func checkSchema(s *jsonschema.Schema, raw json.RawMessage) error {
	if s == nil {
		return validate(nil, raw)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("the tool's input schema cannot be used (%v); this is the tool's fault, not the arguments'", err)
	}
	return validate(r, raw)
}

func validate(r *jsonschema.Resolved, raw json.RawMessage) error {
	var v any
	if err := DecodeArgs(raw, &v); err != nil {
		return err
	}
	if v == nil {
		v = map[string]any{}
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("the arguments are not a JSON object")
	}
	if r == nil {
		return nil
	}
	return r.Validate(v)
}

// Set chooses the tools of one request from the calling agent's load
// state, so that a request can offer tools a loaded skill activates. The
// tools a model's calls run against are those of the state the model saw.
type Set interface {
	Tools(ctx context.Context, st State) ([]Tool, error)
}

// Static is a Set that offers the same tools to every request.
type Static []Tool

// Tools implements Set.
func (s Static) Tools(context.Context, State) ([]Tool, error) { return s, nil }

// SetFunc adapts a function to a Set.
type SetFunc func(ctx context.Context, st State) ([]Tool, error)

// Tools implements Set.
func (f SetFunc) Tools(ctx context.Context, st State) ([]Tool, error) { return f(ctx, st) }

// validName reports whether name follows the tool name rule of the model
// APIs (OpenAI, Anthropic): 1 to 64 of A-Z, a-z, 0-9, '_' and '-'.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Check reports whether a tool list can be offered to a model: every tool
// has a name of 1 to 64 letters, digits, '_' or '-', a handler, and a
// name no other tool of the list has.
func Check(ts []Tool) error {
	seen := make(map[string]bool, len(ts))
	for i, t := range ts {
		switch {
		case !validName(t.Name):
			return fmt.Errorf("tools: tool %d is named %q; use 1 to 64 letters, digits, '_' or '-'", i, t.Name)
		case t.Handler == nil:
			return fmt.Errorf("tools: tool %q has no handler; set Tool.Handler", t.Name)
		case seen[t.Name]:
			return fmt.Errorf("tools: two tools are named %q; give each tool its own name", t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}
