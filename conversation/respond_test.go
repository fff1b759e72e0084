package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

func respond(t *testing.T, c *conv, a conversation.Assistant) *conversation.Step {
	t.Helper()
	step, err := c.Respond(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	return step
}

// barrier is a tool that returns only once n calls are inside it at the
// same time, so a test passes only if the calls really run together. A
// call that waits too long reports it instead of hanging the test.
func barrier(name string, n int) (tools.Tool, *atomic.Int32) {
	var in, most atomic.Int32
	all := make(chan struct{})
	var once sync.Once
	type args struct {
		Say string `json:"say"`
	}
	return tools.New(name, "Waits for the others.", func(ctx context.Context, c tools.Call, a args) (tools.Result, error) {
		cur := in.Add(1)
		defer in.Add(-1)
		for old := most.Load(); cur > old && !most.CompareAndSwap(old, cur); old = most.Load() {
		}
		if int(cur) >= n {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
			return tools.Result{Text: a.Say}, nil
		case <-time.After(30 * time.Second):
			return tools.Errorf("Error: the other calls never ran at the same time"), nil
		}
	}), &most
}

// An answer with text and several calls is recorded as the model gave it:
// its text, every call with the provider's ID, the results in call order,
// and the next request replays them so.
func TestRespondParallelCallsWithProviderIDs(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		wait, most := barrier("wait", 3)
		c := open(t, store, conversation.Options{Tools: tools.Static(append(tools.Defaults(), wait))}, newSnap(t))
		do(t, c, "user go")
		calls := []session.ToolCall{
			{ID: "toolu_01A", Name: "skill_load", Arguments: `{"skill":"alpha","docs":["references/a.md"]}`},
			{ID: "call_Zq9", Name: "wait", Arguments: `{"say":"one"}`},
			{ID: "c-3", Name: "wait", Arguments: `{"say":"two"}`},
			{ID: "c-4", Name: "wait", Arguments: `{"say":"three"}`},
			{ID: "x", Name: "skill_list_docs", Arguments: `{"skill":"beta"}`},
		}
		step := respond(t, c, conversation.Assistant{Text: "Let me look.", Calls: calls})
		if most.Load() != 3 {
			t.Errorf("at most %d calls ran at once, want 3", most.Load())
		}
		wantTexts := []string{"loaded: alpha", "one", "two", "three", "[]"}
		if len(step.Results) != len(calls) || len(step.Events) != 1+len(calls) {
			t.Fatalf("step has %d results and %d events", len(step.Results), len(step.Events))
		}
		asst := step.Events[0]
		if asst.Kind != session.KindAssistant || asst.Text != "Let me look." || !reflect.DeepEqual(asst.ToolCalls, calls) {
			t.Fatalf("assistant event %+v", asst)
		}
		for i, ev := range step.Events[1:] {
			if ev.Kind != session.KindTool || ev.ToolCallID != calls[i].ID || ev.ToolName != calls[i].Name || ev.Text != wantTexts[i] || step.Results[i].Text != wantTexts[i] {
				t.Errorf("result %d: %+v / %+v, want %q for %s", i, ev, step.Results[i], wantTexts[i], calls[i].ID)
			}
		}
		if got := c.session(t).Events; !reflect.DeepEqual(got[len(got)-len(step.Events):], step.Events) {
			t.Error("the step's events are not what the store holds")
		}
		req, err := c.Request(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var m []string
		for _, msg := range req.Messages {
			m = append(m, msg.Role+":"+msg.ToolCallID)
			if msg.Role == "assistant" {
				for _, tc := range msg.ToolCalls {
					m[len(m)-1] += "," + tc.ID
				}
			}
		}
		want := "user:|user:|assistant:,toolu_01A,call_Zq9,c-3,c-4,x|tool:toolu_01A|tool:call_Zq9|tool:c-3|tool:c-4|tool:x"
		if strings.Join(m, "|") != want {
			t.Errorf("request messages\n%s\nwant\n%s", strings.Join(m, "|"), want)
		}
	})
}

func TestRespondBoundsParallelCalls(t *testing.T) {
	wait, most := barrier("wait", 2)
	c := open(t, session.NewMemoryStore(nil), conversation.Options{Tools: tools.Static{wait}, MaxParallel: 2}, newSnap(t))
	var calls []session.ToolCall
	for i := range 6 {
		calls = append(calls, session.ToolCall{ID: fmt.Sprint("c", i), Name: "wait", Arguments: `{"say":"x"}`})
	}
	step := respond(t, c, conversation.Assistant{Calls: calls})
	for _, r := range step.Results {
		if r.IsError {
			t.Fatal(r.Text)
		}
	}
	if most.Load() != 2 {
		t.Errorf("%d calls ran at once, want exactly MaxParallel 2", most.Load())
	}
}

