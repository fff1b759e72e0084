package sandbox

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkIsolatedTrue measures `true` in the isolated sandbox and, in the
// same run, a plain `sh -c true` fork/exec; it reports both p50 values and
// their ratio.
func BenchmarkIsolatedTrue(b *testing.B) {
	r, err := NewIsolated(nil)
	if err != nil {
		b.Skipf("isolated runner unavailable: %v", err)
	}
	ws := b.TempDir()
	spec := Spec{Args: []string{"/bin/true"}, Workspace: ws}
	ctx := context.Background()
	var sandboxed, plain []time.Duration
	b.ResetTimer()
	for b.Loop() {
		s := time.Now()
		res, err := r.Run(ctx, spec)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		sandboxed = append(sandboxed, time.Since(s))
	}
	b.StopTimer()
	for range len(sandboxed) {
		s := time.Now()
		if err := exec.Command("/bin/sh", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
		plain = append(plain, time.Since(s))
	}
	ps, pp := p50(sandboxed), p50(plain)
	b.ReportMetric(float64(ps.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pp.Microseconds())/1000, "plain-p50-ms")
	b.ReportMetric(float64(ps)/float64(pp), "ratio")
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
