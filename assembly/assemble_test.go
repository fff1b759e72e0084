package assembly_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestEpisodeGolden replays one scripted episode for every placement ×
// lifetime on a SQLite store and compares each request with a golden file.
func TestEpisodeGolden(t *testing.T) {
	snap := newSnapshot(t, skillFiles)
	store, err := sqlitestore.Open(t.Context(), t.TempDir()+"/sessions.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	for _, p := range []assembly.Placement{assembly.PlacementToolResult, assembly.PlacementSystem} {
		for _, m := range []loadstate.Lifetime{loadstate.Once, loadstate.Turn, loadstate.Session} {
			t.Run(p.String()+"/"+m.String(), func(t *testing.T) {
				c := newConv(t, store, conversation.Options{Placement: p, Lifetime: m, System: "You are a careful assistant."}, "main", snap)
				type step struct {
					After    string             `json:"after"`
					Messages []assembly.Message `json:"messages"`
				}
				var steps []step
				var last *assembly.Request
				record := func(after string) {
					last = request(t, c)
					steps = append(steps, step{after, last.Messages})
				}
				user(t, c, "Summarise the report.")
				record("user")
				call(t, c, "skill_load", `{"skill":"alpha","docs":["references/a.md"]}`)
				record("skill_load alpha with a doc")
				call(t, c, "skill_select_docs", `{"skill":"alpha","docs":["references/b.md"],"mode":"add"}`)
				record("skill_select_docs add")
				user(t, c, "Now the second part.")
				record("second turn")
				call(t, c, "skill_load", `{"skill":"beta"}`)
				record("skill_load beta")
				b, err := json.MarshalIndent(steps, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				golden(t, fmt.Sprintf("episode_%s_%s.json", p, m), append(b, '\n'))
				tb, err := json.MarshalIndent(last.Tools, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				golden(t, "tools.json", append(tb, '\n'))
			})
		}
	}
}

// scenario builds a session with conversations and assembles one request
// with the given From / Summary / options.
type scenario struct {
	name  string
	cfg   conversation.Options
	build func(t *testing.T, c *testConv) *testConv // returns the conversation to assemble for
	from  func(s *session.Session) int
	sum   string
	opts  *assembly.Options
	snap  func(t *testing.T, s *registry.Snapshot) *registry.Snapshot
	// want and wantNot are substrings of the Text() rendering.
	want, wantNot []string
}

func declare(t *testing.T, c *testConv, decls ...loadstate.Declaration) {
	t.Helper()
	if _, err := c.Declare(t.Context(), decls); err != nil {
		t.Fatal(err)
	}
}

// fromLastUser cuts everything before the newest user message.
func fromLastUser(s *session.Session) int {
	for i := len(s.Events) - 1; i >= 0; i-- {
		if s.Events[i].Kind == session.KindUser {
			return i
		}
	}
	return 0
}

func TestFallbackGolden(t *testing.T) {
	base := newSnapshot(t, skillFiles)
	sess := conversation.Options{Lifetime: loadstate.Session}
	tests := []scenario{
		{name: "declared_load", cfg: conversation.Options{},
			build: func(t *testing.T, c *testConv) *testConv {
				user(t, c, "go")
				declare(t, c, loadstate.Declaration{Skill: "alpha", Docs: []string{"references/a.md"}})
				call(t, c, "skill_select_docs", `{"skill":"alpha","docs":["notes.txt"],"mode":"add"}`)
				return c
			},
			want: []string{"Loaded skill context:\n\n[Loaded] alpha", "[Doc] references/a.md", "[Doc] notes.txt"}},
		{name: "cut_load_at_start", cfg: sess,
			build: func(t *testing.T, c *testConv) *testConv {
				user(t, c, "first")
				call(t, c, "skill_load", `{"skill":"beta","include_all_docs":true}`)
				user(t, c, "second")
				return c
			},
			from: fromLastUser,
			want: []string{"── system ──\nLoaded skill context:\n\n[Loaded] beta", "[Doc] guide.md"}},
		{name: "summary_skips_earlier_turn", cfg: sess,
			build: func(t *testing.T, c *testConv) *testConv {
				user(t, c, "first")
				call(t, c, "skill_load", `{"skill":"beta"}`)
				user(t, c, "second")
				return c
			},
			from: fromLastUser, sum: "The user asked about beta.",
			want: []string{"Session summary:\nThe user asked about beta."}, wantNot: []string{"Loaded skill context:"}},
		{name: "summary_current_turn_exception", cfg: sess,
			build: func(t *testing.T, c *testConv) *testConv {
				user(t, c, "only turn")
				call(t, c, "skill_load", `{"skill":"beta"}`)
				call(t, c, "skill_list_docs", `{"skill":"beta"}`)
				return c
			},
			from: func(s *session.Session) int { return len(s.Events) - 2 }, sum: "Same-turn compaction.",
			want: []string{"Session summary:\nSame-turn compaction.", "Loaded skill context:\n\n[Loaded] beta"}},
		{name: "fallback_on_summary", cfg: sess,
			build: func(t *testing.T, c *testConv) *testConv {
				user(t, c, "first")
				call(t, c, "skill_load", `{"skill":"beta"}`)
				user(t, c, "second")
				return c
			},
			from: fromLastUser, sum: "Earlier.", opts: &assembly.Options{FallbackOnSummary: true},
			want: []string{"Session summary:\nEarlier.", "Loaded skill context:\n\n[Loaded] beta"}},
		{name: "skill_removed_after_loading", cfg: sess,
			build: func(t *testing.T, c *testConv) *testConv {
				user(t, c, "go")
				call(t, c, "skill_load", `{"skill":"gamma"}`)
				return c
			},
			snap: func(t *testing.T, s *registry.Snapshot) *registry.Snapshot {
				return s.View(t.Context(), func(_ context.Context, sum skill.Summary) bool { return sum.Name != "gamma" })
			},
			want: []string{"[Loaded] gamma\n\n(This skill is no longer available: "}},
		{name: "sub_agent_isolation", cfg: conversation.Options{},
			build: func(t *testing.T, a *testConv) *testConv {
				user(t, a, "go")
				call(t, a, "skill_load", `{"skill":"alpha"}`)
				b := reopen(t, a, "helper")
				call(t, b, "skill_load", `{"skill":"beta","docs":["guide.md"]}`)
				declare(t, b, loadstate.Declaration{Skill: "gamma"})
				call(t, a, "skill_list_docs", `{"skill":"alpha"}`)
				return a
			},
			want: []string{"[Loaded] alpha"}, wantNot: []string{"beta\n", "gamma\n", "Loaded skill context:"}},
		{name: "sub_agent_view", cfg: conversation.Options{},
			build: func(t *testing.T, a *testConv) *testConv {
				user(t, a, "go")
				call(t, a, "skill_load", `{"skill":"alpha"}`)
				b := reopen(t, a, "helper")
				user(t, b, "check gamma")
				declare(t, b, loadstate.Declaration{Skill: "gamma"})
				return b
			},
			// The helper sees its own task, not the message addressed to main.
			want:    []string{"── user ──\ncheck gamma\n\n── system ──\nLoaded skill context:\n\n[Loaded] gamma"},
			wantNot: []string{"[Loaded] alpha", "→ skill_load", "── user ──\ngo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConv(t, session.NewMemoryStore(nil), tt.cfg, "main", base)
			target := tt.build(t, c)
			s := getSession(t, target)
			in := assembly.Input{System: "Be brief.", Session: s, Agent: target.Agent(), Skills: base, Tools: toolsOf(t, target), Summary: tt.sum}
			if tt.from != nil {
				in.From = tt.from(s)
			}
			if tt.snap != nil {
				in.Skills = tt.snap(t, base)
			}
			opts := tt.opts
			if opts == nil {
				opts = &assembly.Options{Placement: target.opts.Placement}
			}
			req, err := assembly.Assemble(t.Context(), in, opts)
			if err != nil {
				t.Fatal(err)
			}
			text := req.Text()
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("request lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(text, w) {
					t.Errorf("request contains %q:\n%s", w, text)
				}
			}
			golden(t, "fallback_"+tt.name+".json", append(messagesJSON(t, req), '\n'))
		})
	}
}

func TestAssembleErrors(t *testing.T) {
	s := &session.Session{Events: []session.Event{{Kind: session.KindUser, Text: "x", Turn: 1}}, State: map[string]string{}}
	tests := []struct {
		name string
		in   assembly.Input
		opts *assembly.Options
		want string
	}{
		{"nil session", assembly.Input{}, nil, "Input.Session is nil"},
		{"from negative", assembly.Input{Session: s, From: -1}, nil, "Input.From is -1; it must be between 0 and the 1 events"},
		{"from past end", assembly.Input{Session: s, From: 2}, nil, "Input.From is 2"},
		{"placement", assembly.Input{Session: s}, &assembly.Options{Placement: 7}, `Options.Placement: placement 7 is not one of PlacementToolResult, PlacementSystem`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := assembly.Assemble(t.Context(), tt.in, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	// From at the end sends no event but is valid.
	if _, err := assembly.Assemble(t.Context(), assembly.Input{Session: s, From: 1}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRequestText(t *testing.T) {
	snap := newSnapshot(t, skillFiles)
	c := newConv(t, session.NewMemoryStore(nil), conversation.Options{System: "System prompt.", Tools: tools.Static{tools.Skill(), tools.Load()}}, "main", snap)
	user(t, c, "hello")
	call(t, c, "skill_load", `{"skill":"gamma"}`)
	golden(t, "request_text.txt", []byte(request(t, c).Text()))
	empty := (&assembly.Request{}).Text()
	if empty != "\n── tools ──\n[]\n" {
		t.Errorf("empty request text = %q", empty)
	}
}

// Prefixed skill tools and a user tool that loads skills place content in
// their own results, like the built-in names do.
func TestRenamedToolsPlaceContentInTheirResults(t *testing.T) {
	snap := newSnapshot(t, skillFiles)
	c := newConv(t, session.NewMemoryStore(nil), conversation.Options{Tools: toolNaming{prefix: "mcp_", playbook: true}.set()}, "main", snap)
	user(t, c, "go")
	call(t, c, "mcp_skill_load", `{"skill":"alpha","docs":["references/a.md"]}`)
	call(t, c, "open_playbook", `{"skill":"beta"}`)
	call(t, c, "mcp_skill_select_docs", `{"skill":"alpha","docs":["notes.txt"],"mode":"add"}`)
	req := request(t, c)
	var results []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
		if strings.Contains(m.Content, assembly.FallbackHeader) {
			t.Errorf("content moved to a fallback message:\n%s", req.Text())
		}
	}
	want := [][]string{
		{"loaded: alpha\n\n[Loaded] alpha\n\n# Alpha", "[Doc] references/a.md"},
		{"opened beta\n\n[Loaded] beta\n\n# Beta", "[Doc] guide.md"},
		{"selected documents of alpha (add): notes.txt\n\n[Doc] notes.txt"},
	}
	if len(results) != len(want) {
		t.Fatalf("%d tool results, want %d:\n%s", len(results), len(want), req.Text())
	}
	for i, w := range want {
		for _, sub := range w {
			if !strings.Contains(results[i], sub) {
				t.Errorf("result %d lacks %q:\n%s", i, sub, results[i])
			}
		}
	}
	if strings.Contains(results[2], "[Loaded] alpha") {
		t.Errorf("selecting documents of a loaded skill repeated its instructions:\n%s", results[2])
	}
}

// A user message with no agent is every agent's; one addressed to an
// agent is only its own.
func TestUserMessagesAddressed(t *testing.T) {
	s := &session.Session{State: map[string]string{}, Events: []session.Event{
		{Kind: session.KindUser, Text: "to all", Turn: 1},
		{Kind: session.KindUser, Agent: "main", Text: "to main", Turn: 2},
		{Kind: session.KindUser, Agent: "helper", Text: "to helper", Turn: 3},
		{Kind: session.KindAssistant, Agent: "helper", Text: "helper's answer", Turn: 3},
	}}
	for agent, want := range map[string][]string{
		"main":   {"to all", "to main"},
		"helper": {"to all", "to helper", "helper's answer"},
		"other":  {"to all"},
	} {
		req, err := assembly.Assemble(t.Context(), assembly.Input{Session: s, Agent: agent}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range req.Messages {
			got = append(got, m.Content)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s sees %q, want %q", agent, got, want)
		}
	}
}

// A document's text is pinned by the snapshot: editing the file after a
// request showed it does not rewrite that request's tool result.
func TestEditedDocumentKeepsTheTurnsPrefix(t *testing.T) {
	root := writeTree(t, skillFiles)
	reg, err := registry.New(t.Context(), []source.Source{source.FS(os.DirFS(root), "project", 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newConv(t, session.NewMemoryStore(nil), conversation.Options{}, "main", reg.Snapshot())
	user(t, c, "go")
	call(t, c, "skill_load", `{"skill":"alpha","docs":["references/a.md"]}`)
	before := request(t, c)
	if err := os.WriteFile(filepath.Join(root, "alpha", "references", "a.md"), []byte("# A, rewritten entirely\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	call(t, c, "skill_list_docs", `{"skill":"alpha"}`)
	after := request(t, c)
	if ok, at := isPrefix(t, before, after); !ok {
		t.Fatalf("the edit rewrote message %d:\n%s", at, msgAt(after, at))
	}
	if !strings.Contains(after.Text(), "First reference.") || strings.Contains(after.Text(), "rewritten") {
		t.Errorf("request shows the edited text:\n%s", after.Text())
	}
}

// A model that numbers its calls afresh in every answer repeats IDs; the
// request renames the repeats, in the answer and in its results, so that
// every ID is answered once.
func TestRepeatedCallIDsRenamed(t *testing.T) {
	c := newConv(t, session.NewMemoryStore(nil), conversation.Options{}, "main", newSnapshot(t, skillFiles))
	user(t, c, "go")
	for range 3 {
		if _, err := c.Respond(t.Context(), conversation.Assistant{Calls: []session.ToolCall{
			{ID: "call_0", Name: "skill_list_docs", Arguments: `{"skill":"alpha"}`},
			{ID: "call_1", Name: "skill_list_docs", Arguments: `{"skill":"beta"}`}}}); err != nil {
			t.Fatal(err)
		}
	}
	first := request(t, c)
	var got []string
	for _, m := range first.Messages {
		for _, tc := range m.ToolCalls {
			got = append(got, "call:"+tc.ID)
		}
		if m.Role == "tool" {
			got = append(got, "result:"+m.ToolCallID)
		}
	}
	want := "call:call_0 call:call_1 result:call_0 result:call_1 call:call_0_2 call:call_1_2 result:call_0_2 result:call_1_2 call:call_0_3 call:call_1_3 result:call_0_3 result:call_1_3"
	if strings.Join(got, " ") != want {
		t.Errorf("IDs\n%s\nwant\n%s", strings.Join(got, " "), want)
	}
	call(t, c, "skill_list_docs", `{"skill":"gamma"}`)
	if ok, at := isPrefix(t, first, request(t, c)); !ok {
		t.Errorf("renaming broke the prefix at message %d", at)
	}
}
