package watch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/watch"
)

func writeSkill(t testing.TB, root, name, desc string) {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: " + name + "\ndescription: " + desc + "\n---\n\nBody of " + name + ".\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// watched starts a watcher over root and returns the registry and a
// channel of the snapshots it makes and the errors it reports.
func watched(t testing.TB, root string) (*registry.Registry, chan *registry.Snapshot, chan error) {
	t.Helper()
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(t.Context(), []source.Source{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	snaps := make(chan *registry.Snapshot, 64)
	errs := make(chan error, 64)
	w, err := watch.Start(t.Context(), reg, &watch.Options{
		Debounce: 20 * time.Millisecond,
		OnChange: func(_ context.Context, s *registry.Snapshot) { snaps <- s },
		OnError:  func(err error) { errs <- err },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	if got := w.Roots(); len(got) != 1 || got[0] != src.Path {
		t.Errorf("roots %v", got)
	}
	return reg, snaps, errs
}

// until waits for a snapshot that satisfies ok (bounded generously: the
// verdict is the content, not the time).
func until(t testing.TB, snaps chan *registry.Snapshot, what string, ok func(*registry.Snapshot) bool) *registry.Snapshot {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case s := <-snaps:
			if ok(s) {
				return s
			}
		case <-timeout:
			t.Fatalf("no snapshot with %s", what)
		}
	}
}

func names(s *registry.Snapshot) string {
	var n []string
	for _, sum := range s.Summaries() {
		n = append(n, sum.Name)
	}
	return strings.Join(n, ",")
}

func TestWatchChanges(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "alpha", "First version.")
	_, snaps, _ := watched(t, root)

	writeSkill(t, root, "alpha", "Second version.")
	until(t, snaps, "the changed description", func(s *registry.Snapshot) bool {
		sum, ok := s.Lookup("alpha")
		return ok && sum.Description == "Second version."
	})
	// A new skill folder, made in steps as a copy does.
	nested := filepath.Join(root, "group")
	writeSkill(t, nested, "beta", "Added later.")
	until(t, snaps, "beta added", func(s *registry.Snapshot) bool { return names(s) == "alpha,beta" })
	// A file inside the new folder: the watch follows new folders.
	if err := os.MkdirAll(filepath.Join(nested, "beta", "references"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeSkill(t, nested, "beta", "Changed inside a new folder.")
	until(t, snaps, "beta changed", func(s *registry.Snapshot) bool {
		sum, _ := s.Lookup("beta")
		return sum.Description == "Changed inside a new folder."
	})
	if err := os.RemoveAll(filepath.Join(root, "alpha")); err != nil {
		t.Fatal(err)
	}
	until(t, snaps, "alpha removed", func(s *registry.Snapshot) bool { return names(s) == "beta" })
}

func TestWatchRootGoneAndBack(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "skills")
	writeSkill(t, root, "alpha", "Here.")
	_, snaps, errs := watched(t, root)
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	s := until(t, snaps, "no skills", func(s *registry.Snapshot) bool { return s.Len() == 0 })
	var reported bool
	for _, d := range s.Diagnostics() {
		reported = reported || strings.Contains(d.Message, "skill root skipped")
	}
	if !reported {
		t.Errorf("the missing root is not in the diagnostics: %v", s.Diagnostics())
	}
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), root) {
			t.Errorf("error %v does not name the root", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the removed root was not reported")
	}
	writeSkill(t, root, "gamma", "Back again.")
	until(t, snaps, "gamma after the root came back", func(s *registry.Snapshot) bool { return names(s) == "gamma" })
	// And it is watched again.
	writeSkill(t, root, "gamma", "Changed after coming back.")
	until(t, snaps, "gamma changed", func(s *registry.Snapshot) bool {
		sum, _ := s.Lookup("gamma")
		return sum.Description == "Changed after coming back."
	})
}

func TestTooManyFolders(t *testing.T) {
	root := t.TempDir()
	for i := range 5 {
		if err := os.MkdirAll(filepath.Join(root, "d"+string(rune('a'+i))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := source.Dir(root, "root", 0)
	reg, err := registry.New(t.Context(), []source.Source{src}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The root and its five folders: six watches.
	if _, err := watch.Start(t.Context(), reg, &watch.Options{MaxWatches: 5}); err == nil || !strings.Contains(err.Error(), "more than 5") {
		t.Errorf("Start over MaxWatches: %v", err)
	}
	w, err := watch.Start(t.Context(), reg, &watch.Options{MaxWatches: 6})
	if err != nil {
		t.Fatalf("Start at MaxWatches: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Error(err)
	}
}

// BenchmarkChangeVisible measures the time from a SKILL.md write to the
// registry's snapshot showing it, with the default debounce (target:
// 500 ms).
func BenchmarkChangeVisible(b *testing.B) {
	root := b.TempDir()
	for i := range 50 {
		writeSkill(b, root, "skill-"+string(rune('a'+i%26))+string(rune('a'+i/26)), "Version 0.")
	}
	src, _ := source.Dir(root, "root", 0)
	reg, err := registry.New(b.Context(), []source.Source{src}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	changed := make(chan struct{}, 1)
	w, err := watch.Start(b.Context(), reg, &watch.Options{OnChange: func(context.Context, *registry.Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		want := "Version " + string(rune('1'+i%9)) + "."
		start := time.Now()
		writeSkill(b, root, "skill-aa", want)
		for {
			<-changed
			if sum, _ := reg.Snapshot().Lookup("skill-aa"); sum.Description == want {
				break
			}
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/change")
}

// TestWatchLinkedRoot serves a root that is a symbolic link, as an atomic
// deploy makes one: edits where it leads are seen, and so is the link
// swapped to another folder.
func TestWatchLinkedRoot(t *testing.T) {
	base := t.TempDir()
	v1, v2 := filepath.Join(base, "v1"), filepath.Join(base, "v2")
	writeSkill(t, v1, "alpha", "Version one.")
	writeSkill(t, v2, "beta", "Version two.")
	current := filepath.Join(base, "current")
	if err := os.Symlink(v1, current); err != nil {
		t.Fatal(err)
	}
	_, snaps, _ := watched(t, current)
	writeSkill(t, v1, "alpha", "Edited in v1.")
	until(t, snaps, "the edit where the link leads", func(s *registry.Snapshot) bool {
		sum, _ := s.Lookup("alpha")
		return sum.Description == "Edited in v1."
	})
	// Swap the link atomically.
	tmp := filepath.Join(base, "current.tmp")
	if err := os.Symlink(v2, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, current); err != nil {
		t.Fatal(err)
	}
	until(t, snaps, "v2 after the swap", func(s *registry.Snapshot) bool { return names(s) == "beta" })
	writeSkill(t, v2, "beta", "Edited in v2.")
	until(t, snaps, "the edit in v2", func(s *registry.Snapshot) bool {
		sum, _ := s.Lookup("beta")
		return sum.Description == "Edited in v2."
	})
}

// TestWatchLinkedSkillFolder edits a skill reached through a link inside
// a root.
func TestWatchLinkedSkillFolder(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	writeSkill(t, elsewhere, "gamma", "Outside the root.")
	if err := os.Symlink(filepath.Join(elsewhere, "gamma"), filepath.Join(root, "gamma")); err != nil {
		t.Fatal(err)
	}
	_, snaps, _ := watched(t, root)
	writeSkill(t, elsewhere, "gamma", "Edited through the link.")
	until(t, snaps, "the linked skill's edit", func(s *registry.Snapshot) bool {
		sum, _ := s.Lookup("gamma")
		return sum.Description == "Edited through the link."
	})
}
