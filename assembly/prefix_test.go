package assembly_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// isPrefix reports whether prev is a byte-exact prefix of next: prev's
// messages, JSON-encoded one by one, equal the first len(prev.Messages)
// messages of next, and the tools encode identically. It returns the
// index of the first differing message (-1 for the tools) otherwise.
func isPrefix(t testing.TB, prev, next *assembly.Request) (bool, int) {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if enc(prev.Tools) != enc(next.Tools) {
		return false, -1
	}
	if len(prev.Messages) > len(next.Messages) {
		return false, len(next.Messages)
	}
	for i, m := range prev.Messages {
		if enc(m) != enc(next.Messages[i]) {
			return false, i
		}
	}
	return true, 0
}

var episodeSkills = []string{"alpha", "beta", "gamma", "delta"}

// episodeDocs are the documents of each skill, plus one that does not
// exist (an invalid call).
var episodeDocs = map[string][]string{
	"alpha": {"references/a.md", "references/b.md", "notes.txt", "missing.md"},
	"beta":  {"guide.md", "missing.md"},
	"gamma": {"missing.md"},
	"delta": {"references/extra.md", "missing.md"},
}

// randomCall returns one random tool call: mostly valid, sometimes with an
// unknown skill, an unknown document, docs together with
// include_all_docs, a misspelt argument or an unknown mode.
func randomCall(r *rand.Rand) (string, string) {
	name := episodeSkills[r.IntN(len(episodeSkills))]
	if r.IntN(12) == 0 {
		name = "no-such-skill"
	}
	docs := func() []string {
		all := episodeDocs[name]
		var out []string
		for _, d := range all {
			if d == "missing.md" && r.IntN(6) != 0 {
				continue
			}
			if r.IntN(2) == 0 {
				out = append(out, d)
			}
		}
		return out
	}
	enc := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	switch r.IntN(10) {
	case 0, 1:
		return "skill", enc(map[string]any{"name": name})
	case 2, 3, 4:
		args := map[string]any{"skill": name}
		switch r.IntN(4) {
		case 0:
			args["docs"] = docs()
		case 1:
			args["include_all_docs"] = true
		case 2:
			if r.IntN(4) == 0 {
				args["docs"], args["include_all_docs"] = docs(), true
			}
		}
		return "skill_load", enc(args)
	case 5, 6, 7:
		modes := []string{"add", "replace", "clear", "", "bogus"}
		args := map[string]any{"skill": name, "mode": modes[r.IntN(len(modes))]}
		if args["mode"] != "clear" || r.IntN(5) == 0 {
			if r.IntN(5) == 0 {
				args["include_all_docs"] = true
			} else {
				args["docs"] = docs()
			}
		}
		return "skill_select_docs", enc(args)
	case 8:
		return "skill_list_docs", enc(map[string]any{"skill": name})
	default:
		if r.IntN(2) == 0 {
			return "skill_load", `{"skil":"` + name + `"}`
		}
		return "skill_read", enc(map[string]any{"skill": name, "path": "SKILL.md"})
	}
}

// toolNaming is how an episode's agent names its tools: prefix goes before
// every skill tool's name (as an MCP client prefixes a server's tools),
// and playbook adds a user tool that loads skills in its own way.
type toolNaming struct {
	prefix   string
	playbook bool
}

// tools returns the tool set of the naming.
func (n toolNaming) set() tools.Set {
	var ts []tools.Tool
	for _, t := range tools.Defaults() {
		t.Name = n.prefix + t.Name
		ts = append(ts, t)
	}
	if n.playbook {
		ts = append(ts, playbook())
	}
	return tools.Static(ts)
}

// playbook is a user tool, not one of the skill tools, that loads a skill
// with all its documents: its records must place the content like
// skill_load's.
func playbook() tools.Tool {
	type args struct {
		Skill string `json:"skill"`
	}
	return tools.New("open_playbook", "Open a playbook.", func(ctx context.Context, c tools.Call, a args) (tools.Result, error) {
		if _, ok := c.Skills.Lookup(a.Skill); !ok {
			return tools.Errorf("Error: no playbook %q", a.Skill), nil
		}
		docs, err := c.Skills.Docs(ctx, a.Skill)
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Text: "opened " + a.Skill, Effects: []tools.Effect{{Kind: tools.EffectLoad, Skill: a.Skill, DocsMode: tools.DocsReplace, AllDocs: true, Docs: docs}}}, nil
	})
}

