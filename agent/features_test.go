package agent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/openai"
	"github.com/skillkit/skillkit/model/openaitest"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/tools"
)

// kitOf is a kit over the example skills with a memory store.
func kitOf(t *testing.T, o skillkit.Options) (*skillkit.Kit, session.Store) {
	t.Helper()
	store := session.NewMemoryStore(nil)
	t.Cleanup(func() { _ = store.Close() })
	o.Roots, o.Store = []string{skillsRoot}, store
	kit, err := skillkit.New(t.Context(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kit.Close() })
	return kit, store
}

// httpModel is the openai adapter over real HTTP to a scripted Chat
// Completions server on 127.0.0.1: the runner's features are tested
// through the path a real provider takes.
type httpModel struct {
	*openai.Model
	srv *openaitest.Server
}

// Played is how many requests reached the server.
func (h httpModel) Played() int { return len(h.srv.Exchanges()) }

// script is a model playing steps over HTTP. Requests the script's
// expectations refuse fail the test at its end, even when the run's own
// error was expected.
func script(t *testing.T, steps ...scripted.Step) httpModel {
	t.Helper()
	if len(steps) == 0 { // a model New checks the options against, never asked
		steps = []scripted.Step{{Text: "unused"}}
	}
	srv, m := serve(t, steps...)
	t.Cleanup(func() {
		if err := srv.Err(); err != nil {
			t.Errorf("the scripted server refused requests: %v", err)
		}
	})
	return httpModel{m, srv}
}

