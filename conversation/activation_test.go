package conversation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/skill"

	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// plain is a user tool that answers with its own name.
func plain(name string) tools.Tool {
	return tools.Tool{Name: name, Description: name, Handler: func(context.Context, tools.Call) (tools.Result, error) {
		return tools.Result{Text: name + " ran"}, nil
	}}
}

// activationSets are two candidate sets: files (read, list) and search
// (find).
func activationSets() []tools.ToolSet {
	return []tools.ToolSet{
		{Name: "files", Tools: []tools.Tool{plain("read"), plain("list")}},
		{Name: "search", Tools: []tools.Tool{plain("find")}},
	}
}

// userTools are the agent's own tools beside the skill tools.
func userTools(extra ...tools.Tool) tools.Set {
	return tools.Static(slices.Concat(tools.Defaults(), []tools.Tool{plain("search_web"), plain("calculator")}, extra))
}

// toolNames returns the names of the tools c's next request offers.
func toolNames(t *testing.T, c *conv) []string {
	t.Helper()
	ts, err := c.Tools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range ts {
		names = append(names, tl.Name)
	}
	return names
}

// skillToolNames are the framework tools every request keeps.
var skillToolNames = tools.DefaultNames()

func TestActivationModes(t *testing.T) {
	inc, only := loadstate.ActivateInclude, loadstate.ActivateOnly
	rule := func(set string, m loadstate.ActivationMode) conversation.ActivationRule {
		return conversation.ActivationRule{Skill: "alpha", Sets: []string{set}, Mode: m}
	}
	own := []string{"search_web", "calculator"}
	tests := []struct {
		name  string
		rules []conversation.ActivationRule
		extra []tools.Tool // more own tools
		want  []string     // after the framework tools
	}{
		{"two include rules", []conversation.ActivationRule{rule("files", inc), rule("search", inc)}, nil,
			slices.Concat(own, []string{"files_read", "files_list", "search_find"})},
		{"two only rules", []conversation.ActivationRule{rule("files", only), rule("search", only)}, nil,
			[]string{"files_read", "files_list", "search_find"}},
		{"include and only: only wins", []conversation.ActivationRule{rule("files", inc), rule("search", only)}, nil,
			[]string{"search_find"}},
		{"activated tool replaces a same-name own tool", []conversation.ActivationRule{rule("search", inc)}, []tools.Tool{plain("search_find")},
			slices.Concat(own, []string{"search_find"})},
		{"one rule, several sets, in registration order", []conversation.ActivationRule{{Skill: "alpha", Sets: []string{"search", "files"}}}, nil,
			slices.Concat(own, []string{"files_read", "files_list", "search_find"})},
		{"a rule of another skill does not match", []conversation.ActivationRule{{Skill: "beta", Sets: []string{"files"}}}, nil, own},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stores(t, func(t *testing.T, store session.Store) {
				c := open(t, store, conversation.Options{Tools: userTools(tc.extra...),
					Activation: &conversation.Activation{Sets: activationSets(), Rules: tc.rules}}, newSnap(t))
				before := slices.Concat(skillToolNames, own, names(tc.extra))
				if got := toolNames(t, c); !slices.Equal(got, before) {
					t.Fatalf("before the load: %v; want %v", got, before)
				}
				do(t, c, "user go")
				do(t, c, `skill_load {"skill":"alpha"}`)
				if got, want := toolNames(t, c), slices.Concat(skillToolNames, tc.want); !slices.Equal(got, want) {
					t.Fatalf("after the load: %v; want %v", got, want)
				}
				// The request carries the same tools.
				req, err := c.Request(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				var sent []string
				for _, s := range req.Tools {
					sent = append(sent, s.Function.Name)
				}
				if want := slices.Concat(skillToolNames, tc.want); !slices.Equal(sent, want) {
					t.Fatalf("request tools %v; want %v", sent, want)
				}
			})
		})
	}
}

