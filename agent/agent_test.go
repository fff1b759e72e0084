package agent_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openai"
	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// skillsRoot is the bundled example skills.
const skillsRoot = "../examples/skills"

// csvBody is a line of csv-stats' instructions, present in a request
// only while the skill is loaded there.
const csvBody = "Use this skill to describe the contents of a CSV file"

// stores are the session stores every end-to-end test runs on.
var stores = []struct {
	name string
	open func(t *testing.T) session.Store
}{
	{"memory", func(t *testing.T) session.Store {
		s := session.NewMemoryStore(nil)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
	{"sqlite", func(t *testing.T) session.Store {
		s, err := sqlitestore.Open(t.Context(), filepath.Join(t.TempDir(), "s.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
}

// setup is a kit on the example skills, a scripted Chat Completions
// server and the real openai adapter talking to it over HTTP.
type setup struct {
	kit   *skillkit.Kit
	store session.Store
	srv   *openaitest.Server
	model *openai.Model
}

func newSetup(t *testing.T, store session.Store, ao skillkit.AgentOptions, steps ...scripted.Step) *setup {
	t.Helper()
	kit, err := skillkit.New(t.Context(), &skillkit.Options{Roots: []string{skillsRoot}, Store: store, Agent: ao})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kit.Close() })
	srv, m := serve(t, steps...)
	return &setup{kit: kit, store: store, srv: srv, model: m}
}

// serve starts a server playing steps and returns it with the openai
// adapter pointed at it.
func serve(t *testing.T, steps ...scripted.Step) (*openaitest.Server, *openai.Model) {
	t.Helper()
	srv, err := openaitest.New(&scripted.Script{Steps: steps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	m, err := openai.New(&openai.Options{BaseURL: srv.URL, Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	return srv, m
}

func (s *setup) agent(t *testing.T, opts *agent.Options) *agent.Agent {
	t.Helper()
	a, err := agent.New(s.kit, "assistant", s.model, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// run drains a run and returns its events and its error.
func run(seq func(func(agent.Event, error) bool)) ([]agent.Event, error) {
	var evs []agent.Event
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func kinds(evs []agent.Event) []agent.Kind {
	out := make([]agent.Kind, len(evs))
	for i, ev := range evs {
		out[i] = ev.Kind
	}
	return out
}

// events returns the session's stored events.
func events(t *testing.T, store session.Store, id string) []session.Event {
	t.Helper()
	s, err := store.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Events
}

func call(id, name, args string) scripted.Call {
	return scripted.Call{ID: id, Name: name, Arguments: scripted.Arguments(args)}
}

func TestToolLoopLoadsASkill(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := newSetup(t, st.open(t), skillkit.AgentOptions{System: "You help with data."},
				scripted.Step{Expect: &scripted.Expect{LastRole: "user", ToolsInclude: []string{"skill"}},
					Calls: []scripted.Call{call("call_a", "skill", `{"name":"csv-stats"}`)}},
				scripted.Step{Expect: &scripted.Expect{ToolResults: []string{"call_a"}, LastContains: csvBody},
					Text: "Run scripts/stats.py on the file."})
			evs, err := run(s.agent(t, nil).Run(t.Context(), "", "How do I summarise a CSV?"))
			if err != nil {
				t.Fatal(err)
			}
			want := []agent.Kind{agent.KindUser, agent.KindResponse, agent.KindToolResult, agent.KindResponse, agent.KindAnswer}
			if got := kinds(evs); !slices.Equal(got, want) {
				t.Fatalf("kinds %v, want %v", got, want)
			}
			if err := errors.Join(s.srv.Err(), s.srv.Done()); err != nil {
				t.Fatal(err)
			}
			tr := evs[2]
			if tr.Call.ID != "call_a" || tr.Result.IsError || len(tr.Loads) != 1 || tr.Loads[0].Skill != "csv-stats" || !tr.Loads[0].Instructions {
				t.Errorf("tool result event %+v", tr)
			}
			ans := evs[4]
			if ans.Text != "Run scripts/stats.py on the file." || ans.Step != 2 {
				t.Errorf("answer %+v", ans)
			}
			id := evs[0].SessionID
			for _, ev := range evs {
				if ev.SessionID != id || id == "" {
					t.Fatalf("session IDs %q and %q", ev.SessionID, id)
				}
			}
			// What was recorded is what the events reported, in order.
			stored := events(t, s.store, id)
			var seqs []int64
			for _, ev := range stored {
				if ev.Kind != session.KindContext {
					seqs = append(seqs, ev.Seq)
				}
			}
			got := []int64{evs[0].Record.Seq, evs[1].Record.Seq, evs[2].Record.Seq, evs[3].Record.Seq}
			if !slices.Equal(got, seqs) {
				t.Errorf("reported seqs %v, stored (without the catalog) %v", got, seqs)
			}
			ex := s.srv.Exchanges()
			if !strings.Contains(ex[0].Request.Messages[0].Content, "You help with data.") {
				t.Errorf("first message %+v, want the instructions", ex[0].Request.Messages[0])
			}
			// Usage: each step's is the server's, the run's is their sum.
			var sum model.Usage
			for i, step := range []agent.Event{evs[1], evs[3]} {
				if step.Usage != ex[i].Usage || step.Response.Usage != ex[i].Usage {
					t.Errorf("step %d usage %+v, server %+v", i+1, step.Usage, ex[i].Usage)
				}
				sum = sum.Add(ex[i].Usage)
			}
			if ans.Usage != sum || sum.PromptTokens != len(ex[0].Body)+len(ex[1].Body) {
				t.Errorf("run usage %+v, want %+v", ans.Usage, sum)
			}
			cacheHolds(t, ex)
		})
	}
}

// cacheHolds checks that within a turn each request repeats the one
// before as its prefix: its messages start with all of the previous
// request's, its tools are the same, and the cached tokens the server
// reports cover the previous body up to the end of its last message.
func cacheHolds(t *testing.T, ex []openaitest.Exchange) {
	t.Helper()
	for i := 1; i < len(ex); i++ {
		prev, cur := ex[i-1], ex[i]
		if !reflect.DeepEqual(cur.Request.Messages[:len(prev.Request.Messages)], prev.Request.Messages) ||
			!reflect.DeepEqual(cur.Request.Tools, prev.Request.Tools) {
			t.Errorf("request %d does not extend request %d", i+1, i)
		}
		// The messages array is first in the body; the previous body
		// ends it with "]" where the next goes on with ",".
		end := bytes.Index(prev.Body, []byte(`}],"model"`))
		if end < 0 {
			t.Fatalf("request %d: the messages do not end where expected: %.200s", i, prev.Body)
		}
		if c := cur.Usage.CachedPromptTokens; c != end+1 {
			t.Errorf("request %d: cached %d tokens, want the %d of request %d's messages", i+1, c, end+1, i)
		}
	}
}

func TestParallelCallsRoundTripIDs(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := newSetup(t, st.open(t), skillkit.AgentOptions{},
				scripted.Step{Calls: []scripted.Call{
					call("call_csv", "skill", `{"name":"csv-stats"}`),
					call("call_api", "skill_load", `{"skill":"api-style-guide","docs":["references/errors.md"]}`),
				}},
				scripted.Step{Expect: &scripted.Expect{ToolResults: []string{"call_csv", "call_api"}}, Text: "Both loaded."})
			evs, err := run(s.agent(t, nil).Run(t.Context(), "", "Load both"))
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(s.srv.Err(), s.srv.Done()); err != nil {
				t.Fatal(err)
			}
			var ids, skills []string
			for _, ev := range evs {
				if ev.Kind == agent.KindToolResult {
					ids = append(ids, ev.Call.ID, ev.Record.ToolCallID)
					for _, l := range ev.Loads {
						skills = append(skills, l.Skill+":"+strings.Join(l.Docs, ","))
					}
				}
			}
			if want := []string{"call_csv", "call_csv", "call_api", "call_api"}; !slices.Equal(ids, want) {
				t.Errorf("call IDs %v, want %v", ids, want)
			}
			if want := []string{"csv-stats:", "api-style-guide:references/errors.md"}; !slices.Equal(skills, want) {
				t.Errorf("loads %v, want %v", skills, want)
			}
			// The IDs went back to the provider on the assistant message
			// and on each result.
			msgs := s.srv.Exchanges()[1].Request.Messages
			asst := msgs[len(msgs)-3]
			if len(asst.ToolCalls) != 2 || asst.ToolCalls[0].ID != "call_csv" || asst.ToolCalls[1].ID != "call_api" {
				t.Errorf("assistant message %+v", asst)
			}
			if !strings.Contains(msgs[len(msgs)-1].Content, "# Error responses") {
				t.Errorf("the document is not in the last result: %.300q", msgs[len(msgs)-1].Content)
			}
		})
	}
}

func TestMistakesAreAnsweredToTheModel(t *testing.T) {
	s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{},
		scripted.Step{Calls: []scripted.Call{
			call("c1", "no_such_tool", `{}`),
			call("c2", "skill", `{"name": "csv-stats"`),
		}},
		scripted.Step{Expect: &scripted.Expect{ToolResults: []string{"c1", "c2"}}, Text: "Sorry."})
	evs, err := run(s.agent(t, nil).Run(t.Context(), "", "go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == agent.KindToolResult && (!ev.Result.IsError || !ev.Record.IsError || len(ev.Loads) != 0) {
			t.Errorf("call %s: result %+v, want an error that loads nothing", ev.Call.ID, ev.Result)
		}
	}
	msgs := s.srv.Exchanges()[1].Request.Messages
	for i, want := range []string{`there is no tool "no_such_tool"`, "the arguments to skill are not valid JSON"} {
		m := msgs[len(msgs)-2+i]
		if m.Role != "tool" || !strings.Contains(m.Content, want) {
			t.Errorf("message %+v, want a tool result with %q", m, want)
		}
	}
	// The malformed arguments are sent back verbatim.
	if got := msgs[len(msgs)-3].ToolCalls[1].Function.Arguments; got != `{"name": "csv-stats"` {
		t.Errorf("arguments sent back as %q", got)
	}
}

func TestMaxSteps(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := newSetup(t, st.open(t), skillkit.AgentOptions{},
				scripted.Step{Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}},
				scripted.Step{Calls: []scripted.Call{call("c2", "skill", `{"name":"unicode-notes"}`)}},
				scripted.Step{Text: "never asked"})
			evs, err := run(s.agent(t, &agent.Options{MaxSteps: 2}).Run(t.Context(), "", "loop"))
			if !errors.Is(err, agent.ErrMaxSteps) || !strings.Contains(err.Error(), `agent "assistant" stopped after 2 steps`) {
				t.Fatalf("err %v, want ErrMaxSteps after 2 steps", err)
			}
			if n := len(s.srv.Exchanges()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
			// Both steps are recorded whole: each call has its result.
			var got []session.Kind
			for _, ev := range events(t, s.store, evs[0].SessionID) {
				if ev.Kind != session.KindContext {
					got = append(got, ev.Kind)
				}
			}
			want := []session.Kind{session.KindUser, session.KindAssistant, session.KindTool, session.KindAssistant, session.KindTool}
			if !slices.Equal(got, want) {
				t.Errorf("stored %v, want %v", got, want)
			}
		})
	}
}

func TestModelFailureEndsTheRun(t *testing.T) {
	s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{},
		scripted.Step{Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}},
		scripted.Step{Error: &scripted.Error{Status: 400, Message: "context too long", Code: "context_length_exceeded"}})
	evs, err := run(s.agent(t, nil).Run(t.Context(), "", "go"))
	var apiErr *model.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Message != "context too long" || !strings.Contains(err.Error(), "step 2: the model") {
		t.Fatalf("err %v, want the server's 400 at step 2", err)
	}
	// The first step stays recorded; nothing of the second is.
	stored := events(t, s.store, evs[0].SessionID)
	if end := stored[len(stored)-1]; end.Kind != session.KindTool || end.ToolCallID != "c1" {
		t.Errorf("the session ends with %+v, want step 1's result", end)
	}
}

