package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skillkit/skillkit/session"
)

// BenchmarkAppend measures one append of a tool-result event with a
// two-key state delta over loopback, reporting p50 and p99 from
// per-operation timings: against a server without persistence, and one
// that fsyncs its append-only file before each reply.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"memory", fast},
		{"aof-always", []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			st := openStore(b, startServer(b, mode.args...), nil)
			if _, err := st.Create(ctx, "bench", nil); err != nil {
				b.Fatal(err)
			}
			var took []time.Duration
			n := 0
			for b.Loop() {
				name := fmt.Sprintf("skill-%d", n%8)
				ev := session.Event{Kind: session.KindTool, Agent: "assistant", ToolCallID: fmt.Sprint("c", n), ToolName: "skill_load",
					Text: "loaded: " + name, StateDelta: map[string]*string{
						"temp:skill:loaded_by_agent:assistant/" + name: session.Ptr("1"),
						"temp:skill:docs_by_agent:assistant/" + name:   session.Ptr("*"),
					}}
				start := time.Now()
				if _, err := st.Append(ctx, "bench", ev); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				n++
			}
			reportPercentiles(b, took)
		})
	}
}

func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkStep is one runner step's store calls: Get, State, then an
// AppendFunc of an assistant event and a tool result with a two-key delta.
// A session takes 20 steps (40 events) before a fresh one replaces it.
func BenchmarkStep(b *testing.B) {
	ctx := context.Background()
	st := openStore(b, startServer(b, fast...), nil)
	var id string
	n := 0
	for b.Loop() {
		if n%20 == 0 {
			b.StopTimer()
			s, err := st.Create(ctx, "", nil)
			if err != nil {
				b.Fatal(err)
			}
			id = s.ID
			b.StartTimer()
		}
		if _, err := st.Get(ctx, id); err != nil {
			b.Fatal(err)
		}
		if _, _, err := st.State(ctx, id); err != nil {
			b.Fatal(err)
		}
		name := fmt.Sprintf("skill-%d", n%8)
		call := fmt.Sprint("c", n)
		_, err := st.AppendFunc(ctx, id, func(map[string]string, int64) ([]session.Event, error) {
			return []session.Event{
				{Kind: session.KindAssistant, Agent: "assistant", ToolCalls: []session.ToolCall{{ID: call, Name: "skill_load", Arguments: `{"skill":"` + name + `"}`}}},
				{Kind: session.KindTool, Agent: "assistant", ToolCallID: call, ToolName: "skill_load", Text: "loaded: " + name, StateDelta: map[string]*string{
					"temp:skill:loaded_by_agent:assistant/" + name: session.Ptr("1"),
					"temp:skill:docs_by_agent:assistant/" + name:   session.Ptr("*"),
				}},
			}, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}
