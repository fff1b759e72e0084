package sandbox

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkIsolatedTrue measures /bin/true in the isolated sandbox with
// every layer on (private root, user namespace, seccomp, Landlock, pids and
// memory cgroups, rlimits) and, in the same run, a plain `sh -c true`
// fork/exec; it reports both p50 values and their ratio.
func BenchmarkIsolatedTrue(b *testing.B) {
	r, err := NewIsolated(testIsolatedOptions(DefaultKillGrace))
	if err != nil {
		b.Skipf("isolated runner unavailable: %v", err)
	}
	spec := Spec{Args: []string{"/bin/true"}, Workspace: testWorkspace(b)}
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

// BenchmarkPythonIsolatedVsLocal runs `python3 -c pass` alternately under
// the isolated runner and the unconfined local runner, in the same run, and
// reports both p50 values and their ratio (the figure: at most
// 1.5).
func BenchmarkPythonIsolatedVsLocal(b *testing.B) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		b.Skip("needs /usr/bin/python3")
	}
	iso, err := NewIsolated(testIsolatedOptions(DefaultKillGrace))
	if err != nil {
		b.Skipf("isolated runner unavailable: %v", err)
	}
	local, err := NewUnconfinedLocal(&LocalOptions{Logger: discardLogger()})
	if err != nil {
		b.Fatal(err)
	}
	spec := Spec{Args: []string{"/usr/bin/python3", "-c", "pass"}, Workspace: testWorkspace(b)}
	ctx := context.Background()
	var di, dl []time.Duration
	b.ResetTimer()
	for b.Loop() {
		for _, c := range []struct {
			r Runner
			d *[]time.Duration
		}{{iso, &di}, {local, &dl}} {
			s := time.Now()
			res, err := c.r.Run(ctx, spec)
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%v %+v", err, res)
			}
			*c.d = append(*c.d, time.Since(s))
		}
	}
	b.StopTimer()
	pi, pl := p50(di), p50(dl)
	b.ReportMetric(float64(pi.Microseconds())/1000, "isolated-p50-ms")
	b.ReportMetric(float64(pl.Microseconds())/1000, "local-p50-ms")
	b.ReportMetric(float64(pi)/float64(pl), "ratio")
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