// A text-only answer is one assistant event; under the once lifetime it
// ends what the request it answered showed.
func TestRespondTextOnly(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Options{Lifetime: loadstate.Once}, newSnap(t))
		do(t, c, "user go")
		do(t, c, `skill_load {"skill":"alpha"}`)
		step := respond(t, c, conversation.Assistant{Text: "Done: the answer is 42."})
		if len(step.Events) != 1 || len(step.Results) != 0 || step.Events[0].Text != "Done: the answer is 42." || step.Events[0].ToolCalls != nil {
			t.Fatalf("step %+v", step)
		}
		if got := loaded(t, c); len(got) != 0 {
			t.Errorf("loaded after the answer: %v", got)
		}
		req, err := c.Request(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if last := req.Messages[len(req.Messages)-1]; last.Role != "assistant" || last.Content != "Done: the answer is 42." {
			t.Errorf("last message %+v", last)
		}
	})
}

// Mistakes of the model are results it sees, recorded with the call, so
// the next request has a result for every call.
func TestRespondRecordsModelMistakes(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		type noteArgs struct {
			Text string `json:"text"`
		}
		note := tools.New("note", "Takes a note.", func(ctx context.Context, c tools.Call, a noteArgs) (tools.Result, error) {
			return tools.Result{Text: "noted: " + a.Text}, nil
		})
		c := open(t, store, conversation.Options{Tools: tools.Static{tools.Skill(), tools.Load(), note}}, newSnap(t))
		do(t, c, "user go")
		calls := []session.ToolCall{
			{ID: "1", Name: "skill_read", Arguments: `{"skill":"alpha","path":"SKILL.md"}`},
			{ID: "2", Name: "skill", Arguments: `{"name":`},
			{ID: "3", Name: "skill_load", Arguments: `{"skill":"alpha","skill":"beta"}`},
			{ID: "4", Name: "note", Arguments: `{"txt":"x"}`},
			{ID: "5", Name: "note", Arguments: `{"text":7}`},
			{ID: "6", Name: "note", Arguments: `{"text":"fine"}`},
			{ID: "7", Name: "skill_load", Arguments: ``},
		}
		step := respond(t, c, conversation.Assistant{Calls: calls})
		want := []struct {
			isErr bool
			text  string
		}{
			{true, `Error: there is no tool "skill_read"; the tools are: skill, skill_load, note`},
			{true, "Error: the arguments to skill are not valid JSON; send one JSON object that matches the tool's schema"},
			{true, `Error: invalid arguments to skill_load: duplicate key "skill" in the arguments`},
			{true, `Error: invalid arguments to note: validating root: `},
			{true, `Error: invalid arguments to note: validating root: validating /properties/text: type: 7 has type "integer", want "string"`},
			{false, "noted: fine"},
			{true, `Error: invalid skill name ""`},
		}
		for i, w := range want {
			r, ev := step.Results[i], step.Events[i+1]
			if r.IsError != w.isErr || !strings.HasPrefix(r.Text, w.text) || ev.IsError != w.isErr || ev.Text != r.Text || ev.ToolCallID != calls[i].ID {
				t.Errorf("call %s: %+v (event %+v), want error=%v %q", calls[i].ID, r, ev, w.isErr, w.text)
			}
		}
		// The model's malformed arguments are kept as it wrote them.
		if got := step.Events[0].ToolCalls[1].Arguments; got != `{"name":` {
			t.Errorf("stored arguments %q", got)
		}
		req, err := c.Request(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		results := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results++
			}
		}
		if results != len(calls) {
			t.Errorf("%d tool messages for %d calls", results, len(calls))
		}
		if len(loaded(t, c)) != 0 {
			t.Errorf("a refused call loaded %v", loaded(t, c))
		}
	})
}

func TestRespondInvalidAnswer(t *testing.T) {
	c := open(t, session.NewMemoryStore(nil), conversation.Options{}, newSnap(t))
	do(t, c, "user go")
	before := c.session(t)
	for _, a := range []conversation.Assistant{
		{Calls: []session.ToolCall{{ID: "a", Name: "skill"}, {ID: "a", Name: "skill_load"}}},
		{Calls: []session.ToolCall{{ID: "a", Name: ""}}},
	} {
		if _, err := c.Respond(t.Context(), a); !errors.Is(err, conversation.ErrInvalidAnswer) {
			t.Errorf("Respond(%+v) = %v, want ErrInvalidAnswer", a, err)
		}
	}
	if !reflect.DeepEqual(before, c.session(t)) {
		t.Error("an invalid answer changed the session")
	}
}

