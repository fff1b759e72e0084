package tools

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nested exercises DecodeArgs on objects inside arrays and maps.
type nested struct {
	Items []struct {
		Name string            `json:"name"`
		Meta map[string]string `json:"meta,omitempty"`
	} `json:"items"`
	Any  any              `json:"any,omitempty"`
	Raw  json.RawMessage  `json:"raw,omitempty"`
	Ptr  *struct{ X int } `json:"ptr,omitempty"`
	Skip string           `json:"-"`
	embedded
}

type embedded struct {
	Promoted string `json:"promoted,omitempty"`
}

// TestDecodeArgs covers what the strict decoder refuses and what it
// accepts, at every depth.
func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name, args string
		want       string // error text; "" means accepted
		dup        bool   // the error wraps ErrDuplicateKey
	}{
		{name: "empty", args: ``},
		{name: "null", args: `null`},
		{name: "plain", args: `{"items":[{"name":"a","meta":{"k":"v","K":"w"}}],"any":{"a":1,"A":2},"promoted":"p"}`},
		{name: "same key in sibling objects", args: `{"items":[{"name":"a"},{"name":"b"}],"any":[{"x":1},{"x":2}]}`},
		{name: "same key at different depths", args: `{"any":{"any":{"any":1}}}`},
		{name: "top level", args: `{"items":[],"items":[]}`, want: `duplicate key "items" in the arguments (give each key once)`, dup: true},
		{name: "escaped spelling", args: `{"items":[],"\u0069tems":[]}`, want: `duplicate key "items" in the arguments (give each key once)`, dup: true},
		{name: "in an object in an array", args: `{"items":[{"name":"a"},{"name":"a","name":"b"}]}`, want: `duplicate key "name" in items[1] (give each key once)`, dup: true},
		{name: "in a map", args: `{"items":[{"name":"a","meta":{"k":"1","k":"2"}}]}`, want: `duplicate key "k" in items[0].meta (give each key once)`, dup: true},
		{name: "in an untyped value", args: `{"any":[[{"a b":{"x":1,"x":2}}]]}`, want: `duplicate key "x" in any[0][0]["a b"] (give each key once)`, dup: true},
		{name: "in a raw message", args: `{"raw":{"a":1,"a":1}}`, want: `duplicate key "a" in raw (give each key once)`, dup: true},
		{name: "empty key twice", args: `{"any":{"":1,"":2}}`, want: `duplicate key "" in any (give each key once)`, dup: true},
		{name: "in a pointer struct", args: `{"ptr":{"X":1,"X":2}}`, want: `duplicate key "X" in ptr (give each key once)`, dup: true},
		{name: "promoted field", args: `{"promoted":"a","promoted":"b"}`, want: `duplicate key "promoted" in the arguments (give each key once)`, dup: true},
		{name: "case differs", args: `{"Items":[]}`, want: `unknown key "Items" in the arguments; property names are case-sensitive, use "items"`},
		{name: "case differs beside the exact key", args: `{"items":[],"ITEMS":[{"name":"x"}]}`, want: `unknown key "ITEMS" in the arguments; property names are case-sensitive, use "items"`},
		{name: "case differs in an object in an array", args: `{"items":[{"nAme":"x"}]}`, want: `unknown key "nAme" in items[0]; property names are case-sensitive, use "name"`},
		{name: "case differs in a nested struct", args: `{"ptr":{"x":1}}`, want: `unknown key "x" in ptr; property names are case-sensitive, use "X"`},
		{name: "unknown", args: `{"bogus":1}`, want: `json: unknown field "bogus"`},
		{name: "skipped field is unknown", args: `{"Skip":"x"}`, want: `json: unknown field "Skip"`},
		{name: "trailing data", args: `{} {}`, want: `unexpected data after the JSON object`},
		{name: "syntax", args: `{"items":`, want: `unexpected EOF`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v nested
			err := DecodeArgs(json.RawMessage(tt.args), &v)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("error:\n got %q\nwant %q", got, tt.want)
			}
			if errors.Is(err, ErrDuplicateKey) != tt.dup {
				t.Errorf("errors.Is(err, ErrDuplicateKey) = %v, want %v", !tt.dup, tt.dup)
			}
		})
	}
}

// TestDecodeArgsFoldedKeys pins the Unicode spellings encoding/json folds
// onto an ASCII property name: each is refused by name.
func TestDecodeArgsFoldedKeys(t *testing.T) {
	for _, key := range []string{"\u017fkill", "S\u212aILL", "sKiLl"} {
		var a LoadArgs
		err := DecodeArgs(json.RawMessage(`{"skill":"alpha","`+key+`":"beta"}`), &a)
		want := `unknown key "` + key + `" in the arguments; property names are case-sensitive, use "skill"`
		if err == nil || err.Error() != want {
			t.Errorf("key %q: error %v, want %q", key, err, want)
		}
	}
}

