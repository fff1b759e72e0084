package agent_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// One turn of an agent over the bundled skills, answered by a scripted
// model: the model loads a skill, then answers; every step is recorded
// and reported as it happens, with the tokens it cost.
func Example() {
	ctx := context.Background()
	kit, err := skillkit.New(ctx, &skillkit.Options{
		Roots: []string{"../examples/skills"},
		Agent: skillkit.AgentOptions{System: "You help with data."},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer kit.Close()
	m, err := scripted.New(&scripted.Script{Steps: []scripted.Step{
		{Calls: []scripted.Call{{ID: "call_1", Name: "skill", Arguments: `{"name":"csv-stats"}`}},
			Usage: &model.Usage{PromptTokens: 900, CompletionTokens: 12}},
		{Text: "Run scripts/stats.py on the file.",
			Usage: &model.Usage{PromptTokens: 1500, CompletionTokens: 9, CachedPromptTokens: 900}},
	}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := agent.New(kit, "assistant", m, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev, err := range a.Run(ctx, "", "How do I summarise a CSV?") {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind {
		case agent.KindUser:
			fmt.Printf("user: %s\n", ev.Text)
		case agent.KindResponse:
			fmt.Printf("step %d: %d calls, %d prompt tokens (%d cached)\n", ev.Step, len(ev.Response.Calls), ev.Usage.PromptTokens, ev.Usage.CachedPromptTokens)
		case agent.KindToolResult:
			fmt.Printf("  %s %s → loaded %s\n", ev.Call.Name, ev.Call.Arguments, ev.Loads[0].Skill)
		case agent.KindAnswer:
			fmt.Printf("answer after %d steps: %s\n", ev.Step, ev.Text)
			fmt.Printf("tokens: prompt %d (cached %d) completion %d\n", ev.Usage.PromptTokens, ev.Usage.CachedPromptTokens, ev.Usage.CompletionTokens)
		}
	}
	// Output:
	// user: How do I summarise a CSV?
	// step 1: 1 calls, 900 prompt tokens (0 cached)
	//   skill {"name":"csv-stats"} → loaded csv-stats
	// step 2: 0 calls, 1500 prompt tokens (900 cached)
	// answer after 2 steps: Run scripts/stats.py on the file.
	// tokens: prompt 2400 (cached 900) completion 21
}

// Print the skills loaded for the agent before each model request: the
// callback reads the session's state and lists the keys under the
// agent's loaded prefix.
func ExampleOptions_beforeModel() {
	opts := &agent.Options{
		BeforeModel: func(ctx context.Context, call agent.ModelCall) error {
			state, err := call.State(ctx)
			if err != nil {
				return err
			}
			var names []string
			for key, v := range state {
				if name, ok := strings.CutPrefix(key, loadstate.LoadedPrefix(call.Agent)); ok && v != "" {
					names = append(names, name)
				}
			}
			slices.Sort(names)
			fmt.Printf("step %d: loaded %v\n", call.Step, names)
			return nil
		},
	}
	answer, err := runScripted(context.Background(), opts,
		scripted.Step{Calls: []scripted.Call{{ID: "call_1", Name: "skill_load", Arguments: `{"skill":"csv-stats"}`}}},
		scripted.Step{Text: "Run scripts/stats.py on the file."})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("answer:", answer)
	// Output:
	// step 1: loaded []
	// step 2: loaded [csv-stats]
	// answer: Run scripts/stats.py on the file.
}

// A run's spans, recorded by an in-memory exporter: the run, and under it
// each model request and each tool result. An application installs its
// own provider (an OTLP exporter, say) the same way, or globally with
// otel.SetTracerProvider and no Options.TracerProvider.
func ExampleOptions_tracerProvider() {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(ctx)
	_, err := runScripted(ctx, &agent.Options{TracerProvider: tp},
		scripted.Step{Calls: []scripted.Call{{ID: "call_1", Name: "skill", Arguments: `{"name":"csv-stats"}`}},
			Usage: &model.Usage{PromptTokens: 900, CompletionTokens: 12}},
		scripted.Step{Text: "Run scripts/stats.py on the file.",
			Usage: &model.Usage{PromptTokens: 1500, CompletionTokens: 9, CachedPromptTokens: 900}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range exp.GetSpans() {
		var cached int64
		for _, kv := range s.Attributes {
			if kv.Key == "gen_ai.usage.cache_read.input_tokens" {
				cached = kv.Value.AsInt64()
			}
		}
		fmt.Printf("%s (cached input tokens: %d)\n", s.Name, cached)
	}
	// Output:
	// chat scripted (cached input tokens: 0)
	// execute_tool skill (cached input tokens: 0)
	// chat scripted (cached input tokens: 900)
	// invoke_agent assistant (cached input tokens: 900)
}

// runScripted runs one turn of the agent "assistant" of a kit on the
// bundled skills, configured by opts and answered by a model replaying
// steps, as Example does, and returns the answer.
func runScripted(ctx context.Context, opts *agent.Options, steps ...scripted.Step) (string, error) {
	kit, err := skillkit.New(ctx, &skillkit.Options{Roots: []string{"../examples/skills"}})
	if err != nil {
		return "", err
	}
	defer kit.Close()
	m, err := scripted.New(&scripted.Script{Steps: steps}, nil)
	if err != nil {
		return "", err
	}
	a, err := agent.New(kit, "assistant", m, opts)
	if err != nil {
		return "", err
	}
	for ev, err := range a.Run(ctx, "", "How do I summarise a CSV?") {
		if err != nil {
			return "", err
		}
		if ev.Kind == agent.KindAnswer {
			return ev.Text, nil
		}
	}
	return "", errors.New("the run ended without an answer")
}
