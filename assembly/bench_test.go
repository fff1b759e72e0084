package assembly_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillkit/skillkit/assembly"
	"github.com/skillkit/skillkit/conversation"
	"github.com/skillkit/skillkit/loadstate"
	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/tools"
)

// BenchmarkAssemble200 assembles the request for a session of 200
// messages with three skills loaded (one with documents selected), for
// each placement. Target: ≤ 200 µs.
func BenchmarkAssemble200(b *testing.B) {
	snap := newSnapshot(b, skillFiles)
	for _, p := range []assembly.Placement{assembly.PlacementToolResult, assembly.PlacementSystem} {
		b.Run(p.String(), func(b *testing.B) {
			c := newConv(b, session.NewMemoryStore(nil), conversation.Options{Placement: p, Lifetime: loadstate.Session, System: "Be brief."}, "main", snap)
			user(b, c, "start")
			call(b, c, "skill_load", `{"skill":"alpha","docs":["references/a.md","notes.txt"]}`)
			call(b, c, "skill_load", `{"skill":"beta"}`)
			if _, err := c.Declare(b.Context(), []loadstate.Declaration{{Skill: "gamma"}}); err != nil {
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
			in := assembly.Input{System: "Be brief.", Session: s, Agent: "main", Skills: snap, Tools: toolsOf(b, c)}
			opts := &assembly.Options{Placement: p}
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

// BenchmarkCatalogFromSnapshot10k measures publishing the catalog of
// 10,000 skills from a snapshot, the per-request path: the built catalog
// is memoised in the snapshot, so a request pays for the render (and the
// event), not for the description pipeline. Target: ≤ 5 ms, and no file
// system access (the skills live in memory here).
func BenchmarkCatalogFromSnapshot10k(b *testing.B) {
	fsys := fstest.MapFS{}
	for i := range 10_000 {
		name := fmt.Sprintf("skill-%05d", i)
		desc := strings.Repeat(fmt.Sprintf("Handles task %d for the user when asked; ", i), 4)
		fsys[name+"/SKILL.md"] = &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\nBody.\n")}
	}
	reg, err := registry.New(context.Background(), []source.Source{source.FS(fsys, "bench", 0)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	snap := reg.Snapshot()
	state := map[string]string{}
	toolset := []tools.Tool{tools.Skill()}
	if _, err := assembly.CatalogEvent(context.Background(), state, "a", snap, toolset, nil); err != nil { // builds and memoises
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ev, err := assembly.CatalogEvent(context.Background(), state, "a", snap, toolset, nil)
		if err != nil || ev == nil {
			b.Fatal(err)
		}
	}
}