// runEpisode drives one random episode and calls check with every pair of
// consecutive requests of the same turn.
func runEpisode(t *testing.T, seed uint64, cfg conversation.Options, naming toolNaming, snap *registry.Snapshot, check func(step int, what string, prev, next *assembly.Request)) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	if naming != (toolNaming{}) {
		cfg.Tools = naming.set()
	}
	c := newConv(t, session.NewMemoryStore(nil), cfg, "main", snap)
	user(t, c, "start")
	prev, prevTurn := request(t, c), getSession(t, c).Turn()
	for step := range 40 {
		var what string
		switch r.IntN(16) {
		case 0, 1:
			what = fmt.Sprintf("user message %d", step)
			user(t, c, what)
		case 2:
			// A declared load (may be invalid; then nothing is recorded).
			name := episodeSkills[r.IntN(len(episodeSkills))]
			req := loadstate.Declaration{Skill: name, AllDocs: r.IntN(3) == 0}
			if !req.AllDocs && r.IntN(2) == 0 {
				req.Docs = episodeDocs[name][:1]
			}
			what = fmt.Sprintf("declare %+v", req)
			_, _ = c.Declare(t.Context(), []loadstate.Declaration{req})
		case 3:
			if naming.playbook {
				name := episodeSkills[r.IntN(len(episodeSkills))]
				what = "open_playbook " + name
				if _, err := c.Call(t.Context(), "open_playbook", json.RawMessage(`{"skill":"`+name+`"}`)); err != nil {
					t.Fatalf("seed %d step %d: %s: %v", seed, step, what, err)
				}
				break
			}
			fallthrough
		default:
			tool, args := randomCall(r)
			tool = naming.prefix + tool
			what = tool + " " + args
			if _, err := c.Call(t.Context(), tool, json.RawMessage(args)); err != nil {
				t.Fatalf("seed %d step %d: %s: %v", seed, step, what, err)
			}
		}
		next, turn := request(t, c), getSession(t, c).Turn()
		if turn == prevTurn {
			check(step, what, prev, next)
		}
		prev, prevTurn = next, turn
	}
}

// TestDefaultPlacementPrefixProperty: with the default placement and the
// default (turn) lifetime, every request within a turn is a byte-exact
// prefix of the next one, with and without the loaded-skills cap. The
// other lifetimes trade that for tracking unloads (see TestPrefixBrokenBy).
func TestDefaultPlacementPrefixProperty(t *testing.T) {
	snap := newSnapshot(t, skillFiles)
	configs := map[string]struct {
		cfg    conversation.Options
		naming toolNaming
	}{
		"turn":               {},
		"turn max_loaded=1":  {cfg: conversation.Options{MaxLoaded: 1}},
		"turn max_loaded=2":  {cfg: conversation.Options{MaxLoaded: 2}},
		"turn list catalog":  {cfg: conversation.Options{Catalog: assembly.CatalogOptions{Format: assembly.FormatList}, MaxLoaded: 3}},
		"turn system prompt": {cfg: conversation.Options{System: "You are terse."}},
		// Content is placed by what each call recorded, never by a tool's
		// name: prefixed skill tools and a user tool that loads skills keep
		// the property.
		"turn prefixed tools":      {naming: toolNaming{prefix: "skills_"}},
		"turn user tool loads":     {naming: toolNaming{playbook: true}, cfg: conversation.Options{MaxLoaded: 2}},
		"turn prefixed and a user": {naming: toolNaming{prefix: "mcp__", playbook: true}},
	}
	episodes := 15
	if testing.Short() {
		episodes = 10
	}
	for name, tc := range configs {
		t.Run(name, func(t *testing.T) {
			checked, loaded := 0, 0
			for seed := range uint64(episodes) {
				runEpisode(t, seed, tc.cfg, tc.naming, snap, func(step int, what string, prev, next *assembly.Request) {
					checked++
					if strings.Contains(next.Messages[len(next.Messages)-1].Content, "[Loaded] ") {
						loaded++
					}
					if ok, at := isPrefix(t, prev, next); !ok {
						t.Fatalf("seed %d step %d (%s): request is not a prefix of the next; first difference at message %d\nprev message:\n%s\nnext message:\n%s", seed, step, what, at, msgAt(prev, at), msgAt(next, at))
					}
				})
			}
			if checked < episodes*15 {
				t.Fatalf("only %d request pairs compared; the episodes are too short to mean anything", checked)
			}
			// The episodes must place content, or the property holds
			// trivially (a renamed tool whose loads were dropped would).
			if loaded < episodes {
				t.Fatalf("only %d requests ended with loaded content in %d episodes", loaded, episodes)
			}
		})
	}
}

