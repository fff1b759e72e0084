package registry

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/skillkit/skillkit/internal/benchtree"
	"github.com/skillkit/skillkit/source"
)

// benchSkills is the size of the generated tree the performance targets
// are stated for.
const benchSkills = benchtree.Skills

// benchSource returns the generated tree as a source.
func benchSource(tb testing.TB) []source.Source {
	tb.Helper()
	src, err := source.Dir(benchtree.Dir(tb), "bench", 0)
	if err != nil {
		tb.Fatal(err)
	}
	return []source.Source{src}
}

// BenchmarkColdDiscovery measures New on 10,000 skills with no earlier
// snapshot (the page cache is warm after the first run) and reports the
// time of cat over the same SKILL.md files, measured in the same run, and
// the ratio (target: ratio ≤ 0.6).
func BenchmarkColdDiscovery(b *testing.B) {
	srcs := benchSource(b)
	ctx := context.Background()
	paths := benchtree.SkillFiles(b, srcs[0].Path)
	benchtree.CatTime(b, paths) // warm the page cache
	var catTotal time.Duration
	catRuns := 0
	b.ResetTimer()
	for b.Loop() {
		r, err := New(ctx, srcs, nil)
		if err != nil {
			b.Fatal(err)
		}
		if n := r.Snapshot().Len(); n != benchSkills {
			b.Fatalf("found %d skills, want %d", n, benchSkills)
		}
		b.StopTimer()
		catTotal += benchtree.CatTime(b, paths)
		catRuns++
		b.StartTimer()
	}
	b.StopTimer()
	ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	cat := float64(catTotal.Nanoseconds()) / float64(catRuns)
	b.ReportMetric(cat/1e6, "cat-ms")
	b.ReportMetric(ours/1e6, "discover-ms")
	b.ReportMetric(ours/cat, "ratio-to-cat")
}

