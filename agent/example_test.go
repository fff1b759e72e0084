package agent_test

import (
	"context"
	"fmt"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
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
