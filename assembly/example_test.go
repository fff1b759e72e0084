package assembly_test

import (
	"context"
	"fmt"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/session"
)

// Assemble a request from a session that loaded a skill through a
// declared load: the event records the load, and with no tool result to
// carry it the skill arrives in a "Loaded skill context:" message at the
// place the load was recorded.
func ExampleAssemble() {
	ctx := context.Background()
	store := session.NewMemoryStore(nil)
	s, _ := store.Create(ctx, "", nil)
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Text: "hello"})
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindState, Agent: "main",
		StateDelta: map[string]*string{loadstate.LoadedKey("main", "notes"): session.Ptr(loadstate.LoadedValue)},
		Loads:      []session.Load{{Skill: "notes", Instructions: true}}})
	s, _ = store.Get(ctx, s.ID)

	// No snapshot: the skill's body is reported as unavailable.
	req, err := assembly.Assemble(ctx, assembly.Input{System: "Be brief.", Session: s, Agent: "main"}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(req.Text())
	// Output:
	// ── system ──
	// Be brief.
	//
	// ── user ──
	// hello
	//
	// ── system ──
	// Loaded skill context:
	//
	// [Loaded] notes
	//
	// (This skill is no longer available.)
	//
	// ── tools ──
	// []
}