// BenchmarkRefreshUnchanged measures Refresh when no file changed and
// reports it as a fraction of a cold discovery measured in the same run
// (target: ≤ 0.30).
func BenchmarkRefreshUnchanged(b *testing.B) {
	r, coldPer := coldRegistry(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		s, err := r.Refresh(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if s.Len() != benchSkills {
			b.Fatalf("refresh found %d skills, want %d", s.Len(), benchSkills)
		}
	}
	b.StopTimer()
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(coldPer/1e6, "cold-ms")
	b.ReportMetric(per/coldPer, "ratio-to-cold")
}

// coldRegistry discovers the generated tree three times and returns the
// last registry and the mean time of a cold discovery, in nanoseconds.
func coldRegistry(b *testing.B) (*Registry, float64) {
	srcs := benchSource(b)
	var cold time.Duration
	const coldRuns = 3
	var r *Registry
	for range coldRuns {
		start := time.Now()
		var err error
		r, err = New(context.Background(), srcs, nil)
		if err != nil {
			b.Fatal(err)
		}
		cold += time.Since(start)
	}
	return r, float64(cold.Nanoseconds()) / coldRuns
}

// BenchmarkCachedBody measures Body for a skill whose body is already
// cached (target: ≤ 2 µs).
func BenchmarkCachedBody(b *testing.B) {
	r, err := New(context.Background(), benchSource(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	s := r.Snapshot()
	ctx := context.Background()
	if _, err := s.Body(ctx, "skill-04242"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		body, err := s.Body(ctx, "skill-04242")
		if err != nil || len(body) == 0 {
			b.Fatalf("Body = %d bytes, %v", len(body), err)
		}
	}
}

// BenchmarkSummaries measures listing all 10,000 summaries of a snapshot,
// what a catalog render starts from.
func BenchmarkSummaries(b *testing.B) {
	r, err := New(context.Background(), benchSource(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	s := r.Snapshot()
	b.ReportAllocs()
	for b.Loop() {
		if n := len(s.Summaries()); n != benchSkills {
			b.Fatalf("%d summaries", n)
		}
	}
}

// BenchmarkSnapshotHeap reports the live heap a registry of 10,000 skills
// holds (target: ≤ 20 MB).
func BenchmarkSnapshotHeap(b *testing.B) {
	srcs := benchSource(b)
	var last float64
	for b.Loop() {
		last = float64(snapshotHeap(b, srcs)) / (1 << 20)
	}
	b.ReportMetric(last, "heap-MiB")
}

// TestSnapshotHeap checks the heap target on the generated tree. It is
// skipped in -short mode because generating the tree the first time takes
// a few seconds.
func TestSnapshotHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 10,000 skills; skipped in -short mode")
	}
	srcs := benchSource(t)
	const limit = 20 << 20
	if got := snapshotHeap(t, srcs); got > limit {
		t.Errorf("registry of %d skills holds %.1f MiB of heap; the target is ≤ 20 MiB", benchSkills, float64(got)/(1<<20))
	} else {
		t.Logf("registry of %d skills holds %.1f MiB of heap", benchSkills, float64(got)/(1<<20))
	}
}

// snapshotHeap returns the growth of the live heap across New, with the
// registry kept alive.
func snapshotHeap(tb testing.TB, srcs []source.Source) uint64 {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := New(context.Background(), srcs, nil)
	if err != nil {
		tb.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(r)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// BenchmarkCachedDocText measures DocText for a document already read
// once: the text a later request renders again.
func BenchmarkCachedDocText(b *testing.B) {
	benchRead(b, func(s *Snapshot) (int, error) {
		text, err := s.DocText(context.Background(), "skill-04242", "reference.md")
		return len(text), err
	})
}

// BenchmarkReadFile measures ReadFile of a listed 1 KB file, which opens
// and reads the file on every call.
func BenchmarkReadFile(b *testing.B) {
	benchRead(b, func(s *Snapshot) (int, error) {
		data, err := s.ReadFile(context.Background(), "skill-04242", "reference.md")
		return len(data), err
	})
}

// benchRead measures read on a snapshot of the generated tree, after one
// call outside the timer.
func benchRead(b *testing.B, read func(*Snapshot) (int, error)) {
	r, err := New(context.Background(), benchSource(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	s := r.Snapshot()
	if _, err := read(s); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if n, err := read(s); err != nil || n == 0 {
			b.Fatalf("read %d bytes, %v", n, err)
		}
	}
}

// BenchmarkRefreshPinned measures Refresh when nothing changed but 1,000
// of the 10,000 skills have their files listed and a document pinned, so
// Refresh stats their files and folders too; it reports the ratio to a
// cold discovery measured in the same run.
func BenchmarkRefreshPinned(b *testing.B) {
	r, coldPer := coldRegistry(b)
	ctx := context.Background()
	s := r.Snapshot()
	for i := 0; i < benchSkills; i += 10 {
		if _, err := s.DocText(ctx, fmt.Sprintf("skill-%05d", i), "reference.md"); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if got, err := r.Refresh(ctx); err != nil || got != s {
			b.Fatalf("Refresh = %p, %v; want the same snapshot", got, err)
		}
	}
	b.StopTimer()
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(coldPer/1e6, "cold-ms")
	b.ReportMetric(per/coldPer, "ratio-to-cold")
}

// BenchmarkNewListAll measures what `skillkit list` does before it
// prints, on the 10,000 generated skills: New, then ListAll, with the
// skill folders listed by discovery as it reads SKILL.md
// (Options.ListFiles, as list sets it) and without (ListAll reads every
// folder again). It reports the ratio to cat over the same SKILL.md
// files, measured in the same run.
func BenchmarkNewListAll(b *testing.B) {
	srcs := benchSource(b)
	ctx := context.Background()
	paths := benchtree.SkillFiles(b, srcs[0].Path)
	for _, c := range []struct {
		name string
		opts *Options
	}{{"listed-by-discovery", &Options{ListFiles: true}}, {"listed-after", nil}} {
		b.Run(c.name, func(b *testing.B) {
			benchtree.CatTime(b, paths) // warm the page cache
			var catTotal time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				r, err := New(ctx, srcs, c.opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Snapshot().ListAll(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				catTotal += benchtree.CatTime(b, paths)
				b.StartTimer()
			}
			b.StopTimer()
			ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			cat := float64(catTotal.Nanoseconds()) / float64(b.N)
			b.ReportMetric(cat/1e6, "cat-ms")
			b.ReportMetric(ours/1e6, "list-ms")
			b.ReportMetric(ours/cat, "ratio-to-cat")
		})
	}
}
