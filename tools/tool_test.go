package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSchemas pins every tool's input schema (testdata/schema/NAME.json)
// and the facts a model API relies on.
func TestSchemas(t *testing.T) {
	for _, tool := range []Tool{Skill(), Load(), SelectDocs(), ListDocs(), Read()} {
		t.Run(tool.Name, func(t *testing.T) {
			b, err := json.MarshalIndent(tool.InputSchema, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "schema/"+tool.Name+".json", append(b, '\n'))
			if tool.InputSchema.Type != "object" {
				t.Errorf("schema type = %q, want object", tool.InputSchema.Type)
			}
			if tool.Description == "" {
				t.Error("empty description")
			}
			for name, p := range tool.InputSchema.Properties {
				if len(p.Types) > 0 {
					t.Errorf("property %s has a type list %v; model APIs want one type", name, p.Types)
				}
				if p.Description == "" {
					t.Errorf("property %s has no description", name)
				}
			}
		})
	}
}

// TestSkillSchema checks the skill tool's schema against the reference:
// one required string property "name" with the dsh skill tool's description.
func TestSkillSchema(t *testing.T) {
	s := Skill().InputSchema
	if diff := cmp.Diff([]string{"name"}, s.Required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
	if len(s.Properties) != 1 {
		t.Errorf("properties = %d, want 1", len(s.Properties))
	}
	p := s.Properties["name"]
	if p == nil || p.Type != "string" || p.Description != "The exact skill name from the available skills list." {
		t.Errorf("name property = %+v", p)
	}
}

// TestSelectDocsModeSchema checks that the schema offers exactly the three
// modes, replace by default.
func TestSelectDocsModeSchema(t *testing.T) {
	p := SelectDocs().InputSchema.Properties["mode"]
	if diff := cmp.Diff([]any{ModeAdd, ModeReplace, ModeClear}, p.Enum); diff != "" {
		t.Errorf("enum (-want +got):\n%s", diff)
	}
	if string(p.Default) != `"replace"` {
		t.Errorf("default = %s, want \"replace\"", p.Default)
	}
}

func TestCallNilHandler(t *testing.T) {
	_, err := Tool{Name: "x"}.Call(context.Background(), Call{})
	if err == nil || err.Error() != `tools: tool "x" has no handler; set Tool.Handler` {
		t.Errorf("err = %v", err)
	}
}

func TestErrorf(t *testing.T) {
	got := Errorf("Error: %s %d", "a", 1)
	if diff := cmp.Diff(Result{Text: "Error: a 1", IsError: true}, got); diff != "" {
		t.Error(diff)
	}
}

func TestLookup(t *testing.T) {
	if _, ok := Lookup(nil, "alpha"); ok {
		t.Error("Lookup on a nil snapshot found a skill")
	}
	f := newFixture(t)
	if s, ok := Lookup(f.snap, "alpha"); !ok || s.Name != "alpha" {
		t.Errorf("Lookup(alpha) = %+v, %v", s, ok)
	}
	if _, ok := Lookup(f.without("alpha"), "alpha"); ok {
		t.Error("Lookup found a filtered skill")
	}
}

// TestEffectJSON pins the recorded form of effects.
func TestEffectJSON(t *testing.T) {
	tests := []struct {
		e    Effect
		want string
	}{
		{Effect{Kind: EffectLoad, Skill: "a", DocsMode: DocsKeep}, `{"kind":"load","skill":"a","docs_mode":"keep"}`},
		{Effect{Kind: EffectSelectDocs, Skill: "a", DocsMode: DocsAdd, Docs: []string{"x.md"}}, `{"kind":"select_docs","skill":"a","docs_mode":"add","docs":["x.md"]}`},
		{Effect{Kind: EffectLoad, Skill: "a", DocsMode: DocsReplace, AllDocs: true}, `{"kind":"load","skill":"a","docs_mode":"replace","all_docs":true}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.e)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("got %s, want %s", b, tt.want)
		}
	}
}

// TestConcurrentCalls runs every tool from many goroutines on one
// snapshot (run with -race): the first calls fill the caches.
func TestConcurrentCalls(t *testing.T) {
	f := newFixture(t)
	st := state{"alpha": nil}
	calls := []struct {
		tool Tool
		args string
	}{
		{Skill(), `{"name":"alpha"}`},
		{Load(), `{"skill":"alpha","docs":["notes.txt"]}`},
		{SelectDocs(), `{"skill":"alpha","mode":"add","docs":["references/api.md"]}`},
		{ListDocs(), `{"skill":"alpha"}`},
		{Read(), `{"skill":"alpha","path":"references/guide.md"}`},
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(calls))
	for range 8 {
		for _, c := range calls {
			wg.Go(func() {
				if r := run(t, c.tool, Call{Args: json.RawMessage(c.args), Skills: f.snap, State: st}); r.IsError {
					errs <- fmt.Sprintf("%s: %s", c.tool.Name, r.Text)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestCancelledContext: a cancelled request that must read files is the
// handler's error, not a result the model sees, and is not cached.
func TestCancelledContext(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		tool Tool
		args string
	}{
		{Skill(), `{"name":"alpha"}`},
		{ListDocs(), `{"skill":"alpha"}`},
		{Load(), `{"skill":"alpha"}`},
		{Read(), `{"skill":"alpha","path":"notes.txt"}`},
	} {
		got, err := tc.tool.Call(ctx, Call{Args: json.RawMessage(tc.args), Skills: f.snap, State: state{"alpha": nil}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled %s call: %+v, %v; want context.Canceled", tc.tool.Name, got, err)
		}
	}
	// The cancellation is not remembered.
	if got := run(t, ListDocs(), Call{Args: json.RawMessage(`{"skill":"alpha"}`), Skills: f.snap}); got.IsError {
		t.Errorf("after cancellation: %+v", got)
	}
}

func TestSelect(t *testing.T) {
	exec := Tool{Name: "workspace_exec", Description: "run", Handler: func(context.Context, Call) (Result, error) { return Result{Text: "ran"}, nil }}
	tests := []struct {
		name    string
		names   []string
		extra   []Tool
		want    []string
		wantErr string
		is      error
	}{
		{name: "nil means the default", names: nil, want: DefaultNames()},
		{name: "empty means the default", names: []string{}, want: DefaultNames()},
		{name: "default has no exec even when offered", extra: []Tool{exec}, want: DefaultNames()},
		{name: "custom order", names: []string{ReadName, SkillName}, want: []string{ReadName, SkillName}},
		{name: "extra tool by name", names: []string{SkillName, "workspace_exec", LoadName}, extra: []Tool{exec}, want: []string{SkillName, "workspace_exec", LoadName}},
		{name: "unknown", names: []string{SkillName, "skill_exec"},
			wantErr: "tools: unknown tool \"skill_exec\"; available: skill, skill_list_docs, skill_load, skill_read, skill_select_docs", is: ErrUnknownTool},
		{name: "unknown lists extras", names: []string{"exec"}, extra: []Tool{exec},
			wantErr: "tools: unknown tool \"exec\"; available: skill, skill_list_docs, skill_load, skill_read, skill_select_docs, workspace_exec", is: ErrUnknownTool},
		{name: "empty name", names: []string{""},
			wantErr: "tools: unknown tool \"\"; available: skill, skill_list_docs, skill_load, skill_read, skill_select_docs", is: ErrUnknownTool},
		{name: "duplicate", names: []string{SkillName, LoadName, SkillName}, wantErr: `tools: tool "skill" is listed twice; list each tool once`},
		{name: "extra shadows a built-in", extra: []Tool{{Name: SkillName, Handler: exec.Handler}},
			wantErr: `tools: extra tool "skill" has the name of a built-in tool; give it another name`},
		{name: "extra given twice", extra: []Tool{exec, exec}, wantErr: `tools: extra tool "workspace_exec" is given twice; pass each tool once`},
		{name: "extra without name", extra: []Tool{exec, {Handler: exec.Handler}}, wantErr: `tools: extra tool 1 has no name; set Tool.Name`},
		{name: "extra without handler", extra: []Tool{{Name: "x"}}, wantErr: `tools: extra tool "x" has no handler; set Tool.Handler`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Select(tt.names, tt.extra...)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("error does not wrap %v", tt.is)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			names := make([]string, len(got))
			for i, tool := range got {
				names[i] = tool.Name
				if tool.Handler == nil || tool.InputSchema == nil && tool.Name != "workspace_exec" {
					t.Errorf("tool %s is incomplete", tool.Name)
				}
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectExtraIsCalled(t *testing.T) {
	exec := Tool{Name: "workspace_exec", Handler: func(context.Context, Call) (Result, error) { return Result{Text: "ran"}, nil }}
	got, err := Select([]string{"workspace_exec"}, exec)
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, got[0], Call{}); r.Text != "ran" {
		t.Errorf("extra tool result = %q", r.Text)
	}
}

func TestDefaultNames(t *testing.T) {
	want := []string{"skill", "skill_load", "skill_select_docs", "skill_list_docs", "skill_read"}
	d := DefaultNames()
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	d[0] = "changed"
	if DefaultNames()[0] != "skill" {
		t.Error("DefaultNames shares its slice with callers")
	}
}

func TestToolSetExpand(t *testing.T) {
	h := func(context.Context, Call) (Result, error) { return Result{Text: "ok"}, nil }
	for _, c := range []struct {
		name    string
		set     ToolSet
		want    []string
		wantErr string
	}{
		{"prefixed in order", ToolSet{Name: "docs", Tools: []Tool{{Name: "read_file", Handler: h}, {Name: "glob", Handler: h}}}, []string{"docs_read_file", "docs_glob"}, ""},
		{"empty set", ToolSet{Name: "none"}, []string{}, ""},
		{"bad set name", ToolSet{Name: "a b", Tools: []Tool{{Name: "x", Handler: h}}}, nil, `tool set "a b": name it`},
		{"name too long after prefix", ToolSet{Name: strings.Repeat("s", 60), Tools: []Tool{{Name: "read_file", Handler: h}}}, nil, "use 1 to 64"},
		{"duplicate tool", ToolSet{Name: "d", Tools: []Tool{{Name: "x", Handler: h}, {Name: "x", Handler: h}}}, nil, `two tools are named "d_x"`},
		{"no handler", ToolSet{Name: "d", Tools: []Tool{{Name: "x"}}}, nil, "has no handler"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.set.Expand()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Expand: %v; want an error containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, tl := range got {
				names = append(names, tl.Name)
			}
			if !slices.Equal(names, c.want) {
				t.Fatalf("names %v; want %v", names, c.want)
			}
			if len(c.set.Tools) > 0 && c.set.Tools[0].Name == got[0].Name {
				t.Fatal("Expand renamed the set's own tools")
			}
		})
	}
}
