// Command quickstart is the smallest complete agent: a kit over the
// bundled skills, a model, and one turn of agent.Run printed event by
// event. The model is scripted — it replays two answers, loading the
// api-style-guide skill and then answering — so no key and no network are
// needed. From the repository root:
//
//	go run ./examples/quickstart
//
// For a real model, pass openai.New(openai.FromEnv(os.Getenv)) of package
// model/openai instead of the scripted one.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/examples/internal/show"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
)

func main() {
	ctx := context.Background()
	kit := must(skillkit.New(ctx, &skillkit.Options{Roots: []string{"examples/skills"}}))
	defer kit.Close()
	m := must(scripted.New(script, nil))
	a := must(agent.New(kit, "assistant", m, nil))
	fmt.Printf("model: %s (replays a script: no key, no network)\n", m.Name())

	for ev, err := range a.Run(ctx, "", "How should my API report errors?") {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case agent.KindUser:
			fmt.Printf("%s: %s\n", ev.Kind, ev.Text)
		case agent.KindResponse:
			fmt.Printf("%s: step %d, model %s, %d tool call(s)\n", ev.Kind, ev.Step, ev.Response.Model, len(ev.Response.Calls))
		case agent.KindToolResult:
			// The session stores a load as a short stub; the skill's
			// instructions are put into the next request instead.
			fmt.Printf("%s: %s %s → %s\n", ev.Kind, ev.Call.Name, ev.Call.Arguments, show.Line(ev.Result.Text, 60))
		case agent.KindAnswer:
			fmt.Printf("%s: %s\n", ev.Kind, ev.Text)
			fmt.Printf("usage: %d steps, prompt %d tokens (cached %d), completion %d\n",
				ev.Step, ev.Usage.PromptTokens, ev.Usage.CachedPromptTokens, ev.Usage.CompletionTokens)
		}
	}
}

// script is what the model answers to each request, with the token usage a
// provider would report. The expectations make the scripted model fail
// the run if a request is not what it should be: the second must carry
// the loaded skill's instructions.
var script = &scripted.Script{Steps: []scripted.Step{
	{
		Expect: &scripted.Expect{ToolsInclude: []string{"skill_load"}, LastRole: "user"},
		Calls:  []scripted.Call{{ID: "call_1", Name: "skill_load", Arguments: `{"skill":"api-style-guide"}`}},
		Usage:  &model.Usage{PromptTokens: 850, CompletionTokens: 14},
	},
	{
		Expect: &scripted.Expect{ToolResults: []string{"call_1"}, LastContains: "These are the rules our APIs follow."},
		Text:   "Follow references/errors.md of the API style guide: one error shape, the right status codes.",
		Usage:  &model.Usage{PromptTokens: 1120, CompletionTokens: 23, CachedPromptTokens: 850},
	},
}}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
