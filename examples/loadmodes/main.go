// Command loadmodes shows the three load lifetimes side by side: how long
// a loaded skill's instructions stay in the model's requests. Three agents
// of one kit, differing only in AgentOptions.Lifetime, each play the same
// scripted two-turn conversation: in turn 1 the model loads
// api-style-guide, lists its documents and answers; in turn 2 it answers a
// follow-up without loading anything. A small wrapper around the model
// notes whether each request it receives holds the instructions. No key
// and no network are needed. From the repository root:
//
//	go run ./examples/loadmodes
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/examples/internal/show"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model"
	"github.com/skillkit/skillkit/model/scripted"
)

const skillName = "api-style-guide"

func main() {
	ctx := context.Background()
	lifetimes := []loadstate.Lifetime{loadstate.Once, loadstate.Turn, loadstate.Session}
	agents := map[string]skillkit.AgentOptions{}
	for _, l := range lifetimes {
		agents[l.String()] = skillkit.AgentOptions{Lifetime: l}
	}
	kit := must(skillkit.New(ctx, &skillkit.Options{Roots: []string{"examples/skills"}, Agents: agents}))
	defer kit.Close()
	body := must(kit.Skills(ctx).Body(ctx, skillName))

	fmt.Printf("Are %s's instructions in the request? (scripted model)\n", skillName)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "lifetime\tturn 1, request 2 (after the load)\tturn 1, request 3\tturn 2, request 1")
	for _, l := range lifetimes {
		m := &recorder{Model: must(scripted.New(script, nil)), instructions: strings.TrimSpace(body)}
		a := must(agent.New(kit, l.String(), m, nil))
		id := run(ctx, a, "", "Review the error responses of my API.")
		run(ctx, a, id, "And how should the list endpoints page?")
		// m.seen[0] is the request before the load; turn 2 starts at 3.
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", l, show.YesNo(m.seen[1]), show.YesNo(m.seen[2]), show.YesNo(m.seen[3]))
	}
	w.Flush()
}

// script is the conversation every agent plays: three requests in turn 1,
// one in turn 2.
var script = &scripted.Script{Steps: []scripted.Step{
	{Calls: []scripted.Call{{ID: "call_1", Name: "skill_load", Arguments: `{"skill":"` + skillName + `"}`}}},
	{Calls: []scripted.Call{{ID: "call_2", Name: "skill_list_docs", Arguments: `{"skill":"` + skillName + `"}`}}},
	{Text: "Use one error shape; see references/errors.md."},
	{Text: "Page with opaque cursors; see references/pagination.md."},
}}

// run runs one turn in the session id ("" for a new one) and returns the
// session's ID.
func run(ctx context.Context, a *agent.Agent, id, message string) string {
	for ev, err := range a.Run(ctx, id, message) {
		if err != nil {
			log.Fatal(err)
		}
		id = ev.SessionID
	}
	return id
}

// recorder is a model.Model that passes each request on to its model,
// noting first whether the skill's instructions are in it. The agent asks
// for whole answers (Generate) unless told to stream.
type recorder struct {
	model.Model
	instructions string
	seen         []bool
}

func (r *recorder) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r.seen = append(r.seen, slices.ContainsFunc(req.Messages, func(m assembly.Message) bool {
		return strings.Contains(m.Content, r.instructions)
	}))
	return r.Model.Generate(ctx, req)
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
