package conversation_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
)

// Record a model's turn: a user message, the model's answer with a
// skill_load call, then the next request, whose tool result carries the
// loaded instructions.
func Example() {
	ctx := context.Background()
	reg, done := exampleSkill(ctx, "greet", "---\nname: greet\ndescription: Greets.\n---\nSay hello.\n")
	defer done()

	store := session.NewMemoryStore(nil)
	s, _ := store.Create(ctx, "", nil)
	c, err := conversation.Open(ctx, store, s.ID, "main", &conversation.Options{
		Skills: func(context.Context) *registry.Snapshot { return reg.Snapshot() },
		Tools:  tools.Static{tools.Load()},
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	_, _ = c.User(ctx, "hi")
	// The model answers with text and a call, with the provider's ID.
	step, err := c.Respond(ctx, conversation.Assistant{Text: "Loading the skill.",
		Calls: []session.ToolCall{{ID: "call_abc", Name: "skill_load", Arguments: `{"skill":"greet"}`}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(step.Results[0].Text, step.Events[1].ToolCallID)
	req, _ := c.Request(ctx)
	fmt.Printf("%q\n", req.Messages[len(req.Messages)-1].Content)
	// Output:
	// loaded: greet call_abc
	// "loaded: greet\n\n[Loaded] greet\n\nSay hello."
}

// Tool activation: the tool set "weather" is offered only once the model
// has loaded the skill forecast, from the next request on.
func ExampleActivation() {
	ctx := context.Background()
	reg, done := exampleSkill(ctx, "forecast", "---\nname: forecast\ndescription: Forecasts.\n---\nCall weather_today.\n")
	defer done()

	today := tools.New("today", "Today's weather.", func(context.Context, tools.Call, struct{}) (tools.Result, error) {
		return tools.Result{Text: "sunny"}, nil
	})
	store := session.NewMemoryStore(nil)
	s, _ := store.Create(ctx, "", nil)
	c, err := conversation.Open(ctx, store, s.ID, "main", &conversation.Options{
		Skills: func(context.Context) *registry.Snapshot { return reg.Snapshot() },
		Tools:  tools.Static{tools.Load()},
		Activation: &conversation.Activation{
			Sets:  []tools.ToolSet{{Name: "weather", Tools: []tools.Tool{today}}},
			Rules: []conversation.ActivationRule{{Skill: "forecast", Sets: []string{"weather"}}},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	names := func() (out []string) {
		ts, _ := c.Tools(ctx)
		for _, t := range ts {
			out = append(out, t.Name)
		}
		return out
	}
	_, _ = c.User(ctx, "weather?")
	fmt.Println(names())
	_, _ = c.Respond(ctx, conversation.Assistant{Calls: []session.ToolCall{{ID: "1", Name: "skill_load", Arguments: `{"skill":"forecast"}`}}})
	fmt.Println(names())
	step, _ := c.Respond(ctx, conversation.Assistant{Calls: []session.ToolCall{{ID: "2", Name: "weather_today", Arguments: `{}`}}})
	fmt.Println(step.Results[0].Text)
	// Output:
	// [skill_load]
	// [skill_load weather_today]
	// sunny
}

// exampleSkill writes one skill into a temporary folder and returns a
// registry of it, and a function that removes the folder.
func exampleSkill(ctx context.Context, name, skillMD string) (*registry.Registry, func()) {
	root, _ := os.MkdirTemp("", "skills")
	_ = os.MkdirAll(filepath.Join(root, name), 0o755)
	_ = os.WriteFile(filepath.Join(root, name, "SKILL.md"), []byte(skillMD), 0o644)
	reg, _ := registry.New(ctx, []source.Source{source.FS(os.DirFS(root), "project", 0)}, nil)
	return reg, func() { os.RemoveAll(root) }
}
