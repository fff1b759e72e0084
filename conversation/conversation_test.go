package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
)

var files = map[string]string{
	"alpha/SKILL.md":        "---\nname: alpha\ndescription: Alpha.\n---\n# Alpha\n",
	"alpha/references/a.md": "# A\n",
	"alpha/references/b.md": "# B\n",
	"beta/SKILL.md":         "---\nname: beta\ndescription: Beta.\n---\n# Beta\n",
	"gamma/SKILL.md":        "---\nname: gamma\ndescription: Gamma.\n---\n# Gamma\n",
	"secret/SKILL.md":       "---\nname: secret\ndescription: Hidden by a filter.\n---\n# Secret\n",
}

// newSnap builds a registry over a real skill tree; the skill secret is
// filtered out of the view the conversation uses.
func newSnap(t testing.TB) *registry.Snapshot {
	t.Helper()
	return snapOf(t, files).View(context.Background(), func(_ context.Context, s skill.Summary) bool { return s.Name != "secret" })
}

// snapOf writes files (slash path → content) into a temporary folder and
// returns a snapshot of the skills there.
func snapOf(t testing.TB, files map[string]string) *registry.Snapshot {
	t.Helper()
	root := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := source.Dir(root, "project", 0)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(context.Background(), []source.Source{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg.Snapshot()
}

// stores runs f with a memory store and a SQLite store.
func stores(t *testing.T, f func(t *testing.T, store session.Store)) {
	t.Run("memory", func(t *testing.T) { f(t, session.NewMemoryStore(nil)) })
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "s.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		f(t, s)
	})
}

func open(t *testing.T, store session.Store, cfg conversation.Config, snap *registry.Snapshot) *conversation.Conversation {
	t.Helper()
	cfg, err := cfg.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Create(t.Context(), "", cfg.Meta())
	if err != nil {
		t.Fatal(err)
	}
	c, err := conversation.Open(t.Context(), store, s.ID, "main", snap)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func do(t *testing.T, c *conversation.Conversation, step string) {
	t.Helper()
	tool, args, _ := strings.Cut(step, " ")
	if tool == "user" {
		if _, err := c.User(t.Context(), args); err != nil {
			t.Fatal(err)
		}
		return
	}
	res, err := c.Call(t.Context(), tool, json.RawMessage(args))
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %s", step, err, res.Text)
	}
}

func state(t *testing.T, c *conversation.Conversation) map[string]string {
	t.Helper()
	s, err := c.Store.Get(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return s.State
}

// loaded returns the agent's loaded skills, least recently used first.
func loaded(t *testing.T, c *conversation.Conversation) []string {
	return session.NewAgentState(state(t, c), c.Agent).Skills()
}

func TestLifetimes(t *testing.T) {
	snap := newSnap(t)
	steps := []string{
		`user one`,
		`skill_load {"skill":"alpha","docs":["references/a.md"]}`,
		`skill_list_docs {"skill":"beta"}`,
		`user two`,
		`skill_load {"skill":"beta"}`,
	}
	tests := []struct {
		mode session.Mode
		want [][]string // loaded after each step
	}{
		{session.ModeOnce, [][]string{{}, {"alpha"}, {}, {}, {"beta"}}},
		{session.ModeTurn, [][]string{{}, {"alpha"}, {"alpha"}, {}, {"beta"}}},
		{session.ModeSession, [][]string{{}, {"alpha"}, {"alpha"}, {"alpha"}, {"alpha", "beta"}}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			stores(t, func(t *testing.T, store session.Store) {
				c := open(t, store, conversation.Config{Mode: tt.mode}, snap)
				for i, st := range steps {
					do(t, c, st)
					got := loaded(t, c)
					if !slices.Equal(got, tt.want[i]) {
						t.Fatalf("after %q: loaded %v, want %v", st, got, tt.want[i])
					}
					_, hasDocs := state(t, c)[session.DocsKey("main", "alpha")]
					if hasDocs != slices.Contains(tt.want[i], "alpha") {
						t.Fatalf("after %q: docs key present = %v, want it with the load", st, hasDocs)
					}
				}
			})
		})
	}
}