func names(ts []tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestActivationLifetimes(t *testing.T) {
	for _, tc := range []struct {
		lifetime  loadstate.ActivationLifetime
		loadLife  loadstate.Lifetime
		nextTurn  bool // the tools are still there in the agent's next turn
		otherTurn bool // another agent's turn does not end them
	}{
		{loadstate.ActivationInvocation, loadstate.Turn, false, true},
		{loadstate.ActivationInvocation, loadstate.Session, false, true},
		{loadstate.ActivationSession, loadstate.Turn, true, true},
		{loadstate.ActivationSession, loadstate.Once, true, true},
	} {
		t.Run(tc.lifetime.String()+"/"+tc.loadLife.String(), func(t *testing.T) {
			stores(t, func(t *testing.T, store session.Store) {
				c := open(t, store, conversation.Options{Lifetime: tc.loadLife, Tools: userTools(), Activation: &conversation.Activation{
					Sets: activationSets(), Rules: []conversation.ActivationRule{{Skill: "alpha", Sets: []string{"search"}, Lifetime: tc.lifetime}}}}, newSnap(t))
				do(t, c, "user go")
				do(t, c, `skill_load {"skill":"alpha"}`)
				if !slices.Contains(toolNames(t, c), "search_find") {
					t.Fatal("not activated within the turn")
				}
				// Another agent's turn in the same session.
				do(t, c.as(t, "helper"), "user hello")
				if got := slices.Contains(toolNames(t, c), "search_find"); got != tc.otherTurn {
					t.Fatalf("after another agent's turn: activated %v; want %v", got, tc.otherTurn)
				}
				do(t, c, "user again")
				if got := slices.Contains(toolNames(t, c), "search_find"); got != tc.nextTurn {
					t.Fatalf("in the next turn: activated %v; want %v", got, tc.nextTurn)
				}
				if slices.Contains(toolNames(t, c.as(t, "helper")), "search_find") {
					t.Fatal("another agent sees the activated tools")
				}
			})
		})
	}
}

// TestActivationFromTheNextRequest: the answer that loads the skill runs
// its calls against the tools the model saw, so an activated tool called
// in the same answer is unknown; the next answer can call it.
func TestActivationFromTheNextRequest(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Options{Tools: userTools(), Activation: &conversation.Activation{
			Sets: activationSets(), Rules: []conversation.ActivationRule{{Skill: "alpha", Sets: []string{"search"}}}}}, newSnap(t))
		do(t, c, "user go")
		step, err := c.Respond(t.Context(), conversation.Assistant{Calls: []session.ToolCall{
			{ID: "c1", Name: "skill_load", Arguments: `{"skill":"alpha"}`},
			{ID: "c2", Name: "search_find", Arguments: `{}`},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if step.Results[0].IsError || !step.Results[1].IsError || !strings.Contains(step.Results[1].Text, "search_find") {
			t.Fatalf("results %+v; want the load to succeed and the same-answer call to be an unknown tool", step.Results)
		}
		// The activation is recorded with the load's result, in the same event.
		ev := step.Events[1]
		if ev.StateDelta[loadstate.ActivatedKey("main")] == nil {
			t.Fatalf("the load's event %+v carries no activation", ev)
		}
		step, err = c.Respond(t.Context(), conversation.Assistant{Calls: []session.ToolCall{{ID: "c3", Name: "search_find", Arguments: `{}`}}})
		if err != nil {
			t.Fatal(err)
		}
		if step.Results[0].IsError || step.Results[0].Text != "find ran" {
			t.Fatalf("the next answer's call: %+v", step.Results[0])
		}
	})
}

func TestActivationTriggers(t *testing.T) {
	opts := func() conversation.Options {
		return conversation.Options{Tools: userTools(), Activation: &conversation.Activation{
			Sets: activationSets(), Rules: []conversation.ActivationRule{{Skill: "alpha", Sets: []string{"search"}}}}}
	}
	t.Run("a failed load activates nothing", func(t *testing.T) {
		c := open(t, session.NewMemoryStore(nil), opts(), newSnap(t))
		do(t, c, "user go")
		res, err := c.Call(t.Context(), "skill_load", json.RawMessage(`{"skill":"nope"}`))
		if err != nil || !res.IsError {
			t.Fatalf("loading an unknown skill: %v %+v", err, res)
		}
		if slices.Contains(toolNames(t, c), "search_find") {
			t.Fatal("activated by a failed load")
		}
	})
	t.Run("the skill tool", func(t *testing.T) {
		c := open(t, session.NewMemoryStore(nil), opts(), newSnap(t))
		do(t, c, "user go")
		do(t, c, `skill {"name":"alpha"}`)
		if !slices.Contains(toolNames(t, c), "search_find") {
			t.Fatal("not activated by the skill tool")
		}
	})
	t.Run("a document selection that loads the skill", func(t *testing.T) {
		c := open(t, session.NewMemoryStore(nil), opts(), newSnap(t))
		do(t, c, "user go")
		do(t, c, `skill_select_docs {"skill":"alpha","docs":["references/a.md"]}`)
		if !slices.Contains(toolNames(t, c), "search_find") {
			t.Fatal("not activated by a selection that loaded the skill")
		}
	})
	t.Run("declared loads", func(t *testing.T) {
		c := open(t, session.NewMemoryStore(nil), opts(), newSnap(t))
		if _, _, err := c.UserDeclare(t.Context(), "go", []loadstate.Declaration{{Skill: "alpha"}}); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(toolNames(t, c), "search_find") {
			t.Fatal("not activated by a declared load")
		}
	})
	t.Run("direct invocation", func(t *testing.T) {
		c := open(t, session.NewMemoryStore(nil), opts(), newSnap(t))
		do(t, c, "user /alpha please")
		if !slices.Contains(toolNames(t, c), "search_find") {
			t.Fatal("not activated by /alpha")
		}
	})
	t.Run("identical activations count once", func(t *testing.T) {
		o := opts()
		o.Activation.Rules = append(o.Activation.Rules, o.Activation.Rules[0], conversation.ActivationRule{Skill: "alpha", Sets: []string{"search", "search"}})
		c := open(t, session.NewMemoryStore(nil), o, newSnap(t))
		do(t, c, "user go")
		do(t, c, `skill_load {"skill":"alpha"}`)
		do(t, c, `skill_load {"skill":"alpha"}`)
		if got, want := state(t, c)[loadstate.ActivatedKey("main")], `[{"set":"search","mode":"include","lifetime":"invocation"}]`; got != want {
			t.Fatalf("activation state %s; want %s", got, want)
		}
		if n := strings.Count(strings.Join(toolNames(t, c), " "), "search_find"); n != 1 {
			t.Fatalf("search_find offered %d times", n)
		}
	})
}

// TestActivationFrameworkNameWarns: an activated tool named like a skill
// tool is left out, the skill tool stays, and a warning is logged once.
func TestActivationFrameworkNameWarns(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	c := open(t, session.NewMemoryStore(nil), conversation.Options{Tools: userTools(), Activation: &conversation.Activation{
		Logger: logger,
		Sets:   []tools.ToolSet{{Name: "skill", Tools: []tools.Tool{plain("load"), plain("extra")}}},
		Rules:  []conversation.ActivationRule{{Skill: "alpha", Sets: []string{"skill"}, Mode: loadstate.ActivateOnly}}}}, newSnap(t))
	do(t, c, "user go")
	do(t, c, `skill_load {"skill":"alpha"}`)
	got := toolNames(t, c)
	toolNames(t, c) // a second request warns no more
	if want := slices.Concat(skillToolNames, []string{"skill_extra"}); !slices.Equal(got, want) {
		t.Fatalf("tools %v; want %v", got, want)
	}
	ts, _ := c.Tools(t.Context())
	if ts[slices.Index(got, "skill_load")].Builtin() != tools.LoadName {
		t.Fatal("skill_load is not the framework tool")
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), "tool=skill_load") {
		t.Fatalf("logged %d warnings:\n%s", n, logs.String())
	}
}