func TestOutputSchema(t *testing.T) {
	schema := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"rows": {Type: "integer"}}, Required: []string{"rows"}}
	s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{},
		scripted.Step{Expect: &scripted.Expect{Output: "stats"}, Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}},
		scripted.Step{Expect: &scripted.Expect{Output: "stats"}, Text: `{"rows":3}`})
	evs, err := run(s.agent(t, &agent.Options{Output: &model.OutputSchema{Name: "stats", Schema: schema}}).Run(t.Context(), "", "count"))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(s.srv.Err(), s.srv.Done()); err != nil {
		t.Fatal(err)
	}
	if ans := evs[len(evs)-1]; ans.Kind != agent.KindAnswer || ans.Text != `{"rows":3}` {
		t.Errorf("answer %+v", ans)
	}
	for i, ex := range s.srv.Exchanges() {
		if o := ex.Request.Output; o == nil || o.Name != "stats" || !reflect.DeepEqual(o.Schema.Required, []string{"rows"}) {
			t.Errorf("request %d asks for %+v", i+1, o)
		}
	}
}

func TestNewChecksOptions(t *testing.T) {
	s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{}, scripted.Step{Text: "unused"})
	for _, tc := range []struct {
		name string
		kit  *skillkit.Kit
		m    model.Model
		an   string
		o    *agent.Options
		want string
	}{
		{"no kit", nil, s.model, "a", nil, "the kit is nil"},
		{"no model", s.kit, nil, "a", nil, "the model is nil"},
		{"bad name", s.kit, s.model, "a/b", nil, "has a '/'"},
		{"negative steps", s.kit, s.model, "a", &agent.Options{MaxSteps: -1}, "Options.MaxSteps is -1"},
		{"output without a schema", s.kit, s.model, "a", &agent.Options{Output: &model.OutputSchema{Name: "x"}}, "agent: Options.Output: model: Request.Output.Schema is nil"},
		{"output name", s.kit, s.model, "a", &agent.Options{Output: &model.OutputSchema{Name: "a b", Schema: &jsonschema.Schema{Type: "object"}}}, `Output.Name "a b" has ' '`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agent.New(tc.kit, tc.an, tc.m, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCancellation(t *testing.T) {
	t.Run("mid-stream", func(t *testing.T) {
		s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{},
			scripted.Step{Text: "Thinking", Stall: true})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var id string
		var texts []string
		var err error
		for ev, e := range s.agent(t, &agent.Options{Stream: true}).Run(ctx, "", "hello") {
			if e != nil {
				err = e
				break
			}
			id = ev.SessionID
			if ev.Kind == agent.KindText {
				texts = append(texts, ev.Text)
				cancel()
			}
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
		if !slices.Equal(texts, []string{"Thinking"}) {
			t.Errorf("texts %q", texts)
		}
		select {
		case <-s.srv.ClientGone(1):
		case <-time.After(30 * time.Second):
			t.Fatal("the connection of the stalled request was not closed")
		}
		for _, ev := range events(t, s.store, id) {
			if ev.Kind == session.KindAssistant {
				t.Errorf("an answer was recorded: %+v", ev)
			}
		}
	})
	t.Run("between steps", func(t *testing.T) {
		s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{},
			scripted.Step{Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}},
			scripted.Step{Text: "never asked"})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var last agent.Event
		var err error
		for ev, e := range s.agent(t, nil).Run(ctx, "", "hello") {
			if e != nil {
				err = e
				break
			}
			last = ev
			if ev.Kind == agent.KindToolResult {
				cancel()
			}
		}
		if !errors.Is(err, context.Canceled) || last.Kind != agent.KindToolResult {
			t.Fatalf("err %v after %v, want context.Canceled after the tool result", err, last.Kind)
		}
		if n := len(s.srv.Exchanges()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
		evs := events(t, s.store, last.SessionID)
		if end := evs[len(evs)-1]; end.Seq != last.Record.Seq {
			t.Errorf("the session ends with %+v, want the reported result", end)
		}
	})
}

func TestBreakingOutStopsTheRun(t *testing.T) {
	s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{},
		scripted.Step{Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}},
		scripted.Step{Text: "never asked"})
	var id string
	for ev, err := range s.agent(t, nil).Run(t.Context(), "", "hello") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agent.KindResponse {
			id = ev.SessionID
			break
		}
	}
	if n := len(s.srv.Exchanges()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	evs := events(t, s.store, id)
	if end := evs[len(evs)-1]; end.Kind != session.KindTool || end.ToolCallID != "c1" {
		t.Errorf("the session ends with %+v, want the call's result", end)
	}
}

