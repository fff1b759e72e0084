package session_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/skillkit/skillkit/session"
)

// BenchmarkMemoryAppend measures an in-memory append of a tool-result event
// with a two-key state delta, reporting p50 and p99 from per-op timings.
func BenchmarkMemoryAppend(b *testing.B) {
	ctx := context.Background()
	st := session.NewMemoryStore(nil)
	if _, err := st.Create(ctx, "bench", nil); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	n := 0
	for b.Loop() {
		name := fmt.Sprintf("skill-%d", n%8)
		ev := session.Event{Kind: session.KindTool, Agent: "assistant", ToolCallID: fmt.Sprint("c", n), ToolName: "skill_load",
			StateDelta: map[string]*string{
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
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
}
