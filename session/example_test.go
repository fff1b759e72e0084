package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/skillkit/skillkit/session"
)

func Example() {
	ctx := context.Background()
	store := session.NewMemoryStore(nil)
	defer store.Close()

	s, _ := store.Create(ctx, "demo", map[string]string{"mode": "turn"})
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Agent: "assistant", Text: "load pdf"})
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindAssistant, Agent: "assistant",
		ToolCalls: []session.ToolCall{{ID: "call-1", Name: "skill_load", Arguments: `{"skill":"pdf"}`}}})
	ev, _ := store.Append(ctx, s.ID, session.Event{Kind: session.KindTool, Agent: "assistant",
		ToolCallID: "call-1", ToolName: "skill_load", Text: "loaded: pdf",
		StateDelta: map[string]*string{
			session.LoadedKey("assistant", "pdf"): session.Ptr(session.LoadedValue),
			session.DocsKey("assistant", "pdf"):   session.Ptr(session.EncodeDocs(false, []string{"forms.md"})),
		}})

	snap, _ := store.Get(ctx, s.ID)
	fmt.Println("seq", ev.Seq, "turn", ev.Turn)
	fmt.Println("loaded", session.LoadedSkills(snap.State, "assistant"))
	fmt.Println(snap.State[session.DocsKey("assistant", "pdf")])
	// Output:
	// seq 3 turn 1
	// loaded [pdf]
	// ["forms.md"]
}

// capLoadedSkills keeps only the max most recently loaded skills of the
// event's agent: when ev loads a skill, it predicts the post-append state and
// clears the keys of the others in the same StateDelta. Recency comes from
// the newest skill_load calls in the transcript, then name order.
func capLoadedSkills(sess *session.Session, ev *session.Event, max int) {
	agent := strings.TrimSpace(ev.Agent)
	if max <= 0 || len(ev.StateDelta) == 0 || agent == "" {
		return
	}
	prefix := session.LoadedPrefix(agent)
	var newly []string
	for k, v := range ev.StateDelta {
		if name, ok := strings.CutPrefix(k, prefix); ok && v != nil && *v != "" {
			newly = append(newly, name)
		}
	}
	if len(newly) == 0 {
		return
	}
	next := maps.Clone(sess.State)
	session.ApplyDelta(next, ev.StateDelta)
	loaded := session.LoadedSkills(next, agent)
	if len(loaded) <= max {
		return
	}
	var keep []string
	add := func(name string) {
		if len(keep) < max && slices.Contains(loaded, name) && !slices.Contains(keep, name) {
			keep = append(keep, name)
		}
	}
	slices.Sort(newly)
	for _, name := range newly {
		add(name)
	}
	for i := len(sess.Events) - 1; i >= 0 && len(keep) < max; i-- {
		e := sess.Events[i]
		if e.Kind != session.KindAssistant || e.Agent != agent {
			continue
		}
		for _, tc := range e.ToolCalls {
			var args struct {
				Skill string `json:"skill"`
			}
			if tc.Name == "skill_load" && json.Unmarshal([]byte(tc.Arguments), &args) == nil {
				add(strings.TrimSpace(args.Skill))
			}
		}
	}
	for _, name := range loaded {
		add(name)
	}
	for _, name := range loaded {
		if !slices.Contains(keep, name) {
			ev.StateDelta[session.LoadedKey(agent, name)] = nil
			ev.StateDelta[session.DocsKey(agent, name)] = nil
		}
	}
}

// An AppendHook that rewrites skill_load's state delta so at most three
// skills stay loaded, the seed's custom-eviction example.
func ExampleAppendHook() {
	ctx := context.Background()
	store := session.NewMemoryStore(&session.Options{
		AppendHook: func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
			capLoadedSkills(sess, ev, 3)
			return next()
		},
	})
	defer store.Close()
	s, _ := store.Create(ctx, "", nil)

	for i, name := range []string{"pdf", "docx", "xlsx", "pdf", "pptx"} {
		id := fmt.Sprintf("call-%d", i)
		_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindAssistant, Agent: "assistant",
			ToolCalls: []session.ToolCall{{ID: id, Name: "skill_load", Arguments: fmt.Sprintf(`{"skill":%q}`, name)}}})
		_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindTool, Agent: "assistant",
			ToolCallID: id, ToolName: "skill_load", Text: "loaded: " + name,
			StateDelta: map[string]*string{session.LoadedKey("assistant", name): session.Ptr(session.LoadedValue)}})
	}
	snap, _ := store.Get(ctx, s.ID)
	fmt.Println(session.LoadedSkills(snap.State, "assistant"))
	// Output:
	// [pdf pptx xlsx]
}

// Legacy skill keys are rewritten to the reading agent's keys by appending
// the migration delta.
func ExampleMigrateLegacyKeys() {
	ctx := context.Background()
	store := session.NewMemoryStore(nil)
	s, _ := store.Create(ctx, "", nil)
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindState, StateDelta: map[string]*string{
		session.LegacyLoadedKey("pdf"): session.Ptr("1"),
		session.LegacyDocsKey("pdf"):   session.Ptr("*"),
	}})

	snap, _ := store.Get(ctx, s.ID)
	delta, _ := session.MigrateLegacyKeys(snap.State, "assistant")
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindState, Text: "migrate legacy skill keys", StateDelta: delta})

	snap, _ = store.Get(ctx, s.ID)
	for _, k := range slices.Sorted(maps.Keys(snap.State)) {
		fmt.Printf("%s = %s\n", k, snap.State[k])
	}
	// Output:
	// temp:skill:docs_by_agent:assistant/pdf = *
	// temp:skill:loaded_by_agent:assistant/pdf = 1
	// temp:skill:loaded_order_by_agent:assistant = ["pdf"]
}