// Calls without an ID get one when recorded: call_<seq of the answer>,
// then _<n> for the later ones.
func TestRespondAssignsMissingIDs(t *testing.T) {
	c := open(t, session.NewMemoryStore(nil), conversation.Options{}, newSnap(t))
	do(t, c, "user go")
	step := respond(t, c, conversation.Assistant{Calls: []session.ToolCall{
		{Name: "skill_list_docs", Arguments: `{"skill":"alpha"}`},
		{ID: "mine", Name: "skill_list_docs", Arguments: `{"skill":"beta"}`},
		{Name: "skill_list_docs", Arguments: `{"skill":"gamma"}`},
	}})
	seq := step.Events[0].Seq
	var got []string
	for _, ev := range step.Events[1:] {
		got = append(got, ev.ToolCallID)
	}
	want := []string{fmt.Sprint("call_", seq), "mine", fmt.Sprint("call_", seq, "_2")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("IDs %v, want %v", got, want)
	}
}

// A handler's error is not the model's: the other calls are cancelled and
// nothing is recorded. A panic is such an error too.
func TestRespondHandlerErrorRecordsNothing(t *testing.T) {
	errDisk := errors.New("disk is gone")
	type none struct{}
	started := make(chan struct{})
	fail := tools.New("fail", "Fails once block runs.", func(context.Context, tools.Call, none) (tools.Result, error) {
		<-started
		return tools.Result{}, errDisk
	})
	crash := tools.New("crash", "Panics.", func(context.Context, tools.Call, none) (tools.Result, error) { panic("boom") })
	var cancelled atomic.Bool
	block := tools.New("block", "Runs until cancelled.", func(ctx context.Context, _ tools.Call, _ none) (tools.Result, error) {
		close(started)
		<-ctx.Done()
		cancelled.Store(true)
		return tools.Result{}, ctx.Err()
	})
	c := open(t, session.NewMemoryStore(nil), conversation.Options{Tools: tools.Static{tools.Skill(), fail, crash, block}}, newSnap(t))
	do(t, c, "user go")
	before := c.session(t)
	_, err := c.Respond(t.Context(), conversation.Assistant{Text: "trying", Calls: []session.ToolCall{
		{ID: "a", Name: "skill", Arguments: `{"name":"alpha"}`}, {ID: "b", Name: "block"}, {ID: "c", Name: "fail"}}})
	if !errors.Is(err, errDisk) || !strings.Contains(err.Error(), `Calls[2] (fail, ID "c")`) {
		t.Errorf("err = %v, want the disk error naming the call", err)
	}
	if !cancelled.Load() {
		t.Error("the blocked call was not cancelled")
	}
	_, err = c.Respond(t.Context(), conversation.Assistant{Calls: []session.ToolCall{{ID: "p", Name: "crash"}}})
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Errorf("err = %v, want the panic as an error", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Respond(ctx, conversation.Assistant{Calls: []session.ToolCall{{ID: "x", Name: "skill", Arguments: `{"name":"alpha"}`}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled answer: %v", err)
	}
	if !reflect.DeepEqual(before, c.session(t)) {
		t.Error("a failed answer changed the session")
	}
}

// Concurrent answers on one session are each recorded whole: every
// assistant event is followed by its own results, and no load is lost.
func TestRespondConcurrent(t *testing.T) {
	stores(t, func(t *testing.T, store session.Store) {
		c := open(t, store, conversation.Options{Lifetime: loadstate.Session}, newSnap(t))
		do(t, c, "user go")
		names := []string{"alpha", "beta", "gamma"}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				_, err := c.Respond(t.Context(), conversation.Assistant{Text: fmt.Sprint("answer ", i), Calls: []session.ToolCall{
					{ID: fmt.Sprint("a", i), Name: "skill", Arguments: `{"name":"` + names[i%3] + `"}`},
					{ID: fmt.Sprint("b", i), Name: "skill_list_docs", Arguments: `{"skill":"alpha"}`}}})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		evs := c.session(t).Events
		answers := 0
		for i, ev := range evs {
			if ev.Kind != session.KindAssistant {
				continue
			}
			answers++
			n := strings.TrimPrefix(ev.Text, "answer ")
			if i+2 >= len(evs) || evs[i+1].ToolCallID != "a"+n || evs[i+2].ToolCallID != "b"+n {
				t.Errorf("answer %s is not followed by its own two results", n)
			}
		}
		if answers != 8 {
			t.Errorf("%d answers recorded, want 8", answers)
		}
		if got := loaded(t, c); len(got) != 3 {
			t.Errorf("loaded %v, want all of %v", got, names)
		}
	})
}

// slowState holds every State call until n callers are in it, so that
// all of them read the state before any appends.
type slowState struct {
	session.Store
	n       int
	on      atomic.Bool
	arrived atomic.Int32
	all     chan struct{}
}

func (s *slowState) State(ctx context.Context, id string) (map[string]string, int64, error) {
	if !s.on.Load() {
		return s.Store.State(ctx, id)
	}
	if int(s.arrived.Add(1)) == s.n {
		close(s.all)
	}
	select {
	case <-s.all:
	case <-time.After(30 * time.Second):
	}
	return s.Store.State(ctx, id)
}

// Eight concurrent publications on a store that lets all of them read the
// state first still publish one catalog: the check and the append are one
// atomic step.
func TestPublishCatalogConcurrent(t *testing.T) {
	base := session.NewMemoryStore(nil)
	c := open(t, base, conversation.Options{}, newSnap(t))
	slow := &slowState{Store: base, n: 8, all: make(chan struct{})}
	sc, err := conversation.Open(t.Context(), slow, c.ID(), "main", &c.opts)
	if err != nil {
		t.Fatal(err)
	}
	slowConv := &conv{sc, slow, c.opts}
	slow.on.Store(true)
	var published atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := slowConv.PublishCatalog(t.Context())
			if err != nil {
				t.Error(err)
			}
			if ok {
				published.Add(1)
			}
		})
	}
	wg.Wait()
	if published.Load() != 1 || len(c.session(t).Events) != 1 {
		t.Errorf("%d publications, %d events; want one catalog", published.Load(), len(c.session(t).Events))
	}
}