func TestStreamedRun(t *testing.T) {
	s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{},
		scripted.Step{Text: "Loading.", Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}},
		scripted.Step{Text: "Here is how."})
	evs, err := run(s.agent(t, &agent.Options{Stream: true}).Run(t.Context(), "", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var total model.Usage
	for _, ev := range evs {
		switch ev.Kind {
		case agent.KindText:
			text.WriteString(ev.Text)
		case agent.KindResponse:
			total = total.Add(ev.Usage)
		}
	}
	if text.String() != "Loading.Here is how." {
		t.Errorf("streamed text %q", text.String())
	}
	ex := s.srv.Exchanges()
	if !ex[0].Stream || !ex[0].IncludeUsage {
		t.Errorf("request 1: stream %v, usage %v", ex[0].Stream, ex[0].IncludeUsage)
	}
	ans := evs[len(evs)-1]
	if ans.Kind != agent.KindAnswer || ans.Usage != total || total != ex[0].Usage.Add(ex[1].Usage) || total.CachedPromptTokens == 0 {
		t.Errorf("answer %+v, steps %+v, server %+v %+v", ans, total, ex[0].Usage, ex[1].Usage)
	}
	cacheHolds(t, ex)
}

func TestDeclaredLoads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		decls []loadstate.Declaration
		want  error
	}{
		{"unknown skill", []loadstate.Declaration{{Skill: "csv-stats"}, {Skill: "no-such-skill"}}, agent.ErrSkillUnavailable},
		{"unknown document", []loadstate.Declaration{{Skill: "api-style-guide", Docs: []string{"references/nope.md"}}}, agent.ErrInvalidLoadRequest},
		{"invalid name", []loadstate.Declaration{{Skill: "Not A Name"}}, agent.ErrInvalidLoadRequest},
		{"conflict", []loadstate.Declaration{{Skill: "api-style-guide", AllDocs: true}, {Skill: "api-style-guide"}}, agent.ErrInvalidLoadRequest},
		{"over the cap", []loadstate.Declaration{{Skill: "csv-stats"}, {Skill: "unicode-notes"}}, agent.ErrInvalidLoadRequest},
	} {
		for _, st := range stores {
			t.Run(tc.name+"/"+st.name, func(t *testing.T) {
				store := st.open(t)
				s := newSetup(t, store, skillkit.AgentOptions{MaxLoaded: 1}, scripted.Step{Text: "hi"})
				a := s.agent(t, nil)
				// An earlier turn, so there is something to leave alone.
				prev, err := run(a.Run(t.Context(), "", "first"))
				if err != nil {
					t.Fatal(err)
				}
				id := prev[0].SessionID
				before := events(t, store, id)
				evs, err := run(a.Run(t.Context(), id, "second", agent.WithSkillLoads(tc.decls...)))
				if !errors.Is(err, tc.want) || len(evs) != 0 {
					t.Fatalf("err %v after %d events, want %v before any", err, len(evs), tc.want)
				}
				if n := len(s.srv.Exchanges()); n != 1 {
					t.Errorf("%d requests, want only the first turn's", n)
				}
				if after := events(t, store, id); !reflect.DeepEqual(after, before) {
					t.Errorf("the session changed: %d events, then %d", len(before), len(after))
				}
			})
		}
	}
	t.Run("first turn of a new session", func(t *testing.T) {
		store := stores[1].open(t)
		s := newSetup(t, store, skillkit.AgentOptions{}, scripted.Step{Text: "never asked"})
		_, err := run(s.agent(t, nil).Run(t.Context(), "", "go", agent.WithSkillLoads(loadstate.Declaration{Skill: "no-such-skill"})))
		if !errors.Is(err, agent.ErrSkillUnavailable) || !strings.Contains(err.Error(), `declaration 1 (skill "no-such-skill")`) {
			t.Fatalf("err %v, want ErrSkillUnavailable naming the declaration", err)
		}
		if n := len(s.srv.Exchanges()); n != 0 {
			t.Errorf("%d requests, want none", n)
		}
		infos, err := store.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range infos {
			if in.LastSeq != 0 {
				t.Errorf("session %s has %d events, want none", in.ID, in.LastSeq)
			}
		}
	})
	t.Run("valid", func(t *testing.T) {
		s := newSetup(t, stores[0].open(t), skillkit.AgentOptions{},
			scripted.Step{Expect: &scripted.Expect{LastContains: "Loaded skill context:"}, Text: "ok"})
		evs, err := run(s.agent(t, nil).Run(t.Context(), "", "review",
			agent.WithSkillLoads(loadstate.Declaration{Skill: "api-style-guide", Docs: []string{"references/errors.md"}}),
			agent.WithSkillLoads(loadstate.Declaration{Skill: "csv-stats"})))
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(s.srv.Err(), s.srv.Done()); err != nil {
			t.Fatal(err)
		}
		want := []agent.Kind{agent.KindUser, agent.KindDeclared, agent.KindResponse, agent.KindAnswer}
		if got := kinds(evs); !slices.Equal(got, want) {
			t.Fatalf("kinds %v, want %v", got, want)
		}
		d := evs[1]
		if len(d.Loads) != 2 || d.Loads[0].Skill != "api-style-guide" || !slices.Equal(d.Loads[0].Docs, []string{"references/errors.md"}) || d.Loads[1].Skill != "csv-stats" {
			t.Errorf("declared loads %+v", d.Loads)
		}
		if d.Record.Seq <= evs[0].Record.Seq {
			t.Errorf("declared at %d, before the user message at %d", d.Record.Seq, evs[0].Record.Seq)
		}
		req := s.srv.Exchanges()[0].Request
		if last := req.Messages[len(req.Messages)-1].Content; !strings.Contains(last, csvBody) {
			t.Errorf("the first request does not carry the declared skill: %.300q", last)
		}
	})
}

