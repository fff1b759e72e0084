// Command subagents shows two agents of one kit working in one session,
// each with its own instructions and its own skills: what the researcher
// loads never enters the coordinator's requests. First the coordinator
// calls the researcher as a tool (AsTool): the researcher loads
// api-style-guide and answers, and the coordinator answers with what it
// got. Then a coordinator with the researcher as a sub-agent hands it the
// user's turn (transfer_to_agent), and the run's events come from both
// agents. The models are scripted, so no key and no network are needed.
// From the repository root:
//
//	go run ./examples/subagents
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/examples/internal/show"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

const (
	skillName = "api-style-guide"
	question  = "What should the error responses of our API look like?"
	// findings is the researcher's answer, which the coordinator passes on.
	findings = "One error shape everywhere, with the right status code (references/errors.md)."
)

func main() {
	ctx := context.Background()
	kit := must(skillkit.New(ctx, &skillkit.Options{
		Roots: []string{"examples/skills"},
		Agents: map[string]skillkit.AgentOptions{
			"coordinator": {System: "You answer the user. Ask the researcher about house rules instead of reading skills yourself."},
			"researcher":  {System: "You look up house rules in the skills and report them in one sentence."},
		},
	}))
	defer kit.Close()
	instructions := strings.TrimSpace(must(kit.Skills(ctx).Body(ctx, skillName)))
	holds := func(req *model.Request) bool {
		return slices.ContainsFunc(req.Messages, func(m assembly.Message) bool { return strings.Contains(m.Content, instructions) })
	}

	// A run that calls the researcher as a tool yields only the caller's
	// events, so the researcher notes its own requests, by session. It
	// runs in the caller's tool goroutines, which may be several at once.
	var mu sync.Mutex
	researcherSaw := map[string][]bool{}
	researcher := must(agent.New(kit, "researcher", must(scripted.New(researcherScript, nil)), &agent.Options{
		BeforeModel: func(_ context.Context, call agent.ModelCall) error {
			mu.Lock()
			defer mu.Unlock()
			researcherSaw[call.SessionID] = append(researcherSaw[call.SessionID], holds(call.Request))
			return nil
		},
	}))

	fmt.Println("1. The coordinator calls the researcher as a tool")
	tool := must(researcher.AsTool("Looks up our house rules (API design and more) and reports what they say."))
	coordinator := must(agent.New(kit, "coordinator", must(scripted.New(coordinatorScript, nil)), &agent.Options{Tools: []tools.Tool{tool}}))
	var id string
	var coordinatorSaw []bool
	for ev, err := range coordinator.Run(ctx, "", question) {
		if err != nil {
			log.Fatal(err)
		}
		id = ev.SessionID
		switch ev.Kind {
		case agent.KindResponse:
			coordinatorSaw = append(coordinatorSaw, holds(ev.Request))
		case agent.KindAnswer:
			fmt.Printf("answer: %s\n", ev.Text)
		}
	}
	fmt.Printf("%s's instructions in the agent's requests:\n", skillName)
	fmt.Printf("  coordinator: %s\n", requests(coordinatorSaw))
	mu.Lock()
	fmt.Printf("  researcher:  %s\n", requests(researcherSaw[id]))
	mu.Unlock()
	// Both turns are recorded in the one session, each under its agent.
	// The coordinator's answer and the tool's result are stored in one
	// step once the tool returns, so they follow the researcher's turn.
	fmt.Println("the session's conversation, by agent:")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, ev := range must(kit.Store().Get(ctx, id)).Events {
		if ev.Kind == session.KindUser || ev.Kind == session.KindAssistant || ev.Kind == session.KindTool {
			fmt.Fprintf(w, "  %s\t%s\t%s\n", ev.Agent, ev.Kind, describe(ev))
		}
	}
	w.Flush()

	fmt.Println()
	fmt.Println("2. The coordinator hands the turn to the researcher")
	handing := must(agent.New(kit, "coordinator", must(scripted.New(handOffScript, nil)), &agent.Options{SubAgents: []*agent.Agent{researcher}}))
	w = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for ev, err := range handing.Run(ctx, "", question) {
		if err != nil {
			log.Fatal(err)
		}
		var what string
		switch ev.Kind {
		case agent.KindUser, agent.KindTransfer, agent.KindAnswer:
			what = ev.Text
		case agent.KindResponse:
			what = fmt.Sprintf("step %d, %s's instructions in the request: %s", ev.Step, skillName, show.YesNo(holds(ev.Request)))
		case agent.KindToolResult:
			what = fmt.Sprintf("%s → %s", ev.Call.Name, show.Line(ev.Result.Text, 50))
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\n", ev.Agent, ev.Kind, what)
	}
	w.Flush()
}

// researcherTurn loads the skill and answers from it; its second step
// fails the run unless the request holds the skill's instructions.
var researcherTurn = []scripted.Step{
	{
		Expect: &scripted.Expect{LastRole: "user"},
		Calls:  []scripted.Call{{ID: "r1", Name: "skill_load", Arguments: `{"skill":"` + skillName + `"}`}},
	},
	{
		Expect: &scripted.Expect{ToolResults: []string{"r1"}, LastContains: "These are the rules our APIs follow."},
		Text:   findings,
	},
}

// researcherScript plays the researcher's turn in each part.
var researcherScript = &scripted.Script{Steps: slices.Concat(researcherTurn, researcherTurn)}

// coordinatorScript calls the researcher and passes its answer on; the
// second step expects that answer as the tool's result.
var coordinatorScript = &scripted.Script{Steps: []scripted.Step{
	{
		Expect: &scripted.Expect{ToolsInclude: []string{"researcher"}},
		Calls:  []scripted.Call{{ID: "c1", Name: "researcher", Arguments: `{"request":"Find our rules for error responses."}`}},
	},
	{
		Expect: &scripted.Expect{ToolResults: []string{"c1"}, LastContains: findings},
		Text:   "Our API style guide says: " + findings,
	},
}}

// handOffScript hands the turn over; the researcher's answer ends the run.
var handOffScript = &scripted.Script{Steps: []scripted.Step{{
	Expect: &scripted.Expect{ToolsInclude: []string{agent.TransferName}},
	Calls:  []scripted.Call{{ID: "t1", Name: agent.TransferName, Arguments: `{"agent_name":"researcher"}`}},
}}}

// requests lists, request by request, whether each held the instructions.
func requests(saw []bool) string {
	parts := make([]string, len(saw))
	for i, b := range saw {
		parts[i] = fmt.Sprintf("request %d %s", i+1, show.YesNo(b))
	}
	return strings.Join(parts, ", ")
}

// describe is a stored event on one line: its text or its calls.
func describe(ev session.Event) string {
	if len(ev.ToolCalls) == 0 {
		return show.Line(ev.Text, 80)
	}
	calls := make([]string, len(ev.ToolCalls))
	for i, c := range ev.ToolCalls {
		calls[i] = c.Name + " " + c.Arguments
	}
	return "calls " + show.Line(strings.Join(calls, ", "), 74)
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
