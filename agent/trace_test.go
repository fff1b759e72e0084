package agent_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/internal/tracing/tracingtest"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// scriptedAgent is the agent "assistant" of a kit on the example skills
// and a memory store, answered by a scripted model playing steps.
func scriptedAgent(t *testing.T, opts *agent.Options, steps ...scripted.Step) (*agent.Agent, *scripted.Model) {
	t.Helper()
	store := session.NewMemoryStore(nil)
	t.Cleanup(func() { _ = store.Close() })
	kit, err := skillkit.New(t.Context(), &skillkit.Options{Roots: []string{skillsRoot}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kit.Close() })
	m, err := scripted.New(&scripted.Script{Steps: steps}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(kit, "assistant", m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a, m
}

// The shorthands of tracingtest the tests use.
type spanWant = tracingtest.Want

var (
	str  = tracingtest.Str
	num  = tracingtest.Int
	flag = tracingtest.Bool
)

func TestRunSpans(t *testing.T) {
	usage1 := &model.Usage{PromptTokens: 900, CompletionTokens: 12}
	usage2 := &model.Usage{PromptTokens: 1500, CompletionTokens: 9, CachedPromptTokens: 900}
	loadThenAnswer := []scripted.Step{
		{Calls: []scripted.Call{call("call_1", "skill", `{"name":"csv-stats"}`)}, Usage: usage1},
		{Text: "Run scripts/stats.py.", Usage: usage2},
	}
	chat := func(step int, u *model.Usage, finish string) spanWant {
		return spanWant{Name: "chat scripted", Parent: "invoke_agent assistant", Attrs: map[attribute.Key]attribute.Value{
			"gen_ai.operation.name":                str("chat"),
			"gen_ai.request.model":                 str("scripted"),
			"gen_ai.response.model":                str("scripted"),
			"gen_ai.response.finish_reasons":       attribute.StringSliceValue([]string{finish}),
			"gen_ai.usage.input_tokens":            num(u.PromptTokens),
			"gen_ai.usage.output_tokens":           num(u.CompletionTokens),
			"gen_ai.usage.cache_read.input_tokens": num(u.CachedPromptTokens),
			"gen_ai.agent.name":                    str("assistant"),
			"skillkit.agent.step":                  num(step),
		}}
	}
	tool := func(name, id string, failed bool) spanWant {
		return spanWant{Name: "execute_tool " + name, Parent: "invoke_agent assistant", Failed: failed, Attrs: map[attribute.Key]attribute.Value{
			"gen_ai.operation.name": str("execute_tool"),
			"gen_ai.tool.name":      str(name),
			"gen_ai.tool.call.id":   str(id),
			"skillkit.tool.error":   flag(failed),
		}}
	}
	runSpan := func(steps int, failed bool, extra map[attribute.Key]attribute.Value) spanWant {
		attrs := map[attribute.Key]attribute.Value{
			"gen_ai.operation.name": str("invoke_agent"),
			"gen_ai.agent.name":     str("assistant"),
			"skillkit.agent.steps":  num(steps),
		}
		for k, v := range extra {
			attrs[k] = v
		}
		return spanWant{Name: "invoke_agent assistant", Attrs: attrs, Failed: failed}
	}
	total := map[attribute.Key]attribute.Value{
		"gen_ai.usage.input_tokens":            num(2400),
		"gen_ai.usage.output_tokens":           num(21),
		"gen_ai.usage.cache_read.input_tokens": num(900),
	}
	for _, tc := range []struct {
		name    string
		opts    agent.Options
		steps   []scripted.Step
		wantErr string
		want    []spanWant
	}{
		{"a skill, then the answer", agent.Options{}, loadThenAnswer, "", []spanWant{
			chat(1, usage1, "tool_calls"), tool("skill", "call_1", false), chat(2, usage2, "stop"), runSpan(2, false, total),
		}},
		{"streamed", agent.Options{Stream: true}, loadThenAnswer, "", []spanWant{
			chat(1, usage1, "tool_calls"), tool("skill", "call_1", false), chat(2, usage2, "stop"), runSpan(2, false, total),
		}},
		{"a failing model", agent.Options{}, []scripted.Step{
			{Calls: []scripted.Call{call("call_1", "skill", `{"name":"csv-stats"}`)}, Usage: usage1},
			{Error: &scripted.Error{Status: 429, Message: "slow down"}},
		}, "step 2: the model", []spanWant{
			chat(1, usage1, "tool_calls"), tool("skill", "call_1", false),
			{Name: "chat scripted", Parent: "invoke_agent assistant", Failed: true, Attrs: map[attribute.Key]attribute.Value{
				"error.type": str("429"), "skillkit.agent.step": num(2),
			}},
			runSpan(2, true, nil),
		}},
		{"tool results that are errors", agent.Options{}, []scripted.Step{
			{Calls: []scripted.Call{call("c1", "no_such_tool", `{}`), call("c2", "skill", `{"name":"csv-stats"}`)}},
			{Text: "done"},
		}, "", []spanWant{
			chat(1, &model.Usage{}, "tool_calls"), tool("no_such_tool", "c1", true), tool("skill", "c2", false),
			chat(2, &model.Usage{}, "stop"), runSpan(2, false, nil),
		}},
		{"the step limit", agent.Options{MaxSteps: 1}, []scripted.Step{
			{Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}, Usage: usage1},
		}, "the step limit was reached", []spanWant{
			chat(1, usage1, "tool_calls"), tool("skill", "c1", false), runSpan(1, true, nil),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, rec := tracingtest.Recorder(t)
			tc.opts.TracerProvider = tp
			a, _ := scriptedAgent(t, &tc.opts, tc.steps...)
			evs, err := run(a.Run(t.Context(), "", "How do I summarise a CSV?"))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			want := slices.Clone(tc.want)
			want[len(want)-1].Attrs["gen_ai.conversation.id"] = str(evs[0].SessionID)
			spans := rec.Ended()
			// The calls of one answer run in parallel and may end in any
			// order: compare each run of tool spans by name.
			for i := 0; i < len(spans); {
				j := i
				for j < len(spans) && strings.HasPrefix(spans[j].Name(), "execute_tool ") {
					j++
				}
				slices.SortStableFunc(spans[i:j], func(a, b sdktrace.ReadOnlySpan) int { return strings.Compare(a.Name(), b.Name()) })
				i = j + 1
			}
			tracingtest.Check(t, spans, want)
			tracingtest.NoContent(t, spans, "summarise", "Run scripts/stats.py", csvBody, `"csv-stats"`)
			// The failure is recorded on the spans it ended, as an
			// exception event with the error's text.
			if tc.wantErr != "" {
				last := spans[len(spans)-1]
				if ev := last.Events(); len(ev) != 1 || ev[0].Name != "exception" || last.Status().Description != err.Error() {
					t.Errorf("run span events %+v, status %q; want the run's error", ev, last.Status().Description)
				}
			}
		})
	}
}

// TestRunSpanIsAChild checks that the run's span is a child of the span
// in the context the run is given, and that a caller who stops ranging
// ends it without a failure.
func TestRunSpanIsAChild(t *testing.T) {
	tp, rec := tracingtest.Recorder(t)
	a, _ := scriptedAgent(t, &agent.Options{TracerProvider: tp},
		scripted.Step{Calls: []scripted.Call{call("c1", "skill", `{"name":"csv-stats"}`)}},
		scripted.Step{Text: "never asked"})
	ctx, outer := tp.Tracer("test").Start(t.Context(), "request")
	for ev, err := range a.Run(ctx, "", "hello") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agent.KindResponse {
			break
		}
	}
	outer.End()
	tracingtest.Check(t, rec.Ended(), []spanWant{
		{Name: "chat scripted", Parent: "invoke_agent assistant"},
		{Name: "execute_tool skill", Parent: "invoke_agent assistant"},
		{Name: "invoke_agent assistant", Parent: "request", Attrs: map[attribute.Key]attribute.Value{"skillkit.agent.stopped": flag(true)}},
		{Name: "request"},
	})
}