// In turn mode a user message clears every agent's loads, not only the
// caller's.
func TestTurnResetsEveryAgent(t *testing.T) {
	store := session.NewMemoryStore(nil)
	snap := newSnap(t)
	a := open(t, store, conversation.Config{}, snap)
	b, err := conversation.Open(t.Context(), store, a.ID, "helper", snap)
	if err != nil {
		t.Fatal(err)
	}
	do(t, a, `user go`)
	do(t, b, `skill_load {"skill":"beta"}`)
	if got := session.NewAgentState(state(t, a), "helper").Skills(); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("helper loaded %v", got)
	}
	if got := loaded(t, a); len(got) != 0 {
		t.Fatalf("main sees the helper's load: %v", got)
	}
	do(t, a, `user again`)
	for k := range state(t, a) {
		if strings.HasPrefix(k, session.SkillStatePrefix) {
			t.Fatalf("key %s survived the turn", k)
		}
	}
}

func TestLRUWithDocSelectionTouch(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Config{Mode: session.ModeSession, MaxLoaded: 2}, newSnap(t))
		do(t, c, `user go`)
		do(t, c, `skill_load {"skill":"alpha"}`)
		do(t, c, `skill_load {"skill":"beta"}`)
		do(t, c, `skill_select_docs {"skill":"alpha","docs":["references/b.md"],"mode":"add"}`) // touch
		do(t, c, `skill_load {"skill":"gamma"}`)                                                // evicts beta
		if got := loaded(t, c); !slices.Equal(got, []string{"alpha", "gamma"}) {
			t.Fatalf("loaded %v, want [alpha gamma] (beta least recently used)", got)
		}
		if docs, _ := session.NewAgentState(state(t, c), "main").Docs("alpha"); !slices.Equal(docs, []string{"references/b.md"}) {
			t.Fatalf("alpha docs %v", docs)
		}
		do(t, c, `skill_load {"skill":"beta"}`) // evicts alpha and its docs
		st := state(t, c)
		if _, ok := st[session.DocsKey("main", "alpha")]; ok {
			t.Fatal("evicted skill kept its docs key")
		}
		if got := loaded(t, c); !slices.Equal(got, []string{"gamma", "beta"}) {
			t.Fatalf("loaded %v", got)
		}
	})
}

