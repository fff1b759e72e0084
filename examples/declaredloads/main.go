// Command declaredloads shows declared loads: agent.WithSkillLoads loads a
// skill and one of its documents for the turn before the first model
// request, so the model has them without calling skill_load. A bad
// declaration — a skill that does not exist, a document the skill does not
// have — ends the run before anything is recorded or any model is asked.
// The model is scripted, so no key and no network are needed. From the
// repository root:
//
//	go run ./examples/declaredloads
package main

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/model/scripted"
)

func main() {
	ctx := context.Background()
	kit := must(skillkit.New(ctx, &skillkit.Options{Roots: []string{"examples/skills"}}))
	defer kit.Close()
	m := must(scripted.New(script, nil))
	a := must(agent.New(kit, "assistant", m, nil))

	fmt.Println("A declared load (the scripted model never calls skill_load):")
	decl := loadstate.Declaration{Skill: "api-style-guide", Docs: []string{"references/errors.md"}}
	var id string
	for ev, err := range a.Run(ctx, "", "How should my API report errors?", agent.WithSkillLoads(decl)) {
		if err != nil {
			log.Fatal(err)
		}
		id = ev.SessionID
		switch ev.Kind {
		case agent.KindDeclared:
			for _, l := range ev.Loads {
				fmt.Printf("  declared: %s, instructions %t, docs %v, lifetime %s\n", l.Skill, l.Instructions, l.Docs, l.Lifetime)
			}
		case agent.KindResponse:
			fmt.Printf("  model request %d: %d tool call(s)\n", ev.Step, len(ev.Response.Calls))
		default:
			fmt.Printf("  %s: %s\n", ev.Kind, ev.Text)
		}
	}

	fmt.Println("Bad declarations, in the same session:")
	for _, bad := range []struct {
		what string
		decl loadstate.Declaration
	}{
		{"an unknown skill", loadstate.Declaration{Skill: "api-style-gide"}},
		{"a missing document", loadstate.Declaration{Skill: "api-style-guide", Docs: []string{"references/retries.md"}}},
	} {
		stored, asked := events(ctx, kit, id), m.Played()
		yielded := 0
		var err error
		for _, err = range a.Run(ctx, id, "And retries?", agent.WithSkillLoads(bad.decl)) {
			if err == nil {
				yielded++
			}
		}
		fmt.Printf("  %s: %v\n", bad.what, err)
		fmt.Printf("    ErrSkillUnavailable %t, ErrInvalidLoadRequest %t\n",
			errors.Is(err, agent.ErrSkillUnavailable), errors.Is(err, agent.ErrInvalidLoadRequest))
		fmt.Printf("    events yielded %d, model requests %d → %d, session events %d → %d\n",
			yielded, asked, m.Played(), stored, events(ctx, kit, id))
	}
}

// script is the model's one answer. Its expectation makes the run fail
// unless the first request ends with the declared skill's document.
var script = &scripted.Script{Steps: []scripted.Step{{
	Expect: &scripted.Expect{LastRole: "system", LastContains: "application/problem+json"},
	Text:   "Use application/problem+json for every error, as references/errors.md says.",
}}}

// events is the number of events stored in the session.
func events(ctx context.Context, kit *skillkit.Kit, id string) int {
	s := must(kit.Store().Get(ctx, id))
	return len(s.Events)
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
