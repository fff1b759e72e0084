package conversation_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
)

// BenchmarkCallCached measures one recorded tool call (the skill tool on a
// skill whose body is cached) through a Conversation on the memory store:
// reading the session, the tool, and appending the assistant and tool
// events with their state changes. The session is reset every 200 calls
// so its history stays short, as in one turn. Target: ≤ 20 µs.
func BenchmarkCallCached(b *testing.B) {
	ctx := context.Background()
	snap := newSnap(b)
	store := session.NewMemoryStore(nil)
	args := json.RawMessage(`{"name":"alpha"}`)
	var c *conversation.Conversation
	fresh := func() {
		s, err := store.Create(ctx, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		opts := &conversation.Options{Skills: func(context.Context) *registry.Snapshot { return snap }}
		if c, err = conversation.Open(ctx, store, s.ID, "a", opts); err != nil {
			b.Fatal(err)
		}
	}
	fresh()
	if res, err := c.Call(ctx, "skill", args); err != nil || res.IsError {
		b.Fatalf("%v %+v", err, res)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n++; n%200 == 0 {
			b.StopTimer()
			fresh()
			b.StartTimer()
		}
		if _, err := c.Call(ctx, "skill", args); err != nil {
			b.Fatal(err)
		}
	}
}