func TestDeclare(t *testing.T) {
	snap := newSnap(t)
	L := func(name string, docs ...string) session.LoadRequest {
		return session.LoadRequest{Name: name, Docs: docs}
	}
	all := func(name string) session.LoadRequest { return session.LoadRequest{Name: name, IncludeAllDocs: true} }
	both := session.LoadRequest{Name: "alpha", Docs: []string{"references/a.md"}, IncludeAllDocs: true}
	tests := []struct {
		name    string
		max     int
		reqs    []session.LoadRequest
		err     error
		msg     string
		loaded  []string
		docsKey string // encoded alpha selection
	}{
		{name: "docs", reqs: []session.LoadRequest{L("alpha", "./references/b.md", "references/a.md")}, loaded: []string{"alpha"}, docsKey: `["references/a.md","references/b.md"]`},
		{name: "include all", reqs: []session.LoadRequest{all("alpha"), L("beta")}, loaded: []string{"alpha", "beta"}, docsKey: "*"},
		{name: "equal merge", reqs: []session.LoadRequest{L("alpha", "references/a.md"), L("alpha", "references/a.md", "references/a.md")}, loaded: []string{"alpha"}, docsKey: `["references/a.md"]`},
		{name: "docs and include all", reqs: []session.LoadRequest{both}, err: session.ErrInvalidLoadRequest, msg: `load request 1 (skill "alpha"): set Docs or IncludeAllDocs, not both`},
		{name: "conflict", reqs: []session.LoadRequest{L("alpha"), L("alpha", "references/a.md")}, err: session.ErrInvalidLoadRequest, msg: `load request 2 (skill "alpha") conflicts with an earlier declaration`},
		{name: "SKILL.md", reqs: []session.LoadRequest{L("alpha", "SKILL.md")}, err: session.ErrInvalidLoadRequest, msg: "SKILL.md is always loaded and is not a document"},
		{name: "missing doc", reqs: []session.LoadRequest{L("beta"), L("alpha", "nope.md")}, err: session.ErrInvalidLoadRequest, msg: `document "nope.md" does not exist; valid documents: references/a.md, references/b.md`},
		{name: "invalid name", reqs: []session.LoadRequest{L("Bad Name")}, err: session.ErrInvalidLoadRequest, msg: "must be a valid skill name"},
		{name: "invisible", reqs: []session.LoadRequest{L("alpha"), L("secret")}, err: session.ErrSkillUnavailable, msg: `load request 2 (skill "secret") is unknown or not visible`},
		{name: "unknown", reqs: []session.LoadRequest{L("nosuch")}, err: session.ErrSkillUnavailable},
		{name: "at cap", max: 2, reqs: []session.LoadRequest{L("alpha"), L("beta"), L("alpha")}, loaded: []string{"alpha", "beta"}, docsKey: ""},
		{name: "over cap", max: 2, reqs: []session.LoadRequest{L("alpha"), L("beta"), L("gamma")}, err: session.ErrInvalidLoadRequest, msg: "3 skills declared, more than the cap of 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := open(t, session.NewMemoryStore(nil), conversation.Config{MaxLoaded: tt.max}, snap)
			do(t, c, `user go`)
			before, _ := c.Store.Get(t.Context(), c.ID)
			ev, err := c.Declare(t.Context(), tt.reqs)
			after, _ := c.Store.Get(t.Context(), c.ID)
			if tt.err != nil {
				if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("err = %v, want %v containing %q", err, tt.err, tt.msg)
				}
				if !reflect.DeepEqual(before, after) {
					t.Fatal("a failed declaration changed the session")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind != session.KindState || ev.Agent != "main" || len(after.Events) != len(before.Events)+1 {
				t.Fatalf("recorded %+v; want one state event", ev)
			}
			if got := loaded(t, c); !slices.Equal(got, tt.loaded) {
				t.Fatalf("loaded %v, want %v", got, tt.loaded)
			}
			if got := after.State[session.DocsKey("main", "alpha")]; got != tt.docsKey {
				t.Fatalf("alpha docs %q, want %q", got, tt.docsKey)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	c := open(t, session.NewMemoryStore(nil), conversation.Config{Tools: []string{"skill", "skill_load"}}, newSnap(t))
	do(t, c, `user go`)
	before, _ := c.Store.Get(t.Context(), c.ID)
	_, err := c.Call(t.Context(), "skill_read", nil)
	if !errors.Is(err, conversation.ErrUnknownTool) || !strings.Contains(err.Error(), `"skill_read"; this agent exposes skill, skill_load`) {
		t.Fatalf("err = %v", err)
	}
	_, err = c.Call(t.Context(), "skill", json.RawMessage(`{"name":`))
	if err == nil || !strings.Contains(err.Error(), "tool arguments are not valid JSON") {
		t.Fatalf("err = %v", err)
	}
	after, _ := c.Store.Get(t.Context(), c.ID)
	if !reflect.DeepEqual(before, after) {
		t.Fatal("a refused call changed the session")
	}
	// A tool error is recorded, with no state change.
	res, err := c.Call(t.Context(), "skill_load", json.RawMessage(`{"skill":"nosuch"}`))
	if err != nil || !res.IsError {
		t.Fatalf("res %+v err %v", res, err)
	}
	s, _ := c.Store.Get(t.Context(), c.ID)
	last := s.Events[len(s.Events)-1]
	if !last.IsError || last.StateDelta != nil || len(s.Events) != len(before.Events)+2 {
		t.Fatalf("error result recorded as %+v", last)
	}
}

func TestRequestNeverChangesSession(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Config{}, newSnap(t))
		do(t, c, `user go`)
		do(t, c, `skill_load {"skill":"alpha"}`)
		if _, err := c.Declare(t.Context(), []session.LoadRequest{{Name: "beta"}}); err != nil {
			t.Fatal(err)
		}
		before, _ := c.Store.Get(t.Context(), c.ID)
		for range 3 {
			if _, err := c.Request(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		after, _ := c.Store.Get(t.Context(), c.ID)
		if !reflect.DeepEqual(before, after) {
			t.Fatal("Request changed the session")
		}
	})
}

func TestConfig(t *testing.T) {
	tests := []struct {
		cfg  conversation.Config
		want string
	}{
		{conversation.Config{Mode: "always"}, `config mode: load mode "always"`},
		{conversation.Config{Placement: "top"}, `config placement: placement "top"`},
		{conversation.Config{MaxLoaded: -1}, "config max_loaded is -1"},
		{conversation.Config{CatalogFormat: "xml"}, `config catalog_format "xml"`},
		{conversation.Config{Tools: []string{"skill", "skill"}}, `config tools: name "skill" is empty or listed twice`},
	}
	for _, tt := range tests {
		if _, err := tt.cfg.Normalize(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Normalize(%+v) = %v, want %q", tt.cfg, err, tt.want)
		}
	}
	if _, err := conversation.ConfigFromMeta(nil); err == nil || !strings.Contains(err.Error(), "skillkit session new") {
		t.Errorf("ConfigFromMeta(nil) = %v", err)
	}
	if _, err := conversation.ConfigFromMeta(map[string]string{conversation.MetaKey: "{"}); err == nil {
		t.Error("broken metadata accepted")
	}
	cfg, _ := conversation.Config{MaxLoaded: 3}.Normalize()
	back, err := conversation.ConfigFromMeta(cfg.Meta())
	if err != nil || !reflect.DeepEqual(cfg, back) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
	// Unknown names are Open's business: it knows the tools the caller
	// built (such as workspace_exec).
	custom := tools.Tool{Name: "custom", Description: "A tool built by the caller.", Handler: func(context.Context, tools.Call) tools.Result { return tools.Result{Text: "ran"} }}
	withCustom, _ := conversation.Config{Tools: []string{"skill", "custom"}}.Normalize()
	cs := session.NewMemoryStore(nil)
	sc, _ := cs.Create(t.Context(), "", withCustom.Meta())
	if _, err := conversation.Open(t.Context(), cs, sc.ID, "main", nil); err == nil || !strings.Contains(err.Error(), `unknown tool "custom"`) {
		t.Errorf("Open without the custom tool: %v", err)
	}
	cc, err := conversation.Open(t.Context(), cs, sc.ID, "main", nil, custom)
	if err != nil {
		t.Fatalf("Open with the custom tool: %v", err)
	}
	if res, err := cc.Call(t.Context(), "custom", nil); err != nil || res.Text != "ran" {
		t.Errorf("custom tool call: %v %+v", err, res)
	}
	store := session.NewMemoryStore(nil)
	s, _ := store.Create(t.Context(), "", nil)
	if _, err := conversation.Open(t.Context(), store, s.ID, "", nil); err == nil || !strings.Contains(err.Error(), "agent name is empty") {
		t.Errorf("Open with no agent: %v", err)
	}
	if _, err := conversation.Open(t.Context(), store, s.ID, "main", nil); err == nil || !strings.Contains(err.Error(), conversation.MetaKey) {
		t.Errorf("Open without config: %v", err)
	}
}

// TestConcurrentCalls records tool calls on one session from many
// goroutines: every call gets its own ID, each assistant message is
// followed by its own result, and no load is lost.
func TestConcurrentCalls(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Config{Mode: session.ModeSession}, newSnap(t))
		do(t, c, "user go")
		names := []string{"alpha", "beta", "gamma"}
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				args := json.RawMessage(`{"name":"` + names[i%3] + `"}`)
				if res, err := c.Call(t.Context(), "skill", args); err != nil || res.IsError {
					t.Errorf("call %d: %v %s", i, err, res.Text)
				}
			})
		}
		wg.Wait()
		s, err := store.Get(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for i, ev := range s.Events {
			if ev.Kind != session.KindAssistant {
				continue
			}
			id := ev.ToolCalls[0].ID
			if ids[id] {
				t.Errorf("call ID %s used twice", id)
			}
			ids[id] = true
			if i+1 >= len(s.Events) || s.Events[i+1].Kind != session.KindTool || s.Events[i+1].ToolCallID != id {
				t.Errorf("assistant event %d (call %s) is not followed by its result", ev.Seq, id)
			}
		}
		if len(ids) != 12 {
			t.Errorf("%d distinct calls recorded, want 12", len(ids))
		}
		if got := loaded(t, c); !slices.Equal(slices.Sorted(slices.Values(got)), names) {
			t.Errorf("loaded %v, want all of %v", got, names)
		}
	})
}

