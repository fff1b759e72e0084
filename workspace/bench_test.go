package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

// Benchmark skill: 60 files, 1 MiB in total, in a few directories.
const (
	benchFiles = 60
	benchBytes = 1 << 20
)

func benchContent(i int) []byte {
	b := make([]byte, benchBytes/benchFiles)
	for j := range b {
		b[j] = byte('a' + (i+j)%26)
	}
	return b
}

func benchPath(i int) string { return fmt.Sprintf("dir%d/file%02d.txt", i%4, i) }

// benchSkill writes the benchmark skill to a directory with hour-old mtimes.
func benchSkill(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	for i := range benchFiles {
		p := filepath.Join(dir, filepath.FromSlash(benchPath(i)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, benchContent(i), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ageTree(b, dir)
	return dir
}

func benchWorkspace(b *testing.B) *Workspace {
	b.Helper()
	m, err := New(&Options{Root: filepath.Join(b.TempDir(), "ws")})
	if err != nil {
		b.Fatal(err)
	}
	w, err := m.Open(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	return w
}

// BenchmarkStageFirst stages the skill into a workspace that has no copy of
// it: walk, hash, copy, link and swap. Target: ≤ 20 ms.
func BenchmarkStageFirst(b *testing.B) {
	src := os.DirFS(benchSkill(b))
	w := benchWorkspace(b)
	ctx := context.Background()
	b.SetBytes(benchBytes)
	for b.Loop() {
		b.StopTimer()
		if err := os.RemoveAll(filepath.Join(w.SkillsDir(), "s")); err != nil {
			b.Fatal(err)
		}
		os.Remove(filepath.Join(w.m.MetaRoot(), w.ID(), stagedName, "s.json"))
		delete(w.st.manifests, "s")
		b.StartTimer()
		res, err := w.Stage(ctx, "s", src)
		if err != nil || !res.Copied {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkStageUnchanged restages an unchanged skill: walk and stat only.
// Target: ≤ 1 ms.
func BenchmarkStageUnchanged(b *testing.B) {
	src := os.DirFS(benchSkill(b))
	w := benchWorkspace(b)
	ctx := context.Background()
	if _, err := w.Stage(ctx, "s", src); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := w.Stage(ctx, "s", src)
		if err != nil || res.Copied {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkStageUnchangedNoMTime restages an unchanged source without mtimes
// (as embed.FS): every file is re-hashed, nothing is copied.
func BenchmarkStageUnchangedNoMTime(b *testing.B) {
	src := fstest.MapFS{}
	for i := range benchFiles {
		src[benchPath(i)] = &fstest.MapFile{Data: benchContent(i)}
	}
	w := benchWorkspace(b)
	ctx := context.Background()
	if _, err := w.Stage(ctx, "s", src); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchBytes)
	for b.Loop() {
		res, err := w.Stage(ctx, "s", src)
		if err != nil || res.Copied {
			b.Fatal(res, err)
		}
	}
}
