package session_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/skillkit/skillkit/session"
)

func Example() {
	ctx := context.Background()
	store := session.NewMemoryStore(nil)
	defer store.Close()

	s, _ := store.Create(ctx, "demo", nil)
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Agent: "assistant", Text: "load pdf"})
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindAssistant, Agent: "assistant",
		ToolCalls: []session.ToolCall{{ID: "call-1", Name: "skill_load", Arguments: `{"skill":"pdf"}`}}})
	ev, _ := store.Append(ctx, s.ID, session.Event{Kind: session.KindTool, Agent: "assistant",
		ToolCallID: "call-1", ToolName: "skill_load", Text: "loaded: pdf",
		Loads:      []session.Load{{Skill: "pdf", Instructions: true}},
		StateDelta: map[string]*string{"loaded/pdf": session.Ptr("1")}})

	snap, _ := store.Get(ctx, s.ID)
	fmt.Println("seq", ev.Seq, "turn", ev.Turn)
	fmt.Println("state", snap.State)
	fmt.Println("loads", snap.Events[2].Loads[0].Skill)
	// Output:
	// seq 3 turn 1
	// state map[loaded/pdf:1]
	// loads pdf
}

// AppendFunc computes events from the state as it is at that moment, with
// the session locked against other appends: concurrent counters lose no
// update.
func ExampleStore_appendFunc() {
	ctx := context.Background()
	store := session.NewMemoryStore(nil)
	s, _ := store.Create(ctx, "", nil)
	done := make(chan error)
	for range 8 {
		go func() {
			_, err := store.AppendFunc(ctx, s.ID, func(state map[string]string, _ int64) ([]session.Event, error) {
				n, _ := strconv.Atoi(state["count"])
				return []session.Event{{Kind: session.KindState,
					StateDelta: map[string]*string{"count": session.Ptr(strconv.Itoa(n + 1))}}}, nil
			})
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			fmt.Println(err)
		}
	}
	state, last, _ := store.State(ctx, s.ID)
	fmt.Println(state["count"], last)
	// Output:
	// 8 8
}

// An AppendHook runs inside the append, before the event is stored: this
// one refuses messages that look like they carry a secret and stamps the
// others.
func ExampleAppendHook() {
	ctx := context.Background()
	errSecret := errors.New("looks like a secret; not stored")
	store := session.NewMemoryStore(&session.Options{
		AppendHook: func(ctx context.Context, sess *session.Session, ev *session.Event, next func() error) error {
			if strings.Contains(ev.Text, "BEGIN PRIVATE KEY") {
				return errSecret
			}
			ev.StateDelta = session.MergeDelta(ev.StateDelta, map[string]*string{"last-author": session.Ptr(ev.Agent)})
			return next()
		},
	})
	s, _ := store.Create(ctx, "", nil)
	_, err := store.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Agent: "a", Text: "-----BEGIN PRIVATE KEY-----"})
	fmt.Println(errors.Is(err, errSecret))
	_, _ = store.Append(ctx, s.ID, session.Event{Kind: session.KindUser, Agent: "a", Text: "hello"})
	state, last, _ := store.State(ctx, s.ID)
	fmt.Println(state["last-author"], last)
	// Output:
	// true
	// a 1
}