// TestOnceToolsSeeTheLoadTheyAnswer: in once mode the tools called in the
// response that follows a load still see that load (the reset applies to
// later requests, not to the tools answering this one).
func TestOnceToolsSeeTheLoadTheyAnswer(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Config{Mode: session.ModeOnce}, newSnap(t))
		do(t, c, "user go")
		do(t, c, `skill_load {"skill":"alpha"}`)
		res, err := c.Call(t.Context(), "skill_read", json.RawMessage(`{"skill":"alpha","path":"references/a.md"}`))
		if err != nil || res.IsError || res.Text != "# A\n" {
			t.Fatalf("skill_read after a once load: %v %q", err, res.Text)
		}
		// That response consumed the load: the next call no longer sees it.
		res, err = c.Call(t.Context(), "skill_read", json.RawMessage(`{"skill":"alpha","path":"references/a.md"}`))
		if err != nil || !res.IsError {
			t.Fatalf("second skill_read: %v %q, want the not-loaded error", err, res.Text)
		}
	})
}

// TestUserInvokesSkillDirectly: "/name" in a user message adds the skill
// block after the message and loads the skill — also for a skill hidden
// from the model — while unknown names, skills the user may not invoke and
// /paths are left alone.
func TestUserInvokesSkillDirectly(t *testing.T) {
	snap := snapOf(t, map[string]string{
		"release/SKILL.md":   "---\nname: release\ndescription: Release notes.\ndisable-model-invocation: true\n---\n# Release steps\n",
		"modelonly/SKILL.md": "---\nname: modelonly\ndescription: Model only.\nuser-invocable: false\n---\n# Model only\n",
		"alpha/SKILL.md":     "---\nname: alpha\ndescription: Alpha.\n---\n# Alpha\n",
	})
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Config{}, snap)
		if _, err := c.User(t.Context(), "/release please, then /modelonly and /nosuch, see /usr/bin; /release again"); err != nil {
			t.Fatal(err)
		}
		s, err := store.Get(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []session.Kind
		for _, ev := range s.Events {
			kinds = append(kinds, ev.Kind)
		}
		// catalog, the user message, one block for /release.
		if !slices.Equal(kinds, []session.Kind{session.KindContext, session.KindUser, session.KindContext}) {
			t.Fatalf("event kinds %v", kinds)
		}
		block := s.Events[2].Text
		if !strings.HasPrefix(block, `<skill_content name="release">`) || !strings.Contains(block, "# Release steps") {
			t.Errorf("invocation block:\n%s", block)
		}
		if !slices.Equal(loaded(t, c), []string{"release"}) {
			t.Errorf("loaded %v, want [release]", loaded(t, c))
		}
		req, err := c.Request(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		text := req.Text()
		if strings.Count(text, "# Release steps") != 1 || strings.Contains(text, assembly.FallbackHeader) {
			t.Errorf("the block must appear once, with no fallback copy:\n%s", text)
		}
		// The hidden skill's files can now be read (the user brought it in);
		// the model still cannot load it itself.
		if res, err := c.Call(t.Context(), "skill_read", json.RawMessage(`{"skill":"release","path":"SKILL.md"}`)); err != nil || res.IsError || !strings.Contains(res.Text, "# Release steps") {
			t.Errorf("skill_read on the invoked hidden skill: %v %q", err, res.Text)
		}
		if res, _ := c.Call(t.Context(), "skill_load", json.RawMessage(`{"skill":"release"}`)); !res.IsError || !strings.Contains(res.Text, "not available for model invocation") {
			t.Errorf("skill_load of the hidden skill: %q, want the not-available error", res.Text)
		}
	})
}