// twoTurns runs the agent for two turns of one session, the first with
// opts, the second saying "next", and returns the server's exchanges
// after checking that the script was played as written.
func (s *setup) twoTurns(t *testing.T, opts ...agent.RunOption) []openaitest.Exchange {
	t.Helper()
	a := s.agent(t, nil)
	first, err := run(a.Run(t.Context(), "", "first", opts...))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(a.Run(t.Context(), first[0].SessionID, "next")); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(s.srv.Err(), s.srv.Done()); err != nil {
		t.Fatal(err)
	}
	return s.srv.Exchanges()
}

// TestTurnBoundaries runs two turns in one session, the first loading
// csv-stats, and looks for its instructions in the second turn's first
// request. skill_load's result is stored as a stub and its content placed
// while the lifetime keeps it; the skill tool's result holds the
// instructions itself, so they stay in the history as the model saw them.
func TestTurnBoundaries(t *testing.T) {
	for _, tc := range []struct {
		tool, args string
		lifetime   loadstate.Lifetime
		carried    bool
	}{
		{"skill_load", `{"skill":"csv-stats"}`, loadstate.Turn, false},
		{"skill_load", `{"skill":"csv-stats"}`, loadstate.Once, false},
		{"skill_load", `{"skill":"csv-stats"}`, loadstate.Session, true},
		{"skill", `{"name":"csv-stats"}`, loadstate.Turn, true},
	} {
		for _, st := range stores {
			t.Run(tc.tool+"/"+tc.lifetime.String()+"/"+st.name, func(t *testing.T) {
				s := newSetup(t, st.open(t), skillkit.AgentOptions{Lifetime: tc.lifetime},
					scripted.Step{Calls: []scripted.Call{call("c1", tc.tool, tc.args)}},
					scripted.Step{Expect: &scripted.Expect{LastContains: csvBody}, Text: "loaded"},
					scripted.Step{Expect: &scripted.Expect{LastRole: "user", LastContains: "next"}, Text: "second turn"})
				ex := s.twoTurns(t)
				if got := bytes.Contains(ex[2].Body, []byte(csvBody)); got != tc.carried {
					t.Errorf("the second turn carries the instructions: %v, want %v", got, tc.carried)
				}
				msgs := ex[2].Request.Messages
				if res := msgs[len(msgs)-3]; res.Role != "tool" || res.ToolCallID != "c1" || !strings.Contains(res.Content, "csv-stats") {
					t.Errorf("the second turn lost the call's result: %+v", res)
				}
			})
		}
	}
}

