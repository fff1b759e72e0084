package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkExecTrueProcess measures the whole process `skillkit exec --
// true`: start, the isolated sandbox (probes, a temporary in-memory
// workspace volume, the command) and exit, as a user runs it. It builds
// the binary first and reports the p50.
func BenchmarkExecTrueProcess(b *testing.B) {
	bin := buildSkillkit(b)
	if out, err := exec.Command(bin, "exec", "--", "true").CombinedOutput(); err != nil {
		b.Skipf("skillkit exec cannot run here: %v\n%s", err, out)
	}
	var d []time.Duration
	b.ResetTimer()
	for b.Loop() {
		s := time.Now()
		cmd := exec.Command(bin, "exec", "--", "true")
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(s))
	}
	b.StopTimer()
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
}

// buildSkillkit builds the skillkit binary of this checkout for a
// benchmark and returns its path.
func buildSkillkit(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "skillkit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
