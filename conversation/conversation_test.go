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
	"github.com/skillkit/skillkit/loadstate"
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

// conv is a conversation with the store and options it was opened with.
type conv struct {
	*conversation.Conversation
	store session.Store
	opts  conversation.Options
}

// open creates a session in store and opens agent main's conversation on
// it with opts, its skills being snap.
func open(t *testing.T, store session.Store, opts conversation.Options, snap *registry.Snapshot) *conv {
	t.Helper()
	s, err := store.Create(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Skills = func(context.Context) *registry.Snapshot { return snap }
	c, err := conversation.Open(t.Context(), store, s.ID, "main", &opts)
	if err != nil {
		t.Fatal(err)
	}
	return &conv{c, store, opts}
}

// as opens agent's conversation on c's session, with c's options.
func (c *conv) as(t *testing.T, agent string) *conv {
	t.Helper()
	o, err := conversation.Open(t.Context(), c.store, c.ID(), agent, &c.opts)
	if err != nil {
		t.Fatal(err)
	}
	return &conv{o, c.store, c.opts}
}

func (c *conv) session(t *testing.T) *session.Session {
	t.Helper()
	s, err := c.store.Get(t.Context(), c.ID())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func do(t *testing.T, c *conv, step string) {
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

func state(t *testing.T, c *conv) map[string]string { return c.session(t).State }

// loaded returns the agent's loaded skills, least recently used first.
func loaded(t *testing.T, c *conv) []string {
	return loadstate.Of(state(t, c), c.Agent()).Skills()
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
		mode loadstate.Lifetime
		want [][]string // loaded after each step
	}{
		{loadstate.Once, [][]string{{}, {"alpha"}, {}, {}, {"beta"}}},
		{loadstate.Turn, [][]string{{}, {"alpha"}, {"alpha"}, {}, {"beta"}}},
		{loadstate.Session, [][]string{{}, {"alpha"}, {"alpha"}, {"alpha"}, {"alpha", "beta"}}},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			stores(t, func(t *testing.T, store session.Store) {
				c := open(t, store, conversation.Options{Lifetime: tt.mode}, snap)
				for i, st := range steps {
					do(t, c, st)
					got := loaded(t, c)
					if !slices.Equal(got, tt.want[i]) {
						t.Fatalf("after %q: loaded %v, want %v", st, got, tt.want[i])
					}
					_, hasDocs := state(t, c)[loadstate.DocsKey("main", "alpha")]
					if hasDocs != slices.Contains(tt.want[i], "alpha") {
						t.Fatalf("after %q: docs key present = %v, want it with the load", st, hasDocs)
					}
				}
			})
		})
	}
}

// Under the turn lifetime a user message starts the turn of the agent it
// is addressed to: it clears that agent's loads and no other's.
func TestTurnResetsTheAddressedAgent(t *testing.T) {
	a := open(t, session.NewMemoryStore(nil), conversation.Options{}, newSnap(t))
	b := a.as(t, "helper")
	do(t, a, `user go`)
	do(t, a, `skill_load {"skill":"alpha"}`)
	do(t, b, `user help`)
	do(t, b, `skill_load {"skill":"beta"}`)
	if got := loadstate.Of(state(t, a), "helper").Skills(); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("helper loaded %v", got)
	}
	if got := loaded(t, a); !slices.Equal(got, []string{"alpha"}) {
		t.Fatalf("main loaded %v, want its own [alpha]", got)
	}
	do(t, a, `user again`)
	if got := loaded(t, a); len(got) != 0 {
		t.Fatalf("main's loads survived its turn: %v", got)
	}
	if got := loadstate.Of(state(t, a), "helper").Skills(); !slices.Equal(got, []string{"beta"}) {
		t.Fatalf("main's turn cleared the helper's loads: %v", got)
	}
	do(t, b, `user more`)
	for k := range state(t, a) {
		if strings.HasPrefix(k, loadstate.Prefix) {
			t.Fatalf("key %s survived both turns", k)
		}
	}
}

