package assembly_test

import (
	"fmt"
	"testing"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/session"
)

// BenchmarkAssemble200 assembles the request for a session of 200
// messages with three skills loaded (one with documents selected), for
// each placement. Target (issue 3): ≤ 200 µs.
func BenchmarkAssemble200(b *testing.B) {
	snap := newSnapshot(b, skillFiles)
	for _, p := range []assembly.Placement{assembly.PlacementToolResult, assembly.PlacementSystem} {
		b.Run(string(p), func(b *testing.B) {
			c := newConv(b, session.NewMemoryStore(nil), conversation.Config{Placement: p, Mode: session.ModeSession, System: "Be brief."}, "main", snap)
			user(b, c, "start")
			call(b, c, "skill_load", `{"skill":"alpha","docs":["references/a.md","notes.txt"]}`)
			call(b, c, "skill_load", `{"skill":"beta"}`)
			if _, err := c.Declare(b.Context(), []session.LoadRequest{{Name: "gamma"}}); err != nil {
				b.Fatal(err)
			}
			for i := 0; len(getSession(b, c).Events) < 200; i++ {
				if i%10 == 0 {
					user(b, c, fmt.Sprintf("message %d", i))
				} else {
					call(b, c, "skill_list_docs", `{"skill":"alpha"}`)
				}
			}
			s := getSession(b, c)
			in := assembly.Input{System: "Be brief.", Session: s, Agent: "main", Skills: snap, Tools: c.Tools}
			opts := &assembly.Options{Placement: p, Mode: session.ModeSession}
			if _, err := assembly.Assemble(b.Context(), in, opts); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := assembly.Assemble(b.Context(), in, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
