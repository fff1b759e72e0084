// Package benchtree provides the generated skill tree the performance
// targets are stated for, and the `cat` baseline they are compared with,
// to the benchmarks of several packages (registry, cmd/skillkit). Only
// test files import it.
package benchtree

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Version keys the cached tree; bump it when Write changes so stale trees
// are not reused.
const Version = "v1"

// Skills is the number of skills in the tree Dir returns.
const Skills = 10_000

// Dir returns a folder holding Skills generated skills, each a ≈2 KB
// SKILL.md plus one 1 KB reference document. The tree is cached under
// os.TempDir (skillkit-bench-registry-VERSION) because writing 20,000
// files costs more than the benchmarks themselves.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), "skillkit-bench-registry-"+Version)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "skillkit-bench-tmp-")
	if err != nil {
		tb.Fatal(err)
	}
	if err := Write(tmp, Skills); err != nil {
		os.RemoveAll(tmp)
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	// Another process may have won the race; its tree is as good as ours.
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if _, statErr := os.Stat(filepath.Join(dir, ".complete")); statErr != nil {
			tb.Fatalf("installing benchmark tree: %v", err)
		}
	}
	return dir
}

// Write writes n skills named skill-00000 ... into root.
func Write(root string, n int) error {
	filler := strings.Repeat("Follow the steps below carefully and check every result before moving on. ", 30)
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "---\nname: %s\ndescription: Handles task number %d for the benchmark; use it when the user asks about generated workload %d and its reports.\nlicense: MIT\n---\n\n# %s\n\n", name, i, i, name)
		for b.Len() < 2000 {
			b.WriteString(filler[:min(len(filler), 2000-b.Len())])
		}
		b.WriteString("\n")
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(b.String()), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "reference.md"), []byte("# Reference\n\n"+filler[:1000]+"\n"), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// SkillFiles returns the SKILL.md paths of the tree in dir, as the shell
// expands dir/*/SKILL.md, and fails tb unless there are Skills of them.
func SkillFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*", "SKILL.md"))
	if err != nil || len(paths) != Skills {
		tb.Fatalf("glob found %d SKILL.md files (%v); want %d", len(paths), err, Skills)
	}
	return paths
}

// CatTime runs cat over paths (every SKILL.md of the tree), as `cat
// */SKILL.md >/dev/null` would, and returns how long it took. Argument
// lists longer than maxArgBytes are split the way xargs splits them; the
// process start is then counted once by subtracting the extra starts
// (measured with `cat /dev/null`).
func CatTime(tb testing.TB, paths []string) time.Duration {
	tb.Helper()
	const maxArgBytes = 1 << 20
	var batches [][]string
	var cur []string
	size := 0
	for _, p := range paths {
		if size+len(p)+1 > maxArgBytes && len(cur) > 0 {
			batches = append(batches, cur)
			cur, size = nil, 0
		}
		cur = append(cur, p)
		size += len(p) + 1
	}
	batches = append(batches, cur)
	run := func(args []string) time.Duration {
		cmd := exec.Command("cat", args...)
		start := time.Now()
		if err := cmd.Run(); err != nil { // Stdout nil: /dev/null
			tb.Fatalf("cat: %v", err)
		}
		return time.Since(start)
	}
	var total time.Duration
	for _, b := range batches {
		total += run(b)
	}
	if extra := len(batches) - 1; extra > 0 {
		total -= time.Duration(extra) * run([]string{os.DevNull})
	}
	return total
}
