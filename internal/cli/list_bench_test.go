package cli

import (
	"context"
	"io"
	"testing"

	"github.com/skillkit/skillkit/internal/benchtree"
)

// BenchmarkListJSON runs `skillkit list --json` in-process on the 10,000
// generated skills of benchtree, its output discarded: discovery, every
// skill's files listed, the JSON written. The whole-process figure
// against cat is cmd/skillkit's BenchmarkListJSONProcess.
func BenchmarkListJSON(b *testing.B) {
	dir := benchtree.Dir(b)
	b.ReportAllocs()
	for b.Loop() {
		if code := Run(context.Background(), []string{"list", "--json", dir}, Env{Stdout: io.Discard, Stderr: io.Discard}); code != 0 {
			b.Fatalf("exit status %d", code)
		}
	}
}