// The tools of a request are a function of the load state: a tool offered
// once a skill is loaded is unknown before, and the calls of an answer run
// against the tools of the request the model answered.
func TestToolSetPerRequest(t *testing.T) {
	type none struct{}
	var seen tools.Call
	deploy := tools.New("deploy", "Deploys.", func(ctx context.Context, c tools.Call, _ none) (tools.Result, error) {
		seen = c
		return tools.Result{Text: "deployed"}, nil
	})
	set := tools.SetFunc(func(ctx context.Context, st tools.State) ([]tools.Tool, error) {
		ts := tools.Defaults()
		if st.Loaded("alpha") {
			ts = append(ts, deploy)
		}
		return ts, nil
	})
	c := open(t, session.NewMemoryStore(nil), conversation.Options{Tools: set}, newSnap(t))
	do(t, c, "user go")
	names := func() string {
		req, err := c.Request(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, ts := range req.Tools {
			n = append(n, ts.Function.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(); strings.Contains(got, "deploy") {
		t.Errorf("deploy offered before alpha is loaded: %s", got)
	}
	if res, _ := c.Call(t.Context(), "deploy", nil); !res.IsError || !strings.Contains(res.Text, `there is no tool "deploy"`) {
		t.Errorf("deploy before the load: %+v", res)
	}
	do(t, c, `skill_load {"skill":"alpha"}`)
	if got := names(); !strings.HasSuffix(got, ",deploy") {
		t.Errorf("deploy not offered after alpha loaded: %s", got)
	}
	step := respond(t, c, conversation.Assistant{Calls: []session.ToolCall{{ID: "d1", Name: "deploy"}}})
	if step.Results[0].Text != "deployed" {
		t.Errorf("deploy after the load: %+v", step.Results[0])
	}
	if seen.SessionID != c.ID() || seen.Agent != "main" || seen.ID != "d1" || seen.State == nil || !seen.State.Loaded("alpha") || seen.Skills == nil {
		t.Errorf("the tool saw %+v", seen)
	}
	if string(mustJSON(t, seen.Args)) != "null" {
		t.Errorf("empty arguments reached the tool as %s", seen.Args)
	}
}

func mustJSON(t *testing.T, v json.RawMessage) []byte {
	t.Helper()
	if len(v) == 0 {
		return []byte("null")
	}
	return v
}

// Every way of naming documents follows the one path rule: "./x" and
// "a//b" name the same document for declared loads, skill_load,
// skill_select_docs and skill_read, and are recorded in their clean form.
func TestOneDocumentRule(t *testing.T) {
	c := open(t, session.NewMemoryStore(nil), conversation.Options{Lifetime: loadstate.Session}, newSnap(t))
	do(t, c, "user go")
	ev, err := c.Declare(t.Context(), []loadstate.Declaration{{Skill: "alpha", Docs: []string{"./references/a.md"}}})
	if err != nil || !reflect.DeepEqual(ev.Loads[0].Docs, []string{"references/a.md"}) {
		t.Fatalf("declared: %+v, %v", ev.Loads, err)
	}
	step := respond(t, c, conversation.Assistant{Calls: []session.ToolCall{
		{ID: "1", Name: "skill_load", Arguments: `{"skill":"alpha","docs":["./references/b.md"]}`},
		{ID: "2", Name: "skill_select_docs", Arguments: `{"skill":"alpha","docs":["references//a.md"],"mode":"add"}`},
		{ID: "3", Name: "skill_read", Arguments: `{"skill":"alpha","path":"./references/a.md"}`},
	}})
	for i, r := range step.Results {
		if r.IsError {
			t.Errorf("call %d: %s", i+1, r.Text)
		}
	}
	if got := step.Events[1].Loads[0].Docs; !reflect.DeepEqual(got, []string{"references/b.md"}) {
		t.Errorf("skill_load recorded %v", got)
	}
	if docs, _ := loadstate.Of(state(t, c), "main").Docs("alpha"); !reflect.DeepEqual(docs, []string{"references/a.md", "references/b.md"}) {
		t.Errorf("selection %v", docs)
	}
	if step.Results[2].Text != "# A\n" {
		t.Errorf("skill_read: %q", step.Results[2].Text)
	}
}

// IDs given when recorded never take an ID the answer names itself.
func TestRespondAssignedIDsAvoidTheAnswers(t *testing.T) {
	c := open(t, session.NewMemoryStore(nil), conversation.Options{}, newSnap(t))
	do(t, c, "user go")
	_, last, err := c.store.State(t.Context(), c.ID())
	if err != nil {
		t.Fatal(err)
	}
	next := fmt.Sprint("call_", last+1)
	step := respond(t, c, conversation.Assistant{Calls: []session.ToolCall{
		{Name: "skill_list_docs", Arguments: `{"skill":"alpha"}`},
		{ID: next, Name: "skill_list_docs", Arguments: `{"skill":"beta"}`},
		{ID: next + "_2", Name: "skill_list_docs", Arguments: `{"skill":"beta"}`},
		{Name: "skill_list_docs", Arguments: `{"skill":"gamma"}`},
	}})
	seen := map[string]bool{}
	for _, ev := range step.Events[1:] {
		if seen[ev.ToolCallID] {
			t.Errorf("ID %s given twice", ev.ToolCallID)
		}
		seen[ev.ToolCallID] = true
	}
	if len(seen) != 4 {
		t.Errorf("IDs %v", seen)
	}
}

// Effects a tool built from the model's words are checked before anything
// is recorded: what cannot be loaded is the call's error result.
func TestRespondRefusesUnrecordableEffects(t *testing.T) {
	type args struct {
		Skill string   `json:"skill"`
		Docs  []string `json:"docs,omitempty"`
	}
	sloppy := tools.New("open", "Opens a skill.", func(ctx context.Context, c tools.Call, a args) (tools.Result, error) {
		e := tools.Effect{Kind: tools.EffectLoad, Skill: a.Skill, DocsMode: tools.DocsKeep}
		if len(a.Docs) > 0 {
			e.DocsMode, e.Docs = tools.DocsReplace, a.Docs
		}
		return tools.Result{Text: "opened", Effects: []tools.Effect{e}}, nil
	})
	c := open(t, session.NewMemoryStore(nil), conversation.Options{Tools: tools.Static{sloppy}}, newSnap(t))
	do(t, c, "user go")
	step := respond(t, c, conversation.Assistant{Calls: []session.ToolCall{
		{ID: "1", Name: "open", Arguments: `{"skill":"helper/alpha"}`},
		{ID: "2", Name: "open", Arguments: `{"skill":"alpha","docs":["../beta/SKILL.md"]}`},
		{ID: "3", Name: "open", Arguments: `{"skill":"alpha"}`},
	}})
	for i, want := range []string{`skill name "helper/alpha" does not follow`, `document "../beta/SKILL.md" is not a clean path`} {
		if r := step.Results[i]; !r.IsError || !strings.Contains(r.Text, want) || step.Events[i+1].StateDelta != nil {
			t.Errorf("call %d: %+v", i+1, r)
		}
	}
	if step.Results[2].IsError {
		t.Errorf("the valid call failed: %s", step.Results[2].Text)
	}
	for k := range state(t, c) {
		if strings.Contains(k, "helper") {
			t.Errorf("state key %s written for another agent", k)
		}
	}
}
