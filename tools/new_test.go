package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type newArgs struct {
	Name  string   `json:"name" jsonschema:"A name."`
	Count int      `json:"count,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

func TestNew(t *testing.T) {
	errHost := errors.New("disk gone")
	var got newArgs
	tool := New("greet", "Greets.", func(ctx context.Context, c Call, in newArgs) (Result, error) {
		got = in
		if in.Name == "fail" {
			return Result{}, errHost
		}
		return Result{Text: "hi " + in.Name}, nil
	})
	if tool.Builtin() != "" {
		t.Errorf("a user tool claims to be the built-in %q", tool.Builtin())
	}
	if tool.InputSchema.Type != "object" || !strings.Contains(mustJSON(t, tool.InputSchema), `"required":["name"]`) {
		t.Errorf("schema = %s", mustJSON(t, tool.InputSchema))
	}
	for _, tc := range []struct {
		args, want string
		isErr      bool
	}{
		{`{"name":"ann"}`, "hi ann", false},
		{`{"name":"ann","count":2,"tags":["x"]}`, "hi ann", false},
		{` {"name":"ann"} `, "hi ann", false},
		{`{}`, "required: missing properties", true},
		{``, "required: missing properties", true},
		{`null`, "required: missing properties", true},
		{`{"name":"ann","name":"bob"}`, `duplicate key "name"`, true},
		{`{"name":"ann","Name":"bob"}`, "additional properties", true},
		{`{"name":1}`, `want "string"`, true},
		{`{"name":"ann","extra":true}`, "additional properties", true},
		{`[1]`, "not a JSON object", true},
		{`{"name":"ann"} {}`, "unexpected data after the JSON object", true},
		{`{"name":`, "unexpected EOF", true},
	} {
		t.Run(tc.args, func(t *testing.T) {
			got = newArgs{}
			r, err := tool.Call(context.Background(), Call{Args: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if r.IsError != tc.isErr || !strings.Contains(r.Text, tc.want) {
				t.Fatalf("result %+v, want error=%v containing %q", r, tc.isErr, tc.want)
			}
			if tc.isErr && (got.Name != "" || !strings.HasPrefix(r.Text, "Error: invalid arguments to greet: ")) {
				t.Errorf("handler ran (%+v) or the text %q does not name the tool", got, r.Text)
			}
		})
	}
	if _, err := tool.Call(context.Background(), Call{Args: json.RawMessage(`{"name":"fail"}`)}); !errors.Is(err, errHost) {
		t.Errorf("handler error = %v, want it passed through", err)
	}
}

func TestNewPanicsOnUnusableType(t *testing.T) {
	for name, mk := range map[string]func(){
		"not a struct": func() {
			New("x", "", func(context.Context, Call, string) (Result, error) { return Result{}, nil })
		},
		"no schema": func() {
			New("x", "", func(context.Context, Call, struct{ C chan int }) (Result, error) { return Result{}, nil })
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), `tools.New("x")`) {
					t.Errorf("panic = %v, want one naming the tool", p)
				}
			}()
			mk()
		})
	}
}

// A tool written by hand is checked against its own schema before its
// handler runs.
func TestCallChecksHandWrittenSchema(t *testing.T) {
	ran := false
	tool := Tool{Name: "remote", InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"q"},
		Properties: map[string]*jsonschema.Schema{"q": {Type: "string", MinLength: jsonschema.Ptr(2)}}},
		Handler: func(context.Context, Call) (Result, error) { ran = true; return Result{Text: "ok"}, nil }}
	for _, tc := range []struct {
		args string
		ok   bool
	}{{`{"q":"go"}`, true}, {`{"q":"g"}`, false}, {`{}`, false}, {`{"q":"go","q":"no"}`, false}, {`"go"`, false}} {
		ran = false
		r, err := tool.Call(context.Background(), Call{Args: json.RawMessage(tc.args)})
		if err != nil || r.IsError == tc.ok || ran != tc.ok {
			t.Errorf("%s: %+v, %v (handler ran %v); want ok=%v", tc.args, r, err, ran, tc.ok)
		}
	}
	// Without a schema only the shape is checked: one JSON object.
	tool.InputSchema = nil
	if r, _ := tool.Call(context.Background(), Call{Args: json.RawMessage(`{"anything":[1]}`)}); r.IsError {
		t.Errorf("schema-less tool refused an object: %+v", r)
	}
	if r, _ := tool.Call(context.Background(), Call{Args: json.RawMessage(`3`)}); !r.IsError {
		t.Errorf("schema-less tool accepted a number: %+v", r)
	}
}

func TestBuiltinSurvivesRename(t *testing.T) {
	for _, tool := range append(Defaults(), Tool{Name: SkillName}) {
		renamed := tool
		renamed.Name = "mcp_" + tool.Name
		want := tool.Name
		if tool.Handler == nil {
			want = "" // a user tool that only has the name
		}
		if renamed.Builtin() != want {
			t.Errorf("renamed %s: Builtin() = %q, want %q", tool.Name, renamed.Builtin(), want)
		}
	}
}

func TestCheck(t *testing.T) {
	ok := Result{}
	h := func(context.Context, Call) (Result, error) { return ok, nil }
	for _, tc := range []struct {
		name  string
		tools []Tool
		want  string
	}{
		{"defaults", Defaults(), ""},
		{"empty list", nil, ""},
		{"long name", []Tool{{Name: strings.Repeat("a", 65), Handler: h}}, "use 1 to 64 letters"},
		{"dotted name", []Tool{{Name: "a.b", Handler: h}}, `tool 0 is named "a.b"`},
		{"empty name", []Tool{{Handler: h}}, `tool 0 is named ""`},
		{"no handler", []Tool{{Name: "x"}}, `tool "x" has no handler`},
		{"twice", []Tool{{Name: "x", Handler: h}, {Name: "x", Handler: h}}, `two tools are named "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.tools)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSets(t *testing.T) {
	ctx := context.Background()
	ts, err := Static(Defaults()).Tools(ctx, nil)
	if err != nil || len(ts) != len(DefaultNames()) {
		t.Fatalf("Static = %d tools, %v", len(ts), err)
	}
	// A SetFunc sees the load state: here a tool appears once "alpha" is
	// loaded, the shape of tool activation.
	extra := Tool{Name: "alpha_tool", Handler: func(context.Context, Call) (Result, error) { return Result{}, nil }}
	set := SetFunc(func(ctx context.Context, st State) ([]Tool, error) {
		out := Defaults()
		if st != nil && st.Loaded("alpha") {
			out = append(out, extra)
		}
		return out, nil
	})
	before, _ := set.Tools(ctx, state{})
	after, _ := set.Tools(ctx, state{"alpha": nil})
	if len(after) != len(before)+1 || after[len(after)-1].Name != "alpha_tool" {
		t.Errorf("before %d tools, after %d", len(before), len(after))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNewSchemas(t *testing.T) {
	type item struct {
		N int `json:"n"`
	}
	type args struct {
		Raw   json.RawMessage `json:"raw,omitempty"`
		Ints  []int           `json:"ints,omitempty"`
		Items []item          `json:"items,omitempty"`
		Names []string        `json:"names,omitempty"`
	}
	tool := New("t", "", func(_ context.Context, _ Call, a args) (Result, error) {
		return Result{Text: string(a.Raw)}, nil
	})
	b := mustJSON(t, tool.InputSchema)
	if strings.Contains(b, `"null"`) {
		t.Errorf("a slice is nullable in %s", b)
	}
	for _, args := range []string{`{"raw":{"any":["thing",1]}}`, `{"raw":"text","ints":[1,2],"items":[{"n":1}],"names":["a"]}`} {
		if r, err := tool.Call(context.Background(), Call{Args: json.RawMessage(args)}); err != nil || r.IsError {
			t.Errorf("%s refused: %+v, %v", args, r, err)
		}
	}
	if r, _ := tool.Call(context.Background(), Call{Args: json.RawMessage(`{"ints":"1"}`)}); !r.IsError {
		t.Errorf("a string for []int accepted: %+v", r)
	}
	for name, mk := range map[string]func(){
		"pointer": func() {
			New("x", "", func(context.Context, Call, *args) (Result, error) { return Result{}, nil })
		},
		"map": func() {
			New("x", "", func(context.Context, Call, map[string]any) (Result, error) { return Result{}, nil })
		},
		"string option": func() {
			New("x", "", func(context.Context, Call, struct {
				N int `json:"n,string"`
			}) (Result, error) {
				return Result{}, nil
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("New accepted it")
				}
			}()
			mk()
		})
	}
}
