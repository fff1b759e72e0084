package agent_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/skillkit/skillkit"
	"github.com/skillkit/skillkit/agent"
	"github.com/skillkit/skillkit/model/scripted"
	"github.com/skillkit/skillkit/session"
	"github.com/skillkit/skillkit/session/sqlitestore"
)

// benchTurns is how many turns one session takes in the benchmarks before
// a fresh one replaces it, so the history stays as short as a working
// session's.
const benchTurns = 20

// benchRun measures the runner's overhead per model step, the model
// excluded: each turn is two steps of a scripted model (a skill_load
// call of a skill whose body is cached, then the answer), so a step is
// publishing the catalog if needed, building the request from the
// session, the scripted model's replay (a slice lookup), running the
// calls and recording the answer with its results; the turn adds opening
// the conversation and the user message.
func benchRun(b *testing.B, store session.Store) {
	ctx := context.Background()
	kit, err := skillkit.New(ctx, &skillkit.Options{Roots: []string{skillsRoot}, Store: store, Agent: skillkit.AgentOptions{System: "You help with data."}})
	if err != nil {
		b.Fatal(err)
	}
	defer kit.Close()
	var a *agent.Agent
	var id string
	fresh := func() {
		steps := make([]scripted.Step, 0, 2*benchTurns)
		for i := range benchTurns {
			steps = append(steps,
				scripted.Step{Calls: []scripted.Call{{ID: "call_" + strconv.Itoa(i), Name: "skill_load", Arguments: `{"skill":"csv-stats"}`}}},
				scripted.Step{Text: "Run scripts/stats.py on the file."})
		}
		m, err := scripted.New(&scripted.Script{Steps: steps}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if a, err = agent.New(kit, "assistant", m, nil); err != nil {
			b.Fatal(err)
		}
		s, err := store.Create(ctx, "", nil)
		if err != nil {
			b.Fatal(err)
		}
		id = s.ID
	}
	turn := func() {
		for _, err := range a.Run(ctx, id, "How do I summarise a CSV?") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	fresh()
	turn() // the body is read and cached
	n := 1
	b.ReportAllocs()
	for b.Loop() {
		if n%benchTurns == 0 {
			b.StopTimer()
			fresh()
			b.StartTimer()
		}
		n++
		turn()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/step")
}

// BenchmarkRunMemory is the runner's overhead per step on the memory
// store. Target: ≤ 100 µs.
func BenchmarkRunMemory(b *testing.B) {
	store := session.NewMemoryStore(nil)
	defer store.Close()
	benchRun(b, store)
}

// BenchmarkRunSQLite is the runner's overhead per step on the SQLite
// store (one transaction per recorded step). Target: ≤ 1 ms.
func BenchmarkRunSQLite(b *testing.B) {
	store, err := sqlitestore.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	benchRun(b, store)
}