func TestLRUWithDocSelectionTouch(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Options{Lifetime: loadstate.Session, MaxLoaded: 2}, newSnap(t))
		do(t, c, `user go`)
		do(t, c, `skill_load {"skill":"alpha"}`)
		do(t, c, `skill_load {"skill":"beta"}`)
		do(t, c, `skill_select_docs {"skill":"alpha","docs":["references/b.md"],"mode":"add"}`) // touch
		do(t, c, `skill_load {"skill":"gamma"}`)                                                // evicts beta
		if got := loaded(t, c); !slices.Equal(got, []string{"alpha", "gamma"}) {
			t.Fatalf("loaded %v, want [alpha gamma] (beta least recently used)", got)
		}
		if docs, _ := loadstate.Of(state(t, c), "main").Docs("alpha"); !slices.Equal(docs, []string{"references/b.md"}) {
			t.Fatalf("alpha docs %v", docs)
		}
		do(t, c, `skill_load {"skill":"beta"}`) // evicts alpha and its docs
		st := state(t, c)
		if _, ok := st[loadstate.DocsKey("main", "alpha")]; ok {
			t.Fatal("evicted skill kept its docs key")
		}
		if got := loaded(t, c); !slices.Equal(got, []string{"gamma", "beta"}) {
			t.Fatalf("loaded %v", got)
		}
	})
}

func TestDeclare(t *testing.T) {
	snap := newSnap(t)
	L := func(name string, docs ...string) loadstate.Declaration {
		return loadstate.Declaration{Skill: name, Docs: docs}
	}
	all := func(name string) loadstate.Declaration { return loadstate.Declaration{Skill: name, AllDocs: true} }
	both := loadstate.Declaration{Skill: "alpha", Docs: []string{"references/a.md"}, AllDocs: true}
	tests := []struct {
		name    string
		max     int
		reqs    []loadstate.Declaration
		err     error
		msg     string
		loaded  []string
		docsKey string // encoded alpha selection
	}{
		{name: "docs", reqs: []loadstate.Declaration{L("alpha", "./references/b.md", "references/a.md")}, loaded: []string{"alpha"}, docsKey: `["references/a.md","references/b.md"]`},
		{name: "include all", reqs: []loadstate.Declaration{all("alpha"), L("beta")}, loaded: []string{"alpha", "beta"}, docsKey: "*"},
		{name: "equal merge", reqs: []loadstate.Declaration{L("alpha", "references/a.md"), L("alpha", "references/a.md", "references/a.md")}, loaded: []string{"alpha"}, docsKey: `["references/a.md"]`},
		{name: "docs and include all", reqs: []loadstate.Declaration{both}, err: loadstate.ErrInvalidLoadRequest, msg: `declaration 1 (skill "alpha"): set Docs or AllDocs, not both`},
		{name: "conflict", reqs: []loadstate.Declaration{L("alpha"), L("alpha", "references/a.md")}, err: loadstate.ErrInvalidLoadRequest, msg: `declaration 2 (skill "alpha") conflicts with an earlier declaration`},
		{name: "SKILL.md", reqs: []loadstate.Declaration{L("alpha", "SKILL.md")}, err: loadstate.ErrInvalidLoadRequest, msg: "SKILL.md is always loaded and is not a document"},
		{name: "missing doc", reqs: []loadstate.Declaration{L("beta"), L("alpha", "nope.md")}, err: loadstate.ErrInvalidLoadRequest, msg: `document "nope.md" does not exist; valid documents: references/a.md, references/b.md`},
		{name: "invalid name", reqs: []loadstate.Declaration{L("Bad Name")}, err: loadstate.ErrInvalidLoadRequest, msg: "must be a valid skill name"},
		{name: "invisible", reqs: []loadstate.Declaration{L("alpha"), L("secret")}, err: loadstate.ErrSkillUnavailable, msg: `declaration 2 (skill "secret") is unknown or not visible`},
		{name: "unknown", reqs: []loadstate.Declaration{L("nosuch")}, err: loadstate.ErrSkillUnavailable},
		{name: "at cap", max: 2, reqs: []loadstate.Declaration{L("alpha"), L("beta"), L("alpha")}, loaded: []string{"alpha", "beta"}, docsKey: ""},
		{name: "over cap", max: 2, reqs: []loadstate.Declaration{L("alpha"), L("beta"), L("gamma")}, err: loadstate.ErrInvalidLoadRequest, msg: "3 skills declared, more than the cap of 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := open(t, session.NewMemoryStore(nil), conversation.Options{MaxLoaded: tt.max}, snap)
			do(t, c, `user go`)
			before, _ := c.store.Get(t.Context(), c.ID())
			ev, err := c.Declare(t.Context(), tt.reqs)
			after, _ := c.store.Get(t.Context(), c.ID())
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
			if got := after.State[loadstate.DocsKey("main", "alpha")]; got != tt.docsKey {
				t.Fatalf("alpha docs %q, want %q", got, tt.docsKey)
			}
			// The event records what it brought, for the next request.
			if len(ev.Loads) != len(tt.loaded) || !ev.Loads[0].Instructions || ev.Loads[0].Lifetime != "turn" {
				t.Fatalf("records %+v", ev.Loads)
			}
		})
	}
}