func TestActivationOptionErrors(t *testing.T) {
	sets := activationSets()
	for _, tc := range []struct {
		name string
		act  conversation.Activation
		want string
	}{
		{"unknown set", conversation.Activation{Sets: sets, Rules: []conversation.ActivationRule{{Skill: "alpha", Sets: []string{"nope"}}}},
			`Activation.Rules[0].Sets[0] names "nope", which is not in Activation.Sets (registered: [files search])`},
		{"set twice", conversation.Activation{Sets: append(sets, sets[0])}, `Activation.Sets[2]: a tool set named "files" is registered twice`},
		{"bad set name", conversation.Activation{Sets: []tools.ToolSet{{Name: "a b"}}}, `Activation.Sets[0]: tools: tool set "a b"`},
		{"two sets expand to one name", conversation.Activation{Sets: []tools.ToolSet{{Name: "a", Tools: []tools.Tool{plain("b_c")}}, {Name: "a_b", Tools: []tools.Tool{plain("c")}}}},
			`Activation.Sets[1]: tool set "a_b" offers a_b_c, as tool set "a" does`},
		{"bad skill", conversation.Activation{Sets: sets, Rules: []conversation.ActivationRule{{Skill: "Alpha", Sets: []string{"files"}}}}, `Activation.Rules[0].Skill "Alpha" is not a skill name`},
		{"no sets", conversation.Activation{Sets: sets, Rules: []conversation.ActivationRule{{Skill: "alpha"}}}, "Activation.Rules[0].Sets is empty"},
		{"bad mode", conversation.Activation{Sets: sets, Rules: []conversation.ActivationRule{{Skill: "alpha", Sets: []string{"files"}, Mode: 7}}}, "Activation.Rules[0].Mode 7"},
		{"bad lifetime", conversation.Activation{Sets: sets, Rules: []conversation.ActivationRule{{Skill: "alpha", Sets: []string{"files"}, Lifetime: 9}}}, "Activation.Rules[0].Lifetime 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := session.NewMemoryStore(nil)
			s, err := store.Create(t.Context(), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = conversation.Open(t.Context(), store, s.ID, "main", &conversation.Options{Activation: &tc.act})
			if err == nil || !strings.Contains(err.Error(), "conversation: Options."+tc.want) {
				t.Fatalf("Open: %v; want an error containing %q", err, tc.want)
			}
			o := conversation.Options{Activation: &tc.act}
			if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

// TestWrapCallPanics: a wrapper that panics fails its call as a handler's
// panic does, for one call and for parallel ones, and nothing is
// recorded.
func TestWrapCallPanics(t *testing.T) {
	for _, n := range []int{1, 2} {
		store := session.NewMemoryStore(nil)
		c := open(t, store, conversation.Options{Tools: userTools(), WrapCall: func(ctx context.Context, call session.ToolCall, run func(context.Context) (tools.Result, error)) (tools.Result, error) {
			panic("boom")
		}}, newSnap(t))
		do(t, c, "user go")
		before := len(c.session(t).Events)
		var calls []session.ToolCall
		for i := range n {
			calls = append(calls, session.ToolCall{ID: "c" + string(rune('0'+i)), Name: "calculator"})
		}
		_, err := c.Respond(t.Context(), conversation.Assistant{Calls: calls})
		if err == nil || !strings.Contains(err.Error(), "Options.WrapCall panicked: boom") {
			t.Fatalf("%d calls: %v", n, err)
		}
		if after := len(c.session(t).Events); after != before {
			t.Fatalf("%d calls: recorded %d events", n, after-before)
		}
	}
}

// TestRenderOutsideTheStoreLock: a catalog renderer may read the store
// (the session's own state, say): it runs before the append takes the
// store's lock.
func TestRenderOutsideTheStoreLock(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		var c *conv
		reads := 0
		render := func(ctx context.Context, ss []skill.Summary) string {
			if _, _, err := store.State(ctx, c.ID()); err != nil {
				t.Error(err)
			}
			reads++
			return "Skills: " + ss[0].Name
		}
		c = open(t, store, conversation.Options{Catalog: assembly.CatalogOptions{Render: render}}, newSnap(t))
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		if _, err := c.User(ctx, "go"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Respond(ctx, conversation.Assistant{Text: "ok"}); err != nil {
			t.Fatal(err)
		}
		if reads < 2 || !strings.Contains(c.session(t).Events[0].Text, "Skills: alpha") {
			t.Fatalf("renders %d, first event %q", reads, c.session(t).Events[0].Text)
		}
	})
}
