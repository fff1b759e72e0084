//go:build unix

package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkStageRestoreOne restages an unchanged skill whose staged copy
// a command edited: the check finds the one changed file (of 60) and
// rewrites it from the source.
func BenchmarkStageRestoreOne(b *testing.B) {
	src := os.DirFS(benchSkill(b))
	w := benchWorkspace(b)
	ctx := context.Background()
	if _, err := w.Stage(ctx, "s", src); err != nil {
		b.Fatal(err)
	}
	victim := filepath.Join(w.SkillsDir(), "s", filepath.FromSlash(benchPath(7)))
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(victim, []byte("poisoned"), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		res, err := w.Stage(ctx, "s", src)
		if err != nil || res.Copied || len(res.Restored) != 1 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkStageUnchangedUnverified restages an unchanged skill whose
// copy's records were never verified (as on a file system whose change
// times do not move past the probe): every staged file is hashed.
func BenchmarkStageUnchangedUnverified(b *testing.B) {
	src := os.DirFS(benchSkill(b))
	w := benchWorkspace(b)
	ctx := context.Background()
	if _, err := w.Stage(ctx, "s", src); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchBytes)
	for b.Loop() {
		b.StopTimer()
		m := w.st.manifests["s"]
		for p, rec := range m.Copy {
			rec.Verified = 0
			m.Copy[p] = rec
		}
		b.StartTimer()
		res, err := w.Stage(ctx, "s", src)
		if err != nil || res.Copied || len(res.Restored) != 0 {
			b.Fatal(res, err)
		}
	}
}