// UserDeclare records the user message and the declaration in one
// append, after the turn's reset, or nothing when a declaration fails.
func TestUserDeclare(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Options{MaxLoaded: 2}, newSnap(t))
		do(t, c, `user go`)
		do(t, c, `skill_load {"skill":"gamma"}`)
		before := c.session(t)
		for _, bad := range [][]loadstate.Declaration{
			{{Skill: "alpha"}, {Skill: "secret"}},
			{{Skill: "alpha", Docs: []string{"nope.md"}}},
			{{Skill: "alpha"}, {Skill: "beta"}, {Skill: "gamma"}},
		} {
			if _, _, err := c.UserDeclare(t.Context(), "next", bad); !errors.Is(err, loadstate.ErrInvalidLoadRequest) && !errors.Is(err, loadstate.ErrSkillUnavailable) {
				t.Fatalf("%v: err %v", bad, err)
			}
			if after := c.session(t); !reflect.DeepEqual(before, after) {
				t.Fatalf("%v: a failed declaration changed the session", bad)
			}
		}
		user, decl, err := c.UserDeclare(t.Context(), "next", []loadstate.Declaration{{Skill: "alpha", Docs: []string{"references/a.md"}}})
		if err != nil {
			t.Fatal(err)
		}
		if user.Kind != session.KindUser || decl.Kind != session.KindState || decl.Seq != user.Seq+1 || decl.Turn != user.Turn {
			t.Fatalf("recorded %+v then %+v; want the message and the declaration together", user, decl)
		}
		if len(decl.Loads) != 1 || decl.Loads[0].Skill != "alpha" || !slices.Equal(decl.Loads[0].Docs, []string{"references/a.md"}) {
			t.Fatalf("records %+v", decl.Loads)
		}
		// The turn's reset unloaded gamma before alpha was declared.
		if got := loaded(t, c); !slices.Equal(got, []string{"alpha"}) {
			t.Fatalf("loaded %v, want [alpha]", got)
		}
		if user, decl, err := c.UserDeclare(t.Context(), "plain", nil); err != nil || user.Text != "plain" || decl.Seq != 0 {
			t.Fatalf("without declarations: %+v %+v %v", user, decl, err)
		}
	})
}

// A tool error is recorded, with no state change and no load record.
func TestToolErrorRecorded(t *testing.T) {
	c := open(t, session.NewMemoryStore(nil), conversation.Options{}, newSnap(t))
	do(t, c, `user go`)
	before := c.session(t)
	res, err := c.Call(t.Context(), "skill_load", json.RawMessage(`{"skill":"nosuch"}`))
	if err != nil || !res.IsError {
		t.Fatalf("res %+v err %v", res, err)
	}
	s := c.session(t)
	last := s.Events[len(s.Events)-1]
	if !last.IsError || last.StateDelta != nil || last.Loads != nil || len(s.Events) != len(before.Events)+2 {
		t.Fatalf("error result recorded as %+v", last)
	}
}