// TestToolsRefuseDuplicateKeys checks every tool refuses a repeated key
// with the model-facing error and asks for no load change.
func TestToolsRefuseDuplicateKeys(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		tool Tool
		args string
		want string
	}{
		{Skill(), `{"name":"alpha","name":"hidden"}`, `duplicate key "name" in the arguments`},
		{Load(), `{"skill":"nodocs","skill":"alpha"}`, `duplicate key "skill" in the arguments`},
		{Load(), `{"skill":"alpha","Skill":"nodocs"}`, `unknown key "Skill" in the arguments; property names are case-sensitive, use "skill"`},
		{SelectDocs(), `{"skill":"alpha","docs":["notes.txt"],"mode":"add","mode":"clear"}`, `duplicate key "mode" in the arguments`},
		{ListDocs(), `{"skill":"alpha","skill":"alpha"}`, `duplicate key "skill" in the arguments`},
		{Read(), `{"skill":"alpha","path":"notes.txt","path":"../x"}`, `duplicate key "path" in the arguments`},
	}
	st := state{"alpha": nil}
	for _, tt := range tests {
		t.Run(tt.tool.Name, func(t *testing.T) {
			r := run(t, tt.tool, Call{Args: json.RawMessage(tt.args), Skills: f.snap, State: st})
			prefix := "Error: invalid arguments to " + tt.tool.Name + ": " + tt.want
			if !r.IsError || !strings.HasPrefix(r.Text, prefix) || !strings.HasSuffix(r.Text, "; send one JSON object that matches the tool's schema") {
				t.Errorf("got %+v, want an error starting %q", r, prefix)
			}
			if len(r.Effects) > 0 {
				t.Errorf("effects %+v for refused arguments", r.Effects)
			}
		})
	}
}

// TestWorkspaceExecArgsDuplicates checks the workspace_exec argument type:
// env is a map, so keys differing in case are two variables, but one
// variable twice is refused.
func TestWorkspaceExecArgsDuplicates(t *testing.T) {
	var a WorkspaceExecArgs
	if err := DecodeArgs(json.RawMessage(`{"command":"env","env":{"A":"1","a":"2"},"output_files":["out/*"]}`), &a); err != nil {
		t.Fatalf("distinct keys refused: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"A": "1", "a": "2"}, a.Env); diff != "" {
		t.Error(diff)
	}
	err := DecodeArgs(json.RawMessage(`{"command":"env","env":{"A":"1","A":"2"}}`), &a)
	if !errors.Is(err, ErrDuplicateKey) || err.Error() != `duplicate key "A" in env (give each key once)` {
		t.Errorf("err = %v", err)
	}
}

// FuzzDecodeArgs checks the strict decoder against an independent count:
// arguments are accepted only if every object names each key once (the
// members in the token stream equal the keys of the decoded tree), a
// repeated key is always refused with ErrDuplicateKey, and struct
// arguments accepted carry only exact property names.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1,"a":2}`, `[{"a":1},{"a":1,"b":[{"c":1,"c":2}]}]`, `{"a":{"b":{"b":1}}}`,
		`{"a":1,"\u0061":2}`, `{"skill":"x","Skill":"y"}`, `{"skill":"x","docs":["a","a"]}`,
		`{"command":"x","env":{"A":"1","a":"2"}}`, `{"command":"x","env":{"A":"1","A":"2"}}`, `null`, `"x"`, `{"a":`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var tree any
		err := DecodeArgs(json.RawMessage(raw), &tree)
		if errors.Is(err, ErrDuplicateKey) && !strings.Contains(err.Error(), "duplicate key") {
			t.Fatalf("%q: %v", raw, err)
		}
		if jsonErr := json.Unmarshal([]byte(raw), new(any)); jsonErr == nil {
			members, keys := countMembers(t, raw), countKeys(tree)
			switch {
			case err == nil && members != keys:
				t.Fatalf("%q accepted with %d members but %d distinct keys", raw, members, keys)
			case err != nil && members == keys:
				t.Fatalf("%q refused without a duplicate: %v", raw, err)
			case err != nil && !errors.Is(err, ErrDuplicateKey):
				t.Fatalf("%q: duplicate reported as %v", raw, err)
			}
		}
		for _, v := range []any{new(LoadArgs), new(WorkspaceExecArgs)} {
			if DecodeArgs(json.RawMessage(raw), v) != nil {
				continue
			}
			var top map[string]json.RawMessage
			if json.Unmarshal([]byte(raw), &top) != nil {
				continue
			}
			props := schemaProps(v)
			for k := range top {
				if !props[k] {
					t.Fatalf("%q accepted into %T with key %q, not a property", raw, v, k)
				}
			}
		}
	})
}

// countMembers counts the object members in a valid JSON text, without
// telling keys apart.
func countMembers(t *testing.T, raw string) int {
	dec := json.NewDecoder(strings.NewReader(raw))
	var value func() int
	value = func() int {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		n := 0
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				if _, err := dec.Token(); err != nil {
					t.Fatalf("%q: %v", raw, err)
				}
				n += 1 + value()
			}
			dec.Token()
		case json.Delim('['):
			for dec.More() {
				n += value()
			}
			dec.Token()
		}
		return n
	}
	if _, err := dec.Token(); err == io.EOF {
		return 0
	}
	dec = json.NewDecoder(strings.NewReader(raw))
	return value()
}

// countKeys counts the keys of every object in a decoded tree.
func countKeys(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := len(v)
		for _, e := range v {
			n += countKeys(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range v {
			n += countKeys(e)
		}
		return n
	}
	return 0
}

// schemaProps lists the property names of an argument type's schema.
func schemaProps(v any) map[string]bool {
	var s map[string]any
	var b []byte
	switch v.(type) {
	case *LoadArgs:
		b, _ = json.Marshal(schemaFor[LoadArgs]())
	case *WorkspaceExecArgs:
		b, _ = json.Marshal(schemaFor[WorkspaceExecArgs]())
	}
	_ = json.Unmarshal(b, &s)
	props := map[string]bool{}
	for k := range s["properties"].(map[string]any) {
		props[k] = true
	}
	return props
}