// TestCallRepublishesCatalog: when the skill set changes during a turn,
// the replacement catalog is appended after the next recorded call — the
// first catalog message is never edited.
func TestCallRepublishesCatalog(t *testing.T) {
	before := snapOf(t, map[string]string{
		"alpha/SKILL.md": "---\nname: alpha\ndescription: Alpha.\n---\n# Alpha\n",
		"beta/SKILL.md":  "---\nname: beta\ndescription: Beta.\n---\n# Beta\n",
	})
	after := snapOf(t, map[string]string{
		"alpha/SKILL.md": "---\nname: alpha\ndescription: Alpha.\n---\n# Alpha\n",
	})
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Config{}, before)
		do(t, c, "user go")
		first, err := store.Get(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := conversation.Open(t.Context(), store, c.ID, c.Agent, after)
		if err != nil {
			t.Fatal(err)
		}
		do(t, c2, `skill {"name":"alpha"}`)
		s, err := store.Get(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		last := s.Events[len(s.Events)-1]
		if last.Kind != session.KindContext || !strings.Contains(last.Text, "replaces every earlier") || strings.Contains(last.Text, "`beta`") {
			t.Fatalf("last event %s %q, want the replacement catalog without beta", last.Kind, last.Text)
		}
		if s.Events[0].Text != first.Events[0].Text {
			t.Error("the first catalog message was edited")
		}
	})
}