// TestPrefixBrokenBy documents what breaks the prefix within a turn, and
// so costs prompt-cache reuse: the system placement rewrites the first
// message on every load; the once lifetime removes content from the
// earlier tool result after the model's next step; an eviction in the
// session lifetime removes the evicted skill's content from its result.
func TestPrefixBrokenBy(t *testing.T) {
	snap := newSnapshot(t, skillFiles)
	tests := []struct {
		name  string
		cfg   conversation.Options
		steps [][2]string // calls after the first request
		at    int         // first differing message
	}{
		{"system placement, load", conversation.Options{Placement: assembly.PlacementSystem, System: "S"},
			[][2]string{{"skill_load", `{"skill":"alpha"}`}}, 0},
		{"once lifetime, next step", conversation.Options{Lifetime: loadstate.Once},
			[][2]string{{"skill_load", `{"skill":"alpha"}`}, {"skill_list_docs", `{"skill":"beta"}`}}, 3},
		{"session lifetime, eviction", conversation.Options{Lifetime: loadstate.Session, MaxLoaded: 1},
			[][2]string{{"skill_load", `{"skill":"alpha"}`}, {"skill_load", `{"skill":"beta"}`}}, 3},
		{"session lifetime, documents cleared", conversation.Options{Lifetime: loadstate.Session},
			[][2]string{{"skill_load", `{"skill":"alpha","docs":["references/a.md"]}`}, {"skill_select_docs", `{"skill":"alpha","mode":"clear"}`}}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConv(t, session.NewMemoryStore(nil), tt.cfg, "main", snap)
			user(t, c, "go")
			var reqs []*assembly.Request
			for _, s := range tt.steps {
				call(t, c, s[0], s[1])
				reqs = append(reqs, request(t, c))
			}
			if tt.cfg.Placement == assembly.PlacementSystem {
				user2 := newConv(t, session.NewMemoryStore(nil), tt.cfg, "main", snap)
				user(t, user2, "go")
				reqs = append([]*assembly.Request{request(t, user2)}, reqs...)
			}
			prev, next := reqs[len(reqs)-2], reqs[len(reqs)-1]
			ok, at := isPrefix(t, prev, next)
			if ok || at != tt.at {
				t.Fatalf("prefix kept = %v, first difference at %d; want broken at message %d\nprev:\n%s\nnext:\n%s", ok, at, tt.at, prev.Text(), next.Text())
			}
			if !strings.Contains(prev.Text()+next.Text(), "# Alpha") {
				t.Fatalf("neither request shows alpha:\n%s\n%s", prev.Text(), next.Text())
			}
		})
	}
}

// The per-message comparison agrees with comparing whole encodings.
func TestIsPrefixDefinition(t *testing.T) {
	a := &assembly.Request{Messages: []assembly.Message{{Role: "user", Content: "x"}}}
	b := &assembly.Request{Messages: []assembly.Message{{Role: "user", Content: "x"}, {Role: "user", Content: "y"}}}
	c := &assembly.Request{Messages: []assembly.Message{{Role: "user", Content: "x!"}}}
	d := &assembly.Request{Messages: a.Messages, Tools: []assembly.ToolSpec{{Type: "function"}}}
	for _, tt := range []struct {
		prev, next *assembly.Request
		want       bool
	}{{a, b, true}, {a, a, true}, {b, a, false}, {a, c, false}, {a, d, false}} {
		if got, _ := isPrefix(t, tt.prev, tt.next); got != tt.want {
			t.Errorf("isPrefix(%v, %v) = %v, want %v", tt.prev.Messages, tt.next.Messages, got, tt.want)
		}
	}
}

// msgAt renders message i of r for failure messages.
func msgAt(r *assembly.Request, i int) string {
	if i < 0 || i >= len(r.Messages) {
		return "(none)"
	}
	return (&assembly.Request{Messages: r.Messages[i : i+1]}).Text()
}
