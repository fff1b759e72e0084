package sqlitestore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/skillkit/skillkit/session"
)

// BenchmarkAppend measures one durable append (fsync'd WAL commit) of a
// tool-result event with a two-key state delta, reporting p50 and p99 from
// per-operation timings.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	st := openStore(b, filepath.Join(b.TempDir(), "bench.db"), nil)
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
}

func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}