// TestExecThroughTheRunner runs a skill's script from the loop, with the
// explicit unconfined local runner (the isolated sandbox has its own
// tests and needs privileges this test does not ask for): the result's
// structured content reaches the event, and the model sees the output.
func TestExecThroughTheRunner(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	runner, err := sandbox.NewUnconfinedLocal(&sandbox.LocalOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	kit, err := skillkit.New(t.Context(), &skillkit.Options{Roots: []string{skillsRoot}, Exec: &skillkit.ExecOptions{Runner: runner}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kit.Close() })
	srv, m := serve(t,
		scripted.Step{Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}},
		scripted.Step{Calls: []scripted.Call{call("c2", "workspace_exec", `{"cwd":"skills/csv-stats","command":"python3 scripts/stats.py scripts/sample.csv"}`)}},
		scripted.Step{Expect: &scripted.Expect{ToolResults: []string{"c2"}, LastContains: "rows"}, Text: "The sample has 3 rows."})
	a, err := agent.New(kit, "assistant", m, nil)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := run(a.Run(t.Context(), "", "How many rows has the sample CSV?"))
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(srv.Err(), srv.Done()); err != nil {
		t.Fatal(err)
	}
	var execEv agent.Event
	for _, ev := range evs {
		if ev.Kind == agent.KindToolResult && ev.Call.Name == "workspace_exec" {
			execEv = ev
		}
	}
	if execEv.Result.IsError || len(execEv.Result.Structured) == 0 || !strings.Contains(execEv.Result.Text, "rows") {
		t.Errorf("workspace_exec result %+v", execEv.Result)
	}
}

// TestDeclaredLoadsLastTheirLifetime declares csv-stats for one turn and
// looks for its instructions in the next turn's request: the turn
// lifetime drops them at the next user message, the session lifetime
// keeps them.
func TestDeclaredLoadsLastTheirLifetime(t *testing.T) {
	for _, tc := range []struct {
		lifetime loadstate.Lifetime
		carried  bool
	}{
		{loadstate.Turn, false},
		{loadstate.Session, true},
	} {
		t.Run(tc.lifetime.String(), func(t *testing.T) {
			s := newSetup(t, stores[1].open(t), skillkit.AgentOptions{Lifetime: tc.lifetime},
				scripted.Step{Expect: &scripted.Expect{LastContains: csvBody}, Text: "declared"},
				scripted.Step{Expect: &scripted.Expect{LastRole: "user", LastContains: "next"}, Text: "second turn"})
			ex := s.twoTurns(t, agent.WithSkillLoads(loadstate.Declaration{Skill: "csv-stats"}))
			if got := bytes.Contains(ex[1].Body, []byte(csvBody)); got != tc.carried {
				t.Errorf("the second turn carries the declared skill: %v, want %v", got, tc.carried)
			}
		})
	}
}
