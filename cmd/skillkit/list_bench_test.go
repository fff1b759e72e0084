package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/skillkit/skillkit/internal/benchtree"
)

// BenchmarkListJSONProcess measures the whole process `skillkit list
// --json` on the 10,000 generated skills of benchtree (every skill's
// summary and its files, bytes and documents), its output going to
// /dev/null, against `cat */SKILL.md > /dev/null` on the same files and
// the whole process `skillkit catalog` (discovery without the file
// listing), alternating in the same run. It reports the mean times and
// list's ratio to cat (target: ≤ 1.0): ratio-to-cat against cat given
// the file names (the stricter baseline), ratio-to-cat-typed against
// `sh -c 'cat */SKILL.md'` as a user types it, the shell's glob included.
func BenchmarkListJSONProcess(b *testing.B) {
	bin := buildSkillkit(b)
	dir := benchtree.Dir(b)
	paths := benchtree.SkillFiles(b, dir)
	checkList(b, bin, dir)
	benchtree.CatTime(b, paths) // warm the page cache
	run := func(args ...string) time.Duration {
		cmd := exec.Command(bin, args...) // Stdout nil: /dev/null
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil || stderr.Len() > 0 {
			b.Fatalf("skillkit %v: %v\n%s", args, err, stderr.Bytes())
		}
		return d
	}
	// cat */SKILL.md as typed: the shell expands the glob, then cat
	// reads the files.
	shellCat := func() time.Duration {
		cmd := exec.Command("sh", "-c", "cat */SKILL.md")
		cmd.Dir = dir
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("sh -c 'cat */SKILL.md': %v", err)
		}
		return time.Since(start)
	}
	var list, cat, typed, catalog time.Duration
	b.ResetTimer()
	for b.Loop() {
		list += run("list", "--json", dir)
		cat += benchtree.CatTime(b, paths)
		typed += shellCat()
		catalog += run("catalog", dir)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(list.Nanoseconds())/n/1e6, "list-ms")
	b.ReportMetric(float64(cat.Nanoseconds())/n/1e6, "cat-ms")
	b.ReportMetric(float64(catalog.Nanoseconds())/n/1e6, "catalog-ms")
	b.ReportMetric(float64(typed.Nanoseconds())/n/1e6, "cat-typed-ms")
	b.ReportMetric(float64(list)/float64(cat), "ratio-to-cat")
	b.ReportMetric(float64(list)/float64(typed), "ratio-to-cat-typed")
}

// checkList runs `skillkit list --json` on the tree once and checks that
// it lists every skill with its two files.
func checkList(b *testing.B, bin, dir string) {
	b.Helper()
	out, err := exec.Command(bin, "list", "--json", dir).Output()
	if err != nil {
		b.Fatalf("skillkit list --json: %v", err)
	}
	var items []struct {
		Name  string `json:"name"`
		Files int    `json:"files"`
		Docs  int    `json:"docs"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(out, &items); err != nil {
		b.Fatalf("skillkit list --json printed no JSON array: %v", err)
	}
	if len(items) != benchtree.Skills {
		b.Fatalf("skillkit list --json listed %d skills, want %d", len(items), benchtree.Skills)
	}
	for _, it := range items {
		if it.Files != 2 || it.Docs != 1 || it.Error != "" {
			b.Fatalf("skillkit list --json: %+v; want 2 files and 1 document", it)
		}
	}
}
