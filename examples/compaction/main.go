// Command compaction shows an agent keeping its requests within a token
// budget (agent.Options.Compaction). In turn 1 the model answers with a
// long inventory of an API's endpoints. In turn 2 it loads a skill, and
// the request after the load would exceed the budget, so a separate
// summarising model first condenses the history before the new user
// message: the requests from then on carry the summary instead of turn 1,
// and still hold the skill loaded in turn 2. Both models are scripted, so
// no key and no network are needed. From the repository root:
//
//	go run ./examples/compaction
package main

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/examples/internal/show"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
)

const (
	skillName = "api-style-guide"
	// maxTokens is the request budget: turn 2's first request, with turn
	// 1 verbatim, fits; once the skill's instructions and reference are
	// added, it does not.
	maxTokens = 2800
	// keepTokens is how much of the newest history stays verbatim: turn
	// 2 so far, not turn 1's long answer.
	keepTokens = 200
)

func main() {
	ctx := context.Background()
	kit := must(skillkit.New(ctx, &skillkit.Options{Roots: []string{"examples/skills"}}))
	defer kit.Close()
	instructions := strings.TrimSpace(must(kit.Skills(ctx).Body(ctx, skillName)))
	summarizer := must(scripted.New(summaryScript, &scripted.Options{Name: "scripted-summarizer"}))
	a := must(agent.New(kit, "assistant", must(scripted.New(script, nil)), &agent.Options{
		Compaction: &agent.Compaction{MaxTokens: maxTokens, KeepTokens: keepTokens, Model: summarizer},
	}))
	fmt.Printf("budget: %d tokens per request, %d kept verbatim\n", maxTokens, keepTokens)

	var id string
	for turn, message := range []string{
		"List the endpoints of the invoices API draft with their error responses.",
		"Check those error responses against our house rules.",
	} {
		fmt.Printf("turn %d: %s\n", turn+1, message)
		for ev, err := range a.Run(ctx, id, message) {
			if err != nil {
				log.Fatal(err)
			}
			id = ev.SessionID
			switch ev.Kind {
			case agent.KindCompaction:
				fmt.Printf("  compaction: %d → %d tokens\n", ev.Tokens[0], ev.Tokens[1])
				fmt.Printf("  summary: %s\n", ev.Text)
			case agent.KindResponse:
				req := ev.Request
				fmt.Printf("  request %d: opens with the summary: %s, turn 1's answer: %s, %s: %s\n", ev.Step,
					show.YesNo(strings.HasPrefix(req.Messages[0].Content, assembly.SummaryHeader+"\n")),
					show.YesNo(holds(req, inventory[:60])), skillName, show.YesNo(holds(req, instructions)))
			case agent.KindAnswer:
				fmt.Printf("  answer: %s\n", show.Line(ev.Text, 80))
			}
		}
	}
}

// inventory is turn 1's long answer: one line per endpoint.
var inventory = func() string {
	var b strings.Builder
	b.WriteString("The draft has these endpoints and error responses:\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d. GET /invoices/{id}/lines/%d: 200 with the line; when it is missing, 200 {\"ok\": false, \"error\": \"not found\"}.\n", i+1, i+1)
	}
	return b.String()
}()

// script is the assistant's model: the inventory in turn 1; in turn 2 it
// loads the skill with its errors reference, lists the skill's documents
// and answers.
var script = &scripted.Script{Steps: []scripted.Step{
	{Text: inventory},
	{Calls: []scripted.Call{{ID: "call_1", Name: "skill_load", Arguments: `{"skill":"` + skillName + `","docs":["references/errors.md"]}`}}},
	{Calls: []scripted.Call{{ID: "call_2", Name: "skill_list_docs", Arguments: `{"skill":"` + skillName + `"}`}}},
	{Text: "All 40 endpoints break references/errors.md: a missing line is 404 with an application/problem+json body, not 200."},
}}

// summaryScript is the summarising model's one answer; it expects the
// summarising request, with turn 1 rendered as a transcript.
var summaryScript = &scripted.Script{Steps: []scripted.Step{{
	Expect: &scripted.Expect{LastContains: "Summarise this conversation"},
	Text:   "The user asked for the endpoints of the invoices API draft. The assistant listed 40 endpoints, GET /invoices/{id}/lines/1 to 40, each answering a missing line with 200 {\"ok\": false}.",
}}}

// holds reports whether a message of the request contains s.
func holds(req *model.Request, s string) bool {
	return slices.ContainsFunc(req.Messages, func(m assembly.Message) bool { return strings.Contains(m.Content, s) })
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