func newAgent(t *testing.T, kit *skillkit.Kit, name string, m model.Model, o *agent.Options) *agent.Agent {
	t.Helper()
	a, err := agent.New(kit, name, m, o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// holds reports whether any message of the request holds s.
func holds(req *model.Request, s string) bool {
	return slices.ContainsFunc(req.Messages, func(m assembly.Message) bool { return strings.Contains(m.Content, s) })
}

// responses are the requests the model answered, from a run's events.
func requests(evs []agent.Event, agentName string) []*model.Request {
	var out []*model.Request
	for _, ev := range evs {
		if ev.Kind == agent.KindResponse && ev.Agent == agentName {
			out = append(out, ev.Request)
		}
	}
	return out
}

// TestSubAgentAsTool: an agent called as a tool runs its turn in the
// caller's session under its own name; the skill it loads is in its own
// requests, never in the caller's.
func TestSubAgentAsTool(t *testing.T) {
	kit, store := kitOf(t, skillkit.Options{Agents: map[string]skillkit.AgentOptions{"helper": {System: "You are the CSV helper."}}})
	helper := newAgent(t, kit, "helper", script(t,
		scripted.Step{Calls: []scripted.Call{call("h1", "skill_load", `{"skill":"csv-stats"}`)}},
		scripted.Step{Expect: &scripted.Expect{LastRole: "tool"}, Text: "Use scripts/stats.py."},
	), nil)
	tool, err := helper.AsTool("Answers questions about CSV files.")
	if err != nil {
		t.Fatal(err)
	}
	var helperSaw bool
	main := newAgent(t, kit, "main", script(t,
		scripted.Step{Calls: []scripted.Call{call("m1", "helper", `{"request":"How do I summarise a CSV?"}`)}},
		scripted.Step{Expect: &scripted.Expect{LastContains: "Use scripts/stats.py."}, Text: "Ask the helper's script."},
	), &agent.Options{Tools: []tools.Tool{tool}})
	evs, err := run(main.Run(t.Context(), "", "Summarise my CSV"))
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range requests(evs, "main") {
		if holds(req, csvBody) {
			t.Fatal("the skill the helper loaded is in the caller's request")
		}
	}
	stored := events(t, store, evs[0].SessionID)
	for _, ev := range stored {
		if ev.Agent == "helper" && ev.Kind == session.KindTool && ev.ToolName == "skill_load" {
			helperSaw = true
		}
	}
	if !helperSaw || evs[len(evs)-1].Text != "Ask the helper's script." {
		t.Fatalf("helper's load recorded %v; last event %+v", helperSaw, evs[len(evs)-1])
	}
	if _, err := helper.AsTool(" "); err == nil {
		t.Fatal("AsTool accepted an empty description")
	}
}

// TestTransfer: the agent hands the turn to a sub-agent, whose events
// follow with its name and whose answer ends the run.
func TestTransfer(t *testing.T) {
	kit, store := kitOf(t, skillkit.Options{})
	helper := newAgent(t, kit, "helper", script(t,
		scripted.Step{Expect: &scripted.Expect{LastRole: "user", LastContains: "release notes"}, Text: "Here are the notes."},
	), nil)
	main := newAgent(t, kit, "main", script(t,
		scripted.Step{Expect: &scripted.Expect{ToolsInclude: []string{agent.TransferName}},
			Calls: []scripted.Call{call("t0", agent.TransferName, `{"agent_name":"nobody"}`)}},
		scripted.Step{Calls: []scripted.Call{call("t1", agent.TransferName, `{"agent_name":"helper"}`)}},
	), &agent.Options{SubAgents: []*agent.Agent{helper}})
	evs, err := run(main.Run(t.Context(), "", "Write the release notes"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Agent+":"+ev.Kind.String())
	}
	want := []string{"main:user", "main:response", "main:tool_result", "main:response", "main:tool_result", "main:transfer",
		"helper:user", "helper:response", "helper:answer"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v; want %v", got, want)
	}
	if !evs[2].Result.IsError || !strings.Contains(evs[2].Result.Text, `"nobody" is not one of: helper`) {
		t.Fatalf("transfer to an unknown agent: %+v", evs[2].Result)
	}
	if evs[len(evs)-1].Text != "Here are the notes." {
		t.Fatalf("answer %q", evs[len(evs)-1].Text)
	}
	stored := events(t, store, evs[0].SessionID)
	if u := stored[len(stored)-2]; u.Kind != session.KindUser || u.Agent != "helper" {
		t.Fatalf("the helper's turn starts with %+v", u)
	}
	for _, tc := range []struct {
		subs []*agent.Agent
		want string
	}{
		{[]*agent.Agent{nil}, "Options.SubAgents[0] is nil"},
		{[]*agent.Agent{helper, helper}, `agent "helper" is listed twice`},
		{[]*agent.Agent{main}, "Options.SubAgents[0] is the agent itself"},
	} {
		if _, err := agent.New(kit, "main", script(t), &agent.Options{SubAgents: tc.subs}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v; want %q", err, tc.want)
		}
	}
	otherKit, _ := kitOf(t, skillkit.Options{})
	other := newAgent(t, otherKit, "x", script(t), nil)
	if _, err := agent.New(kit, "main", script(t), &agent.Options{SubAgents: []*agent.Agent{other}}); err == nil || !strings.Contains(err.Error(), "belongs to another kit") {
		t.Errorf("a sub-agent of another kit: %v", err)
	}
}

// TestCompactionInTheRunner: a request over the budget is preceded by a
// summary of the older history, written by the summarising model; the
// request then carries the summary and is smaller.
func TestCompactionInTheRunner(t *testing.T) {
	kit, _ := kitOf(t, skillkit.Options{Agent: skillkit.AgentOptions{Catalog: assembly.CatalogOptions{Format: assembly.FormatList}}})
	long := strings.Repeat("All the details of the earlier answer. ", 200)
	summarizer := script(t, scripted.Step{Expect: &scripted.Expect{LastContains: "Summarise this conversation"}, Text: "They talked about CSV files."})
	a := newAgent(t, kit, "assistant", script(t,
		scripted.Step{Text: long},
		scripted.Step{Calls: []scripted.Call{call("c1", "skill_load", `{"skill":"csv-stats"}`)}},
		scripted.Step{Text: "done"},
	), &agent.Options{Compaction: &agent.Compaction{MaxTokens: 1500, KeepTokens: 300, Model: summarizer}})
	evs, err := run(a.Run(t.Context(), "", "first question"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(kinds(evs), agent.KindCompaction) {
		t.Fatal("compacted a short history")
	}
	evs, err = run(a.Run(t.Context(), evs[0].SessionID, "second question"))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(kinds(evs), agent.KindCompaction)
	if i < 0 {
		t.Fatalf("no compaction: %v", kinds(evs))
	}
	c := evs[i]
	if c.Text != "They talked about CSV files." || c.Tokens[0] <= 1500 || c.Tokens[1] >= c.Tokens[0] || c.Record.Kind != session.KindSummary {
		t.Fatalf("compaction event %+v", c)
	}
	reqs := requests(evs, "assistant")
	if !holds(reqs[0], assembly.SummaryHeader+"\nThey talked about CSV files.") || holds(reqs[0], "All the details") {
		t.Fatal("the request after compaction does not carry the summary in place of the history")
	}
	// The skill loaded in this turn stays shown while the turn goes on.
	if !holds(reqs[len(reqs)-1], csvBody) {
		t.Fatal("the skill loaded after the compaction is not in the next request")
	}
	for _, tc := range []struct {
		c    agent.Compaction
		want string
	}{
		{agent.Compaction{}, "Options.Compaction.MaxTokens is 0"},
		{agent.Compaction{MaxTokens: 10, KeepTokens: 10}, "KeepTokens 10 is not below MaxTokens 10"},
		{agent.Compaction{MaxTokens: 10, KeepTokens: -1}, "KeepTokens is -1"},
	} {
		if _, err := agent.New(kit, "assistant", summarizer, &agent.Options{Compaction: &tc.c}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New: %v; want %q", err, tc.want)
		}
	}
}

// TestFencedCode: with the explicit opt-in, the shell block of an answer
// runs through workspace_exec, recorded as a call the runtime made, and
// the model is asked again with its result; without it, the block is
// only text.
func TestFencedCode(t *testing.T) {
	kit, store := kitOf(t, skillkit.Options{Exec: &skillkit.ExecOptions{Runner: unconfinedRunner(t)}})
	answer := "Let me check:\n```bash\necho fenced-$((6*7))\n```\n"
	a := newAgent(t, kit, "assistant", script(t,
		scripted.Step{Text: answer},
		scripted.Step{Expect: &scripted.Expect{LastRole: "tool", LastContains: "fenced-42"}, Text: "It printed fenced-42."},
	), &agent.Options{FencedCode: &agent.FencedCode{}})
	evs, err := run(a.Run(t.Context(), "", "compute"))
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(evs); !slices.Equal(got, []agent.Kind{agent.KindUser, agent.KindResponse, agent.KindToolResult, agent.KindResponse, agent.KindAnswer}) {
		t.Fatalf("kinds %v", got)
	}
	if evs[2].Call.Name != tools.WorkspaceExecName || !strings.Contains(evs[2].Call.Arguments, "echo fenced") {
		t.Fatalf("call %+v", evs[2].Call)
	}
	if asst := evs[1].Record; asst.Kind != session.KindAssistant || asst.Text != answer || len(asst.ToolCalls) != 1 {
		t.Fatalf("recorded answer %+v", asst)
	}
	if stored := events(t, store, evs[0].SessionID); !slices.ContainsFunc(stored, func(e session.Event) bool { return e.ID == evs[1].Record.ID }) {
		t.Fatal("the answer with its runtime calls is not in the session")
	}
	// Off by default: the same answer ends the run.
	b := newAgent(t, kit, "assistant", script(t, scripted.Step{Text: answer}), nil)
	if evs, err := run(b.Run(t.Context(), "", "compute")); err != nil || evs[len(evs)-1].Kind != agent.KindAnswer {
		t.Fatalf("without FencedCode: %v %v", kinds(evs), err)
	}
	noExec, _ := kitOf(t, skillkit.Options{})
	if _, err := agent.New(noExec, "assistant", script(t), &agent.Options{FencedCode: &agent.FencedCode{}}); err == nil || !strings.Contains(err.Error(), "Options.FencedCode needs workspace_exec") {
		t.Fatalf("FencedCode without Exec: %v", err)
	}
	if _, err := agent.New(kit, "assistant", script(t), &agent.Options{FencedCode: &agent.FencedCode{MaxRounds: -1}}); err == nil || !strings.Contains(err.Error(), "MaxRounds is -1") {
		t.Fatalf("negative rounds: %v", err)
	}
	// An answer cut at the token limit does not run; the rounds are
	// bounded, and the answer after the last one ends the run.
	cut := newAgent(t, kit, "assistant", script(t, scripted.Step{Text: "```sh\necho cut\n```\n", FinishReason: model.FinishLength}),
		&agent.Options{FencedCode: &agent.FencedCode{}})
	if evs, err := run(cut.Run(t.Context(), "", "compute")); err != nil || evs[len(evs)-1].Kind != agent.KindAnswer || len(evs) != 3 {
		t.Fatalf("a cut answer: %v %v", kinds(evs), err)
	}
	again := scripted.Step{Text: "```sh\necho 3\n```\n"}
	loop := newAgent(t, kit, "assistant", script(t, again, again, again), &agent.Options{FencedCode: &agent.FencedCode{MaxRounds: 2}})
	evs, err = run(loop.Run(t.Context(), "", "compute"))
	if err != nil || evs[len(evs)-1].Kind != agent.KindAnswer || strings.Count(strings.Join(func() (k []string) {
		for _, e := range evs {
			k = append(k, e.Kind.String())
		}
		return k
	}(), " "), "tool_result") != 2 {
		t.Fatalf("rounds at the limit: %v %v", kinds(evs), err)
	}
}

// TestToolCallbacks: AfterTool may change a result before it is recorded;
// a BeforeTool error ends the run and the answer is not recorded.
func TestToolCallbacks(t *testing.T) {
	kit, store := kitOf(t, skillkit.Options{})
	var seen []string
	a := newAgent(t, kit, "assistant", script(t,
		scripted.Step{Calls: []scripted.Call{call("c1", "skill_list_docs", `{"skill":"csv-stats"}`)}},
		scripted.Step{Expect: &scripted.Expect{LastContains: "[checked]"}, Text: "ok"},
	), &agent.Options{
		BeforeTool: func(_ context.Context, c agent.ToolCall) error {
			seen = append(seen, "before "+c.Call.Name+" "+c.Call.ID+" step "+string(rune('0'+c.Step)))
			return nil
		},
		AfterTool: func(_ context.Context, c agent.ToolCall, res *tools.Result, err error) error {
			res.Text += " [checked]"
			return err
		},
	})
	evs, err := run(a.Run(t.Context(), "", "docs?"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []string{"before skill_list_docs c1 step 1"}) || !strings.HasSuffix(evs[2].Record.Text, " [checked]") {
		t.Fatalf("seen %v; recorded %q", seen, evs[2].Record.Text)
	}
	refuse := errors.New("not allowed")
	b := newAgent(t, kit, "assistant", script(t, scripted.Step{Calls: []scripted.Call{call("c1", "skill_list_docs", `{"skill":"csv-stats"}`)}}),
		&agent.Options{BeforeTool: func(context.Context, agent.ToolCall) error { return refuse }})
	evs, err = run(b.Run(t.Context(), "", "docs?"))
	if !errors.Is(err, refuse) || !strings.Contains(err.Error(), "Options.BeforeTool") {
		t.Fatalf("err %v", err)
	}
	if stored := events(t, store, evs[0].SessionID); stored[len(stored)-1].Kind != session.KindUser {
		t.Fatalf("the refused answer was recorded: %+v", stored[len(stored)-1])
	}
}

// TestRunOptions: runtime state read by a filter, a per-run catalog
// renderer and guidance, per-run tools, and the request on each response.
func TestRunOptions(t *testing.T) {
	onlyCSV := func(ctx context.Context, s skill.Summary) bool {
		who, _ := agent.RuntimeValue[string](ctx, "user")
		return who != "csv-user" || s.Name == "csv-stats"
	}
	kit, _ := kitOf(t, skillkit.Options{Filters: []registry.Filter{onlyCSV}, Agent: skillkit.AgentOptions{Catalog: assembly.CatalogOptions{Format: assembly.FormatList}}})
	extra := tools.New("ping", "Pings.", func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.Result{Text: "pong"}, nil
	})
	render := func(ctx context.Context, ss []skill.Summary) string {
		names := make([]string, len(ss))
		for i, s := range ss {
			names[i] = s.Name
		}
		return "Skills for you: " + strings.Join(names, ", ")
	}
	a := newAgent(t, kit, "assistant", script(t,
		scripted.Step{Expect: &scripted.Expect{ToolsInclude: []string{"ping"}}, Calls: []scripted.Call{call("c1", "ping", `{}`)}},
		scripted.Step{Text: "ok"},
	), nil)
	evs, err := run(a.Run(t.Context(), "", "hi", agent.WithRuntimeState(map[string]any{"user": "csv-user"}), agent.WithTools(extra),
		agent.WithCatalogRender(render), agent.WithGuidance(assembly.Guidance{Mode: assembly.GuidanceReplace, Text: "Load before use."})))
	if err != nil {
		t.Fatal(err)
	}
	req := evs[1].Request
	if req == nil || !holds(req, "Available skills:\nSkills for you: csv-stats\n\nLoad before use.") {
		t.Fatalf("first request: %+v", req)
	}
	if evs[2].Result.Text != "pong" {
		t.Fatalf("per-run tool: %+v", evs[2].Result)
	}
	if _, ok := agent.RuntimeValue[int](context.Background(), "user"); ok {
		t.Fatal("RuntimeValue outside a run")
	}
}

// TestOutputWithActivation: an output schema and tool activation cannot
// be combined.
func TestOutputWithActivation(t *testing.T) {
	kit, _ := kitOf(t, skillkit.Options{Agent: skillkit.AgentOptions{Activation: &skillkit.Activation{
		Sets:  []tools.ToolSet{{Name: "x", Tools: []tools.Tool{tools.New("y", "Y.", func(context.Context, tools.Call, struct{}) (tools.Result, error) { return tools.Result{}, nil })}}},
		Rules: []skillkit.ActivationRule{{Skill: "csv-stats", Sets: []string{"x"}}}}}})
	_, err := agent.New(kit, "assistant", script(t), &agent.Options{Output: &model.OutputSchema{Name: "answer", Schema: schemaOf(t)}})
	if err == nil || !strings.Contains(err.Error(), "Options.Output cannot be combined with the agent's tool activation") {
		t.Fatalf("New: %v", err)
	}
}

// unconfinedRunner is the explicit unconfined runner: the fenced code
// test runs a harmless echo and needs no sandbox features.
func unconfinedRunner(t *testing.T) sandbox.Runner {
	t.Helper()
	r, err := sandbox.NewUnconfinedLocal(&sandbox.LocalOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func schemaOf(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"rows": {Type: "integer"}}}
}

// TestRequestOptions: the cache key, temperature and answer bound reach
// every request; WithCacheKey overrides the key for one run.
func TestRequestOptions(t *testing.T) {
	kit, _ := kitOf(t, skillkit.Options{})
	temp, max := 0.2, 300
	a := newAgent(t, kit, "assistant", script(t,
		scripted.Step{Expect: &scripted.Expect{CacheKey: "agent-key"}, Text: "one"},
		scripted.Step{Expect: &scripted.Expect{CacheKey: "user-7"}, Text: "two"},
	), &agent.Options{CacheKey: "agent-key", Temperature: &temp, MaxTokens: &max})
	evs, err := run(a.Run(t.Context(), "", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if r := evs[1].Request; *r.Temperature != 0.2 || *r.MaxTokens != 300 {
		t.Fatalf("request %+v", r)
	}
	if _, err := run(a.Run(t.Context(), evs[0].SessionID, "again", agent.WithCacheKey("user-7"))); err != nil {
		t.Fatal(err)
	}
}

// TestSkillLoadingUnsupported: declared loads for an agent without the
// tools that load skills are refused before anything is recorded.
func TestSkillLoadingUnsupported(t *testing.T) {
	kit, store := kitOf(t, skillkit.Options{Agent: skillkit.AgentOptions{SkillTools: []string{tools.ListDocsName, tools.ReadName}}})
	m := script(t, scripted.Step{Text: "never"})
	a := newAgent(t, kit, "assistant", m, nil)
	s, err := store.Create(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = run(a.Run(t.Context(), s.ID, "hi", agent.WithSkillLoads(loadstate.Declaration{Skill: "csv-stats"})))
	if !errors.Is(err, agent.ErrSkillLoadingUnsupported) || !strings.Contains(err.Error(), "offers none of skill, skill_load, skill_select_docs") {
		t.Fatalf("err %v", err)
	}
	if evs := events(t, store, s.ID); len(evs) != 0 || m.Played() != 0 {
		t.Fatalf("recorded %d events, asked the model %d times", len(evs), m.Played())
	}
}

// bigTool returns text of about n words.
func bigTool(name string, n int) tools.Tool {
	return tools.New(name, "Returns a lot.", func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.Result{Text: strings.Repeat("data ", n)}, nil
	})
}

// TestCompactionThatCannotHelp: when what is over the budget is the
// newest answer's own results, which stay, no summary is made and the
// summarising model is never asked.
func TestCompactionThatCannotHelp(t *testing.T) {
	kit, _ := kitOf(t, skillkit.Options{})
	summarizer := script(t, scripted.Step{Text: "unused"})
	a := newAgent(t, kit, "assistant", script(t,
		scripted.Step{Calls: []scripted.Call{call("c1", "big", `{}`)}},
		scripted.Step{Text: "done"},
	), &agent.Options{Tools: []tools.Tool{bigTool("big", 3000)}, Compaction: &agent.Compaction{MaxTokens: 2000, KeepTokens: 100, Model: summarizer}})
	evs, err := run(a.Run(t.Context(), "", "go"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(kinds(evs), agent.KindCompaction) || summarizer.Played() != 0 {
		t.Fatalf("compacted %v, summariser asked %d times", kinds(evs), summarizer.Played())
	}
}

// racingSummarizer compacts the session itself before answering, as a
// concurrent run would, so the runner's own Compact is stale.
type racingSummarizer struct {
	kit *skillkit.Kit
	id  *string
	n   int
}

func (r *racingSummarizer) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r.n++
	conv, err := r.kit.Open(ctx, *r.id, "assistant")
	if err != nil {
		return nil, err
	}
	p, err := conv.PlanCompaction(ctx, 0, func(s string) (int, error) { return len(strings.Fields(s)), nil })
	if err != nil || p == nil {
		return nil, fmt.Errorf("plan: %v %v", p, err)
	}
	if _, err := conv.Compact(ctx, p.Through, "The other run's summary."); err != nil {
		return nil, err
	}
	return &model.Response{Text: "This run's summary."}, nil
}

func (r *racingSummarizer) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := r.Generate(ctx, req)
		yield(model.Chunk{Response: resp}, err)
	}
}

// TestCompactionLosesTheRace: a run whose compaction another run beat
// builds its request on the winner's summary instead of failing.
func TestCompactionLosesTheRace(t *testing.T) {
	kit, store := kitOf(t, skillkit.Options{})
	s, err := store.Create(t.Context(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID
	r := &racingSummarizer{kit: kit, id: &id}
	a := newAgent(t, kit, "assistant", script(t,
		scripted.Step{Text: strings.Repeat("long answer ", 400)},
		scripted.Step{Expect: &scripted.Expect{Contains: []string{"The other run's summary."}, Lacks: []string{"This run's summary."}}, Text: "ok"},
	), &agent.Options{Compaction: &agent.Compaction{MaxTokens: 600, Model: r}})
	if _, err := run(a.Run(t.Context(), id, "first")); err != nil {
		t.Fatal(err)
	}
	evs, err := run(a.Run(t.Context(), id, "second"))
	if err != nil || r.n != 1 || slices.Contains(kinds(evs), agent.KindCompaction) {
		t.Fatalf("second run: %v, summariser asked %d times, kinds %v", err, r.n, kinds(evs))
	}
}
