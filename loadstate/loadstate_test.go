package loadstate_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
)

func TestParseLifetime(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    loadstate.Lifetime
		wantErr string
	}{
		{"once", loadstate.Once, ""},
		{"turn", loadstate.Turn, ""},
		{"session", loadstate.Session, ""},
		{"", 0, `load lifetime "" is not one of once, turn, session`},
		{"Turn", 0, `load lifetime "Turn" is not one of once, turn, session`},
		{"forever", 0, `load lifetime "forever" is not one of once, turn, session`},
	} {
		got, err := loadstate.ParseLifetime(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ParseLifetime(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.in {
			t.Errorf("ParseLifetime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		var back loadstate.Lifetime
		b, err := got.MarshalText()
		if err != nil || back.UnmarshalText(b) != nil || back != got {
			t.Errorf("text round trip of %v: %q, %v -> %v", got, b, err, back)
		}
	}
	var zero loadstate.Lifetime
	if zero != loadstate.Turn {
		t.Errorf("the zero Lifetime is %v, want turn", zero)
	}
	if _, err := loadstate.Lifetime(9).MarshalText(); err == nil {
		t.Error("MarshalText of an undefined lifetime succeeded")
	}
	if got := loadstate.LifetimeOf(session.Load{Skill: "x"}); got != loadstate.Turn {
		t.Errorf("LifetimeOf a record without lifetime = %v, want turn", got)
	}
}

// st builds a state map from key/value pairs.
func st(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// apply returns a copy of state with delta applied.
func apply(state map[string]string, delta map[string]*string) map[string]string {
	out := map[string]string{}
	for k, v := range state {
		out[k] = v
	}
	session.ApplyDelta(out, delta)
	return out
}

func load(name string) tools.Effect {
	return tools.Effect{Kind: tools.EffectLoad, Skill: name, DocsMode: tools.DocsKeep}
}

func sel(name string, mode tools.DocsMode, all bool, docs ...string) tools.Effect {
	return tools.Effect{Kind: tools.EffectSelectDocs, Skill: name, DocsMode: mode, AllDocs: all, Docs: docs}
}

func TestApply(t *testing.T) {
	const a = "main"
	L := func(n string) string { return loadstate.LoadedKey(a, n) }
	D := func(n string) string { return loadstate.DocsKey(a, n) }
	O := loadstate.LoadedOrderKey(a)
	for _, tc := range []struct {
		name    string
		state   map[string]string
		effects []tools.Effect
		max     int
		want    map[string]string // the state after the delta
	}{
		{
			name:    "load keeps selection",
			state:   st(L("pdf"), "1", D("pdf"), `["a.md"]`, O, `["pdf"]`),
			effects: []tools.Effect{load("pdf")},
			want:    st(L("pdf"), "1", D("pdf"), `["a.md"]`, O, `["pdf"]`),
		},
		{
			name:    "load into empty state",
			state:   st(),
			effects: []tools.Effect{load("pdf")},
			want:    st(L("pdf"), "1", O, `["pdf"]`),
		},
		{
			name:    "load replace docs sorted unique",
			state:   st(L("pdf"), "1", D("pdf"), `["a.md"]`, O, `["pdf"]`),
			effects: []tools.Effect{{Kind: tools.EffectLoad, Skill: "pdf", DocsMode: tools.DocsReplace, Docs: []string{"c.md", "b.md", "c.md"}}},
			want:    st(L("pdf"), "1", D("pdf"), `["b.md","c.md"]`, O, `["pdf"]`),
		},
		{
			name:    "load all docs",
			state:   st(L("pdf"), "1", D("pdf"), `["a.md"]`, O, `["pdf"]`),
			effects: []tools.Effect{{Kind: tools.EffectLoad, Skill: "pdf", DocsMode: tools.DocsReplace, AllDocs: true}},
			want:    st(L("pdf"), "1", D("pdf"), "*", O, `["pdf"]`),
		},
		{
			name:    "select add merges",
			state:   st(L("pdf"), "1", D("pdf"), `["b.md"]`, O, `["pdf"]`),
			effects: []tools.Effect{sel("pdf", tools.DocsAdd, false, "c.md", "a.md", "b.md")},
			want:    st(L("pdf"), "1", D("pdf"), `["a.md","b.md","c.md"]`, O, `["pdf"]`),
		},
		{
			name:    "select add onto nothing",
			state:   st(L("pdf"), "1", O, `["pdf"]`),
			effects: []tools.Effect{sel("pdf", tools.DocsAdd, false, "a.md")},
			want:    st(L("pdf"), "1", D("pdf"), `["a.md"]`, O, `["pdf"]`),
		},
		{
			name:    "select add onto star stays star",
			state:   st(L("pdf"), "1", D("pdf"), "*", O, `["pdf"]`),
			effects: []tools.Effect{sel("pdf", tools.DocsAdd, false, "a.md")},
			want:    st(L("pdf"), "1", D("pdf"), "*", O, `["pdf"]`),
		},
		{
			name:    "select add all",
			state:   st(L("pdf"), "1", D("pdf"), `["a.md"]`, O, `["pdf"]`),
			effects: []tools.Effect{sel("pdf", tools.DocsAdd, true)},
			want:    st(L("pdf"), "1", D("pdf"), "*", O, `["pdf"]`),
		},
		{
			name:    "select replace",
			state:   st(L("pdf"), "1", D("pdf"), "*", O, `["pdf"]`),
			effects: []tools.Effect{sel("pdf", tools.DocsReplace, false, "z.md")},
			want:    st(L("pdf"), "1", D("pdf"), `["z.md"]`, O, `["pdf"]`),
		},
		{
			name:    "select replace with nothing clears",
			state:   st(L("pdf"), "1", D("pdf"), "*", O, `["pdf"]`),
			effects: []tools.Effect{sel("pdf", tools.DocsReplace, false)},
			want:    st(L("pdf"), "1", O, `["pdf"]`),
		},
		{
			name:    "select clear",
			state:   st(L("pdf"), "1", D("pdf"), `["a.md"]`, O, `["pdf"]`),
			effects: []tools.Effect{sel("pdf", tools.DocsClear, false)},
			want:    st(L("pdf"), "1", O, `["pdf"]`),
		},
		{
			name:    "touch moves to the recent end",
			state:   st(L("a"), "1", L("b"), "1", L("c"), "1", O, `["a","b","c"]`),
			effects: []tools.Effect{load("a")},
			want:    st(L("a"), "1", L("b"), "1", L("c"), "1", O, `["b","c","a"]`),
		},
		{
			name:    "loaded skills missing from the order come first, sorted",
			state:   st(L("z"), "1", L("y"), "1", L("a"), "1", O, `["a"]`),
			effects: []tools.Effect{load("new")},
			want:    st(L("z"), "1", L("y"), "1", L("a"), "1", L("new"), "1", O, `["a","y","z","new"]`),
		},
		{
			name:    "LRU evicts the oldest with its docs",
			state:   st(L("a"), "1", D("a"), "*", L("b"), "1", O, `["a","b"]`),
			effects: []tools.Effect{load("c")},
			max:     2,
			want:    st(L("b"), "1", L("c"), "1", O, `["b","c"]`),
		},
		{
			name:    "LRU at the cap evicts nothing",
			state:   st(L("a"), "1", O, `["a"]`),
			effects: []tools.Effect{load("b")},
			max:     2,
			want:    st(L("a"), "1", L("b"), "1", O, `["a","b"]`),
		},
		{
			name:    "doc selection counts as a touch",
			state:   st(L("a"), "1", L("b"), "1", O, `["a","b"]`),
			effects: []tools.Effect{sel("a", tools.DocsAdd, false, "x.md"), load("c")},
			max:     2,
			want:    st(L("a"), "1", D("a"), `["x.md"]`, L("c"), "1", O, `["a","c"]`),
		},
		{
			name:    "cap of one keeps the last",
			state:   st(),
			effects: []tools.Effect{load("a"), load("b"), load("c")},
			max:     1,
			want:    st(L("c"), "1", O, `["c"]`),
		},
		{
			name: "legacy keys migrate on touch",
			state: st("temp:skill:loaded:old", "1", "temp:skill:docs:old", `["r.md"]`,
				"temp:skill:loaded:other", "1"),
			effects: []tools.Effect{load("new")},
			want: st(L("old"), "1", D("old"), `["r.md"]`, L("other"), "1", L("new"), "1",
				O, `["old","other","new"]`),
		},
		{
			name:    "legacy loads are the oldest",
			state:   st("temp:skill:loaded:old", "1", L("b"), "1", L("a"), "1", O, `["b"]`),
			effects: []tools.Effect{load("c")},
			want:    st(L("old"), "1", L("b"), "1", L("a"), "1", L("c"), "1", O, `["old","b","a","c"]`),
		},
		{
			name:    "legacy key evicted is deleted",
			state:   st("temp:skill:loaded:old", "1", L("b"), "1", O, `["b"]`),
			effects: []tools.Effect{load("c")},
			max:     2,
			want:    st(L("b"), "1", L("c"), "1", O, `["b","c"]`),
		},
		{
			name:    "other agents untouched",
			state:   st(loadstate.LoadedKey("sub", "a"), "1", loadstate.LoadedOrderKey("sub"), `["a"]`),
			effects: []tools.Effect{load("b")},
			max:     1,
			want:    st(loadstate.LoadedKey("sub", "a"), "1", loadstate.LoadedOrderKey("sub"), `["a"]`, L("b"), "1", O, `["b"]`),
		},
		{
			name:    "no effects writes nothing new",
			state:   st(L("a"), "1", O, `["a"]`),
			effects: nil,
			want:    st(L("a"), "1", O, `["a"]`),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := apply(tc.state, nil)
			d, err := loadstate.Apply(tc.state, a, tc.effects, tc.max)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, tc.state); diff != "" {
				t.Fatalf("EffectsDelta changed its input (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, apply(tc.state, d)); diff != "" {
				t.Errorf("state after delta (-want +got):\n%s", diff)
			}
			for k, v := range d {
				if old, ok := tc.state[k]; v != nil && ok && old == *v {
					t.Errorf("delta rewrites %s with its current value %q", k, old)
				}
				if _, ok := tc.state[k]; v == nil && !ok {
					t.Errorf("delta deletes %s, which is absent", k)
				}
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		effects []tools.Effect
		max     int
		want    string
	}{
		{"negative cap", []tools.Effect{load("a")}, -1, "max loaded skills is -1; use 0 for no cap or a positive count"},
		{"invalid docs mode", []tools.Effect{load("a"), sel("b", "merge", false)}, 0, `effect 2 on skill "b" has unknown docs mode "merge"`},
		{"no skill", []tools.Effect{{Kind: tools.EffectLoad}}, 0, `effect 1: skill name "" does not follow the skill name rule`},
		{"another agent's key", []tools.Effect{load("helper/csv-stats")}, 0, `effect 1: skill name "helper/csv-stats" does not follow`},
		{"blank name", []tools.Effect{load(" a")}, 0, `skill name " a" does not follow`},
		{"unknown kind", []tools.Effect{{Kind: "explode", Skill: "a"}}, 0, `effect 1 on skill "a": kind "explode" is not "load" or "select_docs"`},
		{"document outside the skill", []tools.Effect{sel("a", tools.DocsAdd, false, "../b/x.md")}, 0, `document "../b/x.md" is not a clean path`},
		{"document not clean", []tools.Effect{sel("a", tools.DocsReplace, false, "./x.md")}, 0, `document "./x.md" is not a clean path`},
		{"SKILL.md as a document", []tools.Effect{sel("a", tools.DocsReplace, false, "SKILL.md")}, 0, `document "SKILL.md" is not`},
		{"documents with keep", []tools.Effect{{Kind: tools.EffectLoad, Skill: "a", DocsMode: tools.DocsKeep, Docs: []string{"x.md"}}}, 0, `documents mode "keep" takes no documents`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := loadstate.Apply(st(), "main", tc.effects, tc.max)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
			if d != nil {
				t.Errorf("delta %v returned with an error", d)
			}
			if err := loadstate.CheckEffects(tc.effects); tc.max >= 0 && err == nil {
				t.Error("CheckEffects accepts what Apply refuses")
			}
		})
	}
}

func TestReset(t *testing.T) {
	state := st(
		loadstate.LoadedKey("main", "a"), "1",
		loadstate.DocsKey("main", "a"), "*",
		loadstate.LoadedOrderKey("main"), `["a"]`,
		loadstate.LoadedKey("main/sub", "b"), "1", // agent "main/sub", not main's
		loadstate.LoadedOrderKey("main/sub"), `["b"]`,
		loadstate.LoadedKey("sub", "c"), "1",
		loadstate.DocsKey("sub", "c"), `["x.md"]`,
		loadstate.LoadedOrderKey("sub"), `["c"]`,
		"temp:skill:loaded:old", "1",
		"skillkit:catalog_digest:main", "abc",
		"user:pref", "x",
	)
	for _, tc := range []struct {
		agent string
		want  map[string]string
	}{
		{"main", st(
			loadstate.LoadedKey("main/sub", "b"), "1",
			loadstate.LoadedOrderKey("main/sub"), `["b"]`,
			loadstate.LoadedKey("sub", "c"), "1",
			loadstate.DocsKey("sub", "c"), `["x.md"]`,
			loadstate.LoadedOrderKey("sub"), `["c"]`,
			"skillkit:catalog_digest:main", "abc",
			"user:pref", "x",
		)},
		{"sub", st(
			loadstate.LoadedKey("main", "a"), "1",
			loadstate.DocsKey("main", "a"), "*",
			loadstate.LoadedOrderKey("main"), `["a"]`,
			loadstate.LoadedKey("main/sub", "b"), "1",
			loadstate.LoadedOrderKey("main/sub"), `["b"]`,
			"skillkit:catalog_digest:main", "abc",
			"user:pref", "x",
		)},
	} {
		t.Run("agent="+tc.agent, func(t *testing.T) {
			d := loadstate.Reset(state, tc.agent)
			if diff := cmp.Diff(tc.want, apply(state, d)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for k, v := range d {
				if v != nil {
					t.Errorf("reset sets %s = %q; it only deletes", k, *v)
				}
			}
		})
	}
	// Keys of the single-agent layout count as every agent's: any reset
	// removes them, and nothing else of another agent.
	for _, agent := range []string{"", "nobody"} {
		got := apply(state, loadstate.Reset(state, agent))
		want := apply(state, map[string]*string{"temp:skill:loaded:old": nil})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Reset(%q) (-want +got):\n%s", agent, diff)
		}
	}
}

func TestView(t *testing.T) {
	state := st(
		loadstate.LoadedKey("main", "b"), "1",
		loadstate.LoadedKey("main", "a"), "1",
		loadstate.LoadedKey("main", "c"), "1",
		loadstate.LoadedKey("main", "off"), "",
		loadstate.DocsKey("main", "a"), `["x.md","y.md"]`,
		loadstate.DocsKey("main", "c"), "*",
		loadstate.DocsKey("main", "b"), "not json",
		loadstate.LoadedOrderKey("main"), `["c","gone","b","c"]`,
		"temp:skill:loaded:legacy", "1",
		"temp:skill:docs:legacy", `["l.md"]`,
		"temp:skill:loaded:bad/name", "1",
		loadstate.LoadedKey("sub", "z"), "1",
	)
	a := loadstate.Of(state, "main")
	if diff := cmp.Diff([]string{"legacy", "c", "b", "a"}, a.Skills()); diff != "" {
		t.Errorf("Skills (-want +got):\n%s", diff)
	}
	for name, want := range map[string]bool{"a": true, "legacy": true, "off": false, "z": false, "gone": false, "bad/name": false} {
		if got := a.Loaded(name); got != want {
			t.Errorf("Loaded(%q) = %v, want %v", name, got, want)
		}
	}
	for _, tc := range []struct {
		name    string
		docs    []string
		all     bool
		comment string
	}{
		{"a", []string{"x.md", "y.md"}, false, "per-agent list"},
		{"c", nil, true, "per-agent star"},
		{"b", nil, false, "undecodable value"},
		{"legacy", []string{"l.md"}, false, "legacy key"},
		{"none", nil, false, "no key"},
	} {
		docs, all := a.Docs(tc.name)
		if !cmp.Equal(docs, tc.docs) || all != tc.all {
			t.Errorf("%s: Docs(%q) = %v, %v; want %v, %v", tc.comment, tc.name, docs, all, tc.docs, tc.all)
		}
	}
	sub := loadstate.Of(state, "sub")
	if diff := cmp.Diff([]string{"legacy", "z"}, sub.Skills()); diff != "" {
		t.Errorf("sub Skills (-want +got):\n%s", diff)
	}
}

// loadFixture is a registry over real skill folders:
//
//	alpha   documents references/a.md, references/b.md, notes.txt
//	beta    no documents
//	hidden  filtered out by the request's view
//	gone    SKILL.md deleted after discovery
func loadFixture(t *testing.T) *registry.Snapshot {
	t.Helper()
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	md := func(name string) string {
		return "---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n# " + name + "\n"
	}
	write("alpha/SKILL.md", md("alpha"))
	write("alpha/references/a.md", "A\n")
	write("alpha/references/b.md", "B\n")
	write("alpha/notes.txt", "N\n")
	write("beta/SKILL.md", md("beta"))
	write("hidden/SKILL.md", md("hidden"))
	write("gone/SKILL.md", md("gone"))
	src, err := source.Dir(root, root, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reg, err := registry.New(ctx, []source.Source{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "gone", skill.FileName)); err != nil {
		t.Fatal(err)
	}
	return reg.Snapshot().View(ctx, func(_ context.Context, s skill.Summary) bool { return s.Name != "hidden" })
}

func TestDeclare(t *testing.T) {
	ctx := context.Background()
	snap := loadFixture(t)
	keep := func(n string) tools.Effect { return load(n) }
	repl := func(n string, all bool, docs ...string) tools.Effect {
		return tools.Effect{Kind: tools.EffectLoad, Skill: n, DocsMode: tools.DocsReplace, AllDocs: all, Docs: docs}
	}
	for _, tc := range []struct {
		name    string
		snap    *registry.Snapshot
		decls   []loadstate.Declaration
		max     int
		want    []tools.Effect
		wantIs  error
		wantErr string
	}{
		{name: "none", decls: nil, want: []tools.Effect{}},
		{name: "plain load", decls: []loadstate.Declaration{{Skill: "beta"}}, want: []tools.Effect{keep("beta")}},
		{name: "docs normalised and sorted",
			decls: []loadstate.Declaration{{Skill: "alpha", Docs: []string{"./references/b.md", "references/a.md", "references/../references/a.md"}}},
			want:  []tools.Effect{repl("alpha", false, "references/a.md", "references/b.md")}},
		{name: "include all lists the documents", decls: []loadstate.Declaration{{Skill: "alpha", AllDocs: true}}, want: []tools.Effect{repl("alpha", true, "notes.txt", "references/a.md", "references/b.md")}},
		{name: "equal declarations merge, order kept",
			decls: []loadstate.Declaration{{Skill: "beta"}, {Skill: "alpha", Docs: []string{"notes.txt"}}, {Skill: "beta"}, {Skill: "alpha", Docs: []string{"./notes.txt", "notes.txt"}}},
			max:   2,
			want:  []tools.Effect{keep("beta"), repl("alpha", false, "notes.txt")}},
		{name: "invalid name", decls: []loadstate.Declaration{{Skill: "beta"}, {Skill: "Bad--Name"}}, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `invalid skill load request: declaration 2 (skill "Bad--Name"): the name must be a valid skill name`},
		{name: "docs and include-all", decls: []loadstate.Declaration{{Skill: "alpha", Docs: []string{"notes.txt"}, AllDocs: true}}, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `invalid skill load request: declaration 1 (skill "alpha"): set Docs or AllDocs, not both`},
		{name: "SKILL.md as a doc", decls: []loadstate.Declaration{{Skill: "alpha", Docs: []string{"./SKILL.md"}}}, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `invalid skill load request: declaration 1 (skill "alpha"): SKILL.md is always loaded and is not a document; leave it out of Docs`},
		{name: "conflicting docs", decls: []loadstate.Declaration{{Skill: "alpha", Docs: []string{"notes.txt"}}, {Skill: "alpha"}}, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `invalid skill load request: declaration 2 (skill "alpha") conflicts with an earlier declaration of the same skill (different documents); declare each skill once or identically`},
		{name: "conflicting include-all", decls: []loadstate.Declaration{{Skill: "alpha"}, {Skill: "alpha", AllDocs: true}}, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `conflicts with an earlier declaration`},
		{name: "unknown doc lists valid ones", decls: []loadstate.Declaration{{Skill: "alpha", Docs: []string{"references/c.md"}}}, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `invalid skill load request: declaration 1 (skill "alpha"): document "references/c.md" does not exist; valid documents: notes.txt, references/a.md, references/b.md`},
		{name: "doc escaping the skill", decls: []loadstate.Declaration{{Skill: "alpha", Docs: []string{"../beta/SKILL.md"}}}, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `Docs: invalid path "../beta/SKILL.md": it leads outside the skill folder`},
		{name: "doc of a skill without docs", decls: []loadstate.Declaration{{Skill: "beta", Docs: []string{"x.md"}}}, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `invalid skill load request: declaration 1 (skill "beta"): document "x.md" does not exist; the skill has no documents, leave Docs empty`},
		{name: "invisible skill", decls: []loadstate.Declaration{{Skill: "beta"}, {Skill: "hidden"}}, wantIs: loadstate.ErrSkillUnavailable,
			wantErr: `skill unavailable: declaration 2 (skill "hidden") is unknown or not visible to this request`},
		{name: "unknown skill", decls: []loadstate.Declaration{{Skill: "nope"}}, wantIs: loadstate.ErrSkillUnavailable,
			wantErr: `skill unavailable: declaration 1 (skill "nope") is unknown or not visible to this request`},
		{name: "unreadable body", decls: []loadstate.Declaration{{Skill: "gone"}}, wantIs: loadstate.ErrSkillUnavailable,
			wantErr: `skill unavailable: declaration 1 (skill "gone"): reading `},
		{name: "no snapshot", snap: nil, decls: []loadstate.Declaration{{Skill: "beta"}}, wantIs: loadstate.ErrSkillUnavailable,
			wantErr: `skill unavailable: declaration 1 (skill "beta"): no skills are available`},
		{name: "merged count at the cap", decls: []loadstate.Declaration{{Skill: "alpha"}, {Skill: "beta"}, {Skill: "alpha"}}, max: 2,
			want: []tools.Effect{keep("alpha"), keep("beta")}},
		{name: "merged count over the cap", decls: []loadstate.Declaration{{Skill: "alpha"}, {Skill: "beta"}}, max: 1, wantIs: loadstate.ErrInvalidLoadRequest,
			wantErr: `invalid skill load request: 2 skills declared, more than the cap of 1 loaded skills`},
		{name: "negative cap", decls: []loadstate.Declaration{{Skill: "alpha"}}, max: -1,
			wantErr: `max loaded skills is -1; use 0 for no cap or a positive count`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap
			if tc.name == "no snapshot" {
				s = tc.snap
			}
			got, err := loadstate.Declare(ctx, s, tc.decls, tc.max)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("errors.Is(%v, %v) is false", err, tc.wantIs)
				}
				for _, other := range []error{loadstate.ErrInvalidLoadRequest, loadstate.ErrSkillUnavailable} {
					if other != tc.wantIs && errors.Is(err, other) {
						t.Errorf("error %v also wraps %v", err, other)
					}
				}
				if got != nil {
					t.Errorf("effects %v returned with an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("effects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeclareThenApply checks that resolved declarations applied
// with the same cap give the state the declarations describe.
func TestDeclareThenApply(t *testing.T) {
	snap := loadFixture(t)
	effects, err := loadstate.Declare(context.Background(), snap,
		[]loadstate.Declaration{{Skill: "alpha", Docs: []string{"references/b.md"}}, {Skill: "beta"}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	state := st(loadstate.DocsKey("main", "beta"), `["stale.md"]`)
	d, err := loadstate.Apply(state, "main", effects, 2)
	if err != nil {
		t.Fatal(err)
	}
	got := apply(state, d)
	a := loadstate.Of(got, "main")
	if diff := cmp.Diff([]string{"alpha", "beta"}, a.Skills()); diff != "" {
		t.Errorf("Skills (-want +got):\n%s", diff)
	}
	if docs, all := a.Docs("alpha"); all || !cmp.Equal(docs, []string{"references/b.md"}) {
		t.Errorf("alpha docs = %v, %v", docs, all)
	}
	if docs, all := a.Docs("beta"); all || docs != nil {
		t.Errorf("beta keeps the stale selection %v, %v", docs, all)
	}
}

// ExampleApply shows the LRU cap: selecting documents touches a
// skill, so the other one is evicted when a third is loaded.
func ExampleApply() {
	state := map[string]string{}
	record := func(effects ...tools.Effect) {
		d, err := loadstate.Apply(state, "main", effects, 2)
		if err != nil {
			panic(err)
		}
		session.ApplyDelta(state, d)
	}
	record(tools.Effect{Kind: tools.EffectLoad, Skill: "pdf", DocsMode: tools.DocsKeep})
	record(tools.Effect{Kind: tools.EffectLoad, Skill: "xlsx", DocsMode: tools.DocsKeep})
	record(tools.Effect{Kind: tools.EffectSelectDocs, Skill: "pdf", DocsMode: tools.DocsAdd, Docs: []string{"forms.md"}})
	record(tools.Effect{Kind: tools.EffectLoad, Skill: "docx", DocsMode: tools.DocsKeep})
	a := loadstate.Of(state, "main")
	docs, _ := a.Docs("pdf")
	fmt.Println(a.Skills(), docs, a.Loaded("xlsx"))
	// Output: [pdf docx] [forms.md] false
}

func TestRecords(t *testing.T) {
	loadedPDF := st(loadstate.LoadedKey("main", "pdf"), "1")
	for _, tc := range []struct {
		name    string
		state   map[string]string
		effects []tools.Effect
		l       loadstate.Lifetime
		want    []session.Load
	}{
		{"load brings the instructions", st(), []tools.Effect{load("pdf")}, loadstate.Turn,
			[]session.Load{{Skill: "pdf", Instructions: true, Lifetime: "turn"}}},
		{"load again still brings them", loadedPDF, []tools.Effect{load("pdf")}, loadstate.Session,
			[]session.Load{{Skill: "pdf", Instructions: true, Lifetime: "session"}}},
		{"the skill tool's text holds them", st(), []tools.Effect{{Kind: tools.EffectLoad, Skill: "pdf", DocsMode: tools.DocsKeep, Inline: true}}, loadstate.Once,
			[]session.Load{{Skill: "pdf", Instructions: true, Inline: true, Lifetime: "once"}}},
		{"load with documents, sorted once each", st(), []tools.Effect{{Kind: tools.EffectLoad, Skill: "pdf", DocsMode: tools.DocsReplace, Docs: []string{"b.md", "a.md", "b.md"}}}, loadstate.Turn,
			[]session.Load{{Skill: "pdf", Instructions: true, Docs: []string{"a.md", "b.md"}, Lifetime: "turn"}}},
		{"selection on a loaded skill brings only documents", loadedPDF, []tools.Effect{sel("pdf", tools.DocsAdd, false, "a.md")}, loadstate.Turn,
			[]session.Load{{Skill: "pdf", Docs: []string{"a.md"}, Lifetime: "turn"}}},
		{"selection on a skill not loaded loads it", st(), []tools.Effect{sel("pdf", tools.DocsReplace, false, "a.md")}, loadstate.Turn,
			[]session.Load{{Skill: "pdf", Instructions: true, Docs: []string{"a.md"}, Lifetime: "turn"}}},
		{"all documents are listed as selected", loadedPDF, []tools.Effect{sel("pdf", tools.DocsReplace, true, "a.md", "b.md")}, loadstate.Turn,
			[]session.Load{{Skill: "pdf", Docs: []string{"a.md", "b.md"}, Lifetime: "turn"}}},
		{"clearing shows nothing", loadedPDF, []tools.Effect{sel("pdf", tools.DocsClear, false)}, loadstate.Turn, nil},
		{"a second effect on the same skill sees the first", st(), []tools.Effect{sel("pdf", tools.DocsReplace, false, "a.md"), sel("pdf", tools.DocsAdd, false, "b.md")}, loadstate.Turn,
			[]session.Load{{Skill: "pdf", Instructions: true, Docs: []string{"a.md"}, Lifetime: "turn"}, {Skill: "pdf", Docs: []string{"b.md"}, Lifetime: "turn"}}},
		{"another agent's load does not count", st(loadstate.LoadedKey("sub", "pdf"), "1"), []tools.Effect{sel("pdf", tools.DocsAdd, false, "a.md")}, loadstate.Turn,
			[]session.Load{{Skill: "pdf", Instructions: true, Docs: []string{"a.md"}, Lifetime: "turn"}}},
		{"no effects", st(), nil, loadstate.Turn, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := loadstate.Records(tc.state, "main", tc.effects, tc.l)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
