package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skillkit/skillkit/sandbox"
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
	m := newTestManager(b, nil)
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
	b.StopTimer()
	// The same files written plainly (os.WriteFile into a fresh folder),
	// measured in the same run: staging is bound by file creation, whose
	// cost varies a lot with the disk, so the ratio says more than the time.
	var all []string
	if err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			all = append(all, p)
		}
		return err
	}); err != nil || len(all) == 0 {
		b.Fatal(err)
	}
	contents := make([][]byte, len(all))
	for i, p := range all {
		var err error
		if contents[i], err = fs.ReadFile(src, p); err != nil {
			b.Fatal(err)
		}
	}
	var plain []time.Duration
	for range 20 {
		dir := b.TempDir()
		start := time.Now()
		for i, p := range all {
			dst := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(dst, contents[i], 0o644); err != nil {
				b.Fatal(err)
			}
		}
		plain = append(plain, time.Since(start))
	}
	slices.Sort(plain)
	p50 := plain[len(plain)/2]
	b.ReportMetric(float64(p50.Microseconds())/1000, "plain-write-ms")
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/float64(p50), "ratio-to-plain")
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

// BenchmarkOpenVolume measures Open of a new workspace with its bounded
// volume (root only): an ext4 image made and mounted, or a tmpfs.
func BenchmarkOpenVolume(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("volumes need root")
	}
	for _, inMemory := range []bool{false, true} {
		name := "ext4"
		if inMemory {
			name = "tmpfs"
		}
		b.Run(name, func(b *testing.B) {
			m := newTestManager(b, &Options{InMemoryVolumes: inMemory, DiskBytes: sandbox.DefaultDiskBytes})
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				if _, err := m.Open(ctx, "w"+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
