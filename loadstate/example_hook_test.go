package loadstate_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/tools"
)

// A tool call's effects become a state delta and the records the event
// that stores the call carries.
func Example() {
	state := map[string]string{}
	effects := []tools.Effect{{Kind: tools.EffectLoad, Skill: "pdf", DocsMode: tools.DocsReplace, Docs: []string{"forms.md"}}}
	delta, _ := loadstate.Apply(state, "assistant", effects, 0)
	records := loadstate.Records(state, "assistant", effects, loadstate.Turn)
	session.ApplyDelta(state, delta)

	v := loadstate.Of(state, "assistant")
	docs, _ := v.Docs("pdf")
	fmt.Println(v.Skills(), docs)
	fmt.Printf("%+v\n", records[0])
	for _, k := range slices.Sorted(maps.Keys(state)) {
		fmt.Printf("%s = %s\n", k, state[k])
	}
	// Output:
	// [pdf] [forms.md]
	// {Skill:pdf Instructions:true Inline:false Docs:[forms.md] Lifetime:turn}
	// temp:skill:docs_by_agent:assistant/pdf = ["forms.md"]
	// temp:skill:loaded_by_agent:assistant/pdf = 1
	// temp:skill:loaded_order_by_agent:assistant = ["pdf"]
}

// capLoaded keeps only the max most recently used skills of the event's
// agent: when ev loads a skill, it predicts the state after the append and
// clears the keys of the others in the same StateDelta.
func capLoaded(sess *session.Session, ev *session.Event, limit int) {
	agent := strings.TrimSpace(ev.Agent)
	if limit <= 0 || len(ev.StateDelta) == 0 || agent == "" {
		return
	}
	loads := false
	for k, v := range ev.StateDelta {
		if strings.HasPrefix(k, loadstate.LoadedPrefix(agent)) && v != nil && *v != "" {
			loads = true
		}
	}
	if !loads {
		return
	}
	next := maps.Clone(sess.State)
	session.ApplyDelta(next, ev.StateDelta)
	used := loadstate.Of(next, agent).Skills() // least recently used first
	for _, name := range used[:max(0, len(used)-limit)] {
		ev.StateDelta[loadstate.LoadedKey(agent, name)] = nil
		ev.StateDelta[loadstate.DocsKey(agent, name)] = nil
	}
}

// An AppendHook can enforce its own policy on the load state: here at most
// three skills stay loaded (loadstate.Apply's maxLoaded does the same).
func Example_appendHook() {
	ctx := context.Background()
	store := session.NewMemoryStore(&session.Options{
		AppendHook: func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
			capLoaded(sess, ev, 3)
			return next()
		},
	})
	defer store.Close()
	s, _ := store.Create(ctx, "", nil)
	for _, name := range []string{"pdf", "docx", "xlsx", "pdf", "pptx"} {
		_, _ = store.AppendFunc(ctx, s.ID, func(state map[string]string, _ int64) ([]session.Event, error) {
			d, err := loadstate.Apply(state, "assistant", []tools.Effect{{Kind: tools.EffectLoad, Skill: name}}, 0)
			return []session.Event{{Kind: session.KindState, Agent: "assistant", StateDelta: d}}, err
		})
	}
	state, _, _ := store.State(ctx, s.ID)
	v := loadstate.Of(state, "assistant")
	fmt.Println(v.Loaded("docx"), v.Loaded("pdf"), v.Loaded("xlsx"), v.Loaded("pptx"))
	// Output:
	// false true true true
}

// Keys of the older single-agent layout are rewritten to the reading
// agent's keys by appending the migration delta.
func ExampleMigrate() {
	state := map[string]string{"temp:skill:loaded:pdf": "1", "temp:skill:docs:pdf": "*"}
	delta, _ := loadstate.Migrate(state, "assistant")
	session.ApplyDelta(state, delta)
	for _, k := range slices.Sorted(maps.Keys(state)) {
		fmt.Printf("%s = %s\n", k, state[k])
	}
	// Output:
	// temp:skill:docs_by_agent:assistant/pdf = *
	// temp:skill:loaded_by_agent:assistant/pdf = 1
	// temp:skill:loaded_order_by_agent:assistant = ["pdf"]
}