// callLog records the model callbacks' calls, in order.
type callLog struct {
	entries []string
}

func (l *callLog) add(format string, args ...any) {
	l.entries = append(l.entries, fmt.Sprintf(format, args...))
}

// loaded lists the skills loaded for the call's agent, from the state
// the callback reads.
func loaded(ctx context.Context, c agent.ModelCall) ([]string, error) {
	st, err := c.State(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for k, v := range st {
		if name, ok := strings.CutPrefix(k, loadstate.LoadedPrefix(c.Agent)); ok && v != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

func TestModelCallbacks(t *testing.T) {
	errBefore := errors.New("no more requests today")
	errAfter := errors.New("the answer is not allowed")
	loadThenAnswer := []scripted.Step{
		{Calls: []scripted.Call{call("c1", "skill_load", `{"skill":"csv-stats"}`)}},
		{Expect: &scripted.Expect{CacheKey: "key-2"}, Text: "done"},
	}
	for _, tc := range []struct {
		name        string
		stream      bool
		steps       []scripted.Step
		beforeFails int // the step whose BeforeModel fails; 0: none
		afterFails  int // the step whose AfterModel fails; 0: none
		wantErr     error
		wantErrText string
		wantPlayed  int
		wantLog     []string
		wantChats   int
	}{
		{name: "each step in order", steps: loadThenAnswer, wantPlayed: 2, wantChats: 2, wantLog: []string{
			"before 1 loaded []", "after 1 calls 1 err <nil>",
			"before 2 loaded [csv-stats]", "after 2 text done err <nil>",
		}},
		{name: "streamed", stream: true, steps: loadThenAnswer, wantPlayed: 2, wantChats: 2, wantLog: []string{
			"before 1 loaded []", "after 1 calls 1 err <nil>",
			"before 2 loaded [csv-stats]", "after 2 text done err <nil>",
		}},
		{name: "before fails at the first step", steps: loadThenAnswer, beforeFails: 1, wantErr: errBefore,
			wantErrText: `agent "assistant": step 1: Options.BeforeModel: no more requests today`,
			wantPlayed:  0, wantChats: 0, wantLog: []string{"before 1 loaded []"}},
		{name: "before fails at the second step", steps: loadThenAnswer, beforeFails: 2, wantErr: errBefore,
			wantErrText: `agent "assistant": step 2: Options.BeforeModel: no more requests today`,
			wantPlayed:  1, wantChats: 1, wantLog: []string{
				"before 1 loaded []", "after 1 calls 1 err <nil>", "before 2 loaded [csv-stats]",
			}},
		{name: "after fails", steps: loadThenAnswer, afterFails: 1, wantErr: errAfter,
			wantErrText: `agent "assistant": step 1: Options.AfterModel: the answer is not allowed`,
			wantPlayed:  1, wantChats: 1, wantLog: []string{"before 1 loaded []", "after 1 calls 1 err <nil>"}},
		{name: "after sees the model's error", steps: []scripted.Step{{Error: &scripted.Error{Status: 500, Message: "down"}}},
			wantErr: nil, wantErrText: "step 1: the model", wantPlayed: 1, wantChats: 1, wantLog: []string{
				"before 1 loaded []", "after 1 no answer err 500",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, rec := tracingtest.Recorder(t)
			var log callLog
			opts := &agent.Options{Stream: tc.stream, TracerProvider: tp}
			opts.BeforeModel = func(ctx context.Context, c agent.ModelCall) error {
				if c.Agent != "assistant" || c.SessionID == "" {
					t.Errorf("ModelCall %+v", c)
				}
				names, err := loaded(ctx, c)
				if err != nil {
					return err
				}
				if len(c.Request.Messages) == 0 || len(c.Request.Tools) == 0 {
					t.Errorf("step %d: the request has no messages or tools", c.Step)
				}
				log.add("before %d loaded %v", c.Step, names)
				// The request goes out as the callback leaves it.
				c.Request.CacheKey = fmt.Sprintf("key-%d", c.Step)
				if c.Step == tc.beforeFails {
					return errBefore
				}
				return nil
			}
			opts.AfterModel = func(ctx context.Context, c agent.ModelCall, resp *model.Response, err error) error {
				switch {
				case err != nil:
					var api *model.APIError
					if !errors.As(err, &api) || resp != nil {
						t.Errorf("AfterModel got %v, %+v", err, resp)
					}
					log.add("after %d no answer err %d", c.Step, api.Status)
				case len(resp.Calls) > 0:
					log.add("after %d calls %d err %v", c.Step, len(resp.Calls), err)
				default:
					log.add("after %d text %s err %v", c.Step, resp.Text, err)
				}
				if c.Step == tc.afterFails {
					return errAfter
				}
				return nil
			}
			a, m := scriptedAgent(t, opts, tc.steps...)
			evs, err := run(a.Run(t.Context(), "", "go"))
			switch {
			case tc.wantErrText == "" && err != nil:
				t.Fatal(err)
			case tc.wantErrText != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrText)):
				t.Fatalf("err %v, want %q", err, tc.wantErrText)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("err %v does not wrap %v", err, tc.wantErr)
			}
			if !slices.Equal(log.entries, tc.wantLog) {
				t.Errorf("callbacks:\n%s\nwant:\n%s", strings.Join(log.entries, "\n"), strings.Join(tc.wantLog, "\n"))
			}
			if n := m.Played(); n != tc.wantPlayed {
				t.Errorf("the model was asked %d times, want %d", n, tc.wantPlayed)
			}
			var chats int
			for _, s := range rec.Ended() {
				if strings.HasPrefix(s.Name(), "chat") {
					chats++
				}
			}
			if chats != tc.wantChats {
				t.Errorf("%d chat spans, want %d", chats, tc.wantChats)
			}
			// An answer AfterModel refused is not recorded.
			if tc.afterFails != 0 {
				for _, ev := range evs {
					if ev.Kind == agent.KindResponse {
						t.Errorf("a refused answer was reported: %+v", ev)
					}
				}
			}
		})
	}
}

func TestModelCallStateWithoutARun(t *testing.T) {
	if _, err := (agent.ModelCall{}).State(t.Context()); err == nil || !strings.Contains(err.Error(), "not made by a run") {
		t.Errorf("err %v", err)
	}
}