func TestRequestNeverChangesSession(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Options{}, newSnap(t))
		do(t, c, `user go`)
		do(t, c, `skill_load {"skill":"alpha"}`)
		if _, err := c.Declare(t.Context(), []loadstate.Declaration{{Skill: "beta"}}); err != nil {
			t.Fatal(err)
		}
		before, _ := c.store.Get(t.Context(), c.ID())
		for range 3 {
			if _, err := c.Request(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		after, _ := c.store.Get(t.Context(), c.ID())
		if !reflect.DeepEqual(before, after) {
			t.Fatal("Request changed the session")
		}
	})
}

func TestOpenOptions(t *testing.T) {
	store := session.NewMemoryStore(nil)
	s, _ := store.Create(t.Context(), "", nil)
	for _, tc := range []struct {
		opts conversation.Options
		want string
	}{
		{conversation.Options{Lifetime: 7}, "Options.Lifetime 7 is not one of"},
		{conversation.Options{Placement: 5}, "Options.Placement 5 is not one of"},
		{conversation.Options{MaxLoaded: -1}, "Options.MaxLoaded is -1"},
		{conversation.Options{MaxParallel: -2}, "Options.MaxParallel is -2"},
		{conversation.Options{Catalog: assembly.CatalogOptions{Format: 3}}, "Options.Catalog.Format 3"},
		{conversation.Options{Catalog: assembly.CatalogOptions{DescriptionMaxLength: 2}}, "Options.Catalog.DescriptionMaxLength"},
	} {
		if _, err := conversation.Open(t.Context(), store, s.ID, "main", &tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
	if _, err := conversation.Open(t.Context(), store, s.ID, "", nil); err == nil || !strings.Contains(err.Error(), "agent name is empty") {
		t.Errorf("Open with no agent: %v", err)
	}
	if _, err := conversation.Open(t.Context(), store, "nosuch", "main", nil); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Open of a missing session: %v", err)
	}
	if _, err := conversation.Open(t.Context(), nil, s.ID, "main", nil); err == nil {
		t.Error("Open with no store succeeded")
	}
	// A tool set that cannot be offered fails the request that asks for it.
	bad := tools.Static{tools.Skill(), tools.Skill()}
	c, err := conversation.Open(t.Context(), store, s.ID, "main", &conversation.Options{Tools: bad})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Request(t.Context()); err == nil || !strings.Contains(err.Error(), `two tools are named "skill"`) {
		t.Errorf("Request with two tools of one name: %v", err)
	}
}

// TestConcurrentCalls records tool calls on one session from many
// goroutines: every call gets its own ID, each assistant message is
// followed by its own result, and no load is lost.
func TestConcurrentCalls(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Options{Lifetime: loadstate.Session}, newSnap(t))
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
		s, err := store.Get(t.Context(), c.ID())
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
		c := open(t, store, conversation.Options{Lifetime: loadstate.Once}, newSnap(t))
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
		c := open(t, store, conversation.Options{}, snap)
		if _, err := c.User(t.Context(), "/release please, then /modelonly and /nosuch, see /usr/bin; /release again"); err != nil {
			t.Fatal(err)
		}
		s, err := store.Get(t.Context(), c.ID())
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
		c := open(t, store, conversation.Options{}, before)
		do(t, c, "user go")
		first, err := store.Get(t.Context(), c.ID())
		if err != nil {
			t.Fatal(err)
		}
		opts := c.opts
		opts.Skills = func(context.Context) *registry.Snapshot { return after }
		c2, err := conversation.Open(t.Context(), store, c.ID(), c.Agent(), &opts)
		if err != nil {
			t.Fatal(err)
		}
		do(t, &conv{c2, store, opts}, `skill {"name":"alpha"}`)
		s, err := store.Get(t.Context(), c.ID())
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
