package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newTestManager returns a Manager rooted in a fresh temporary directory
// (unless opts names one) whose volumes, as root, are in memory, and
// unmounts them when the test ends so that its directory can be removed.
func newTestManager(t testing.TB, opts *Options) *Manager {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Root == "" {
		o.Root = filepath.Join(t.TempDir(), "ws")
	}
	if o.DiskBytes == 0 {
		o.InMemoryVolumes = true
	}
	m, err := New(&o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("close the test Manager: %v", err)
		}
	})
	return m
}

func openTest(t *testing.T, m *Manager, id string) *Workspace {
	t.Helper()
	w, err := m.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestNewOptions(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want string // substring of the error; "" means success
	}{
		{"defaults", Options{Root: dir}, ""},
		{"negative TTL", Options{Root: dir, TTL: -1}, "Options.TTL"},
		{"negative MaxSkillFiles", Options{Root: dir, MaxSkillFiles: -1}, "Options.MaxSkillFiles"},
		{"negative MaxSkillBytes", Options{Root: dir, MaxSkillBytes: -1}, "Options.MaxSkillBytes"},
		{"negative MaxInputFiles", Options{Root: dir, MaxInputFiles: -1}, "Options.MaxInputFiles"},
		{"negative MaxInputBytes", Options{Root: dir, MaxInputBytes: -1}, "Options.MaxInputBytes"},
		{"relative input root", Options{Root: dir, InputRoots: []string{"rel"}}, "Options.InputRoots[0]"},
		{"missing input root", Options{Root: dir, InputRoots: []string{filepath.Join(dir, "nope")}}, "Options.InputRoots[0]"},
		{"file input root", Options{Root: dir, InputRoots: []string{dir, file}}, "Options.InputRoots[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := New(&tt.opts)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m.ttl != DefaultTTL || m.maxSkillFiles != DefaultMaxSkillFiles || m.maxInputBytes != DefaultMaxInputBytes {
					t.Errorf("defaults not applied: %+v", m)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrInvalidOption naming %s", err, tt.want)
			}
		})
	}
}

func TestDefaultRoot(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	m, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.UserCacheDir()
	if want = filepath.Join(want, "skillkit", "workspaces"); m.Root() != want {
		t.Errorf("Root() = %s, want %s", m.Root(), want)
	}
}

func TestValidName(t *testing.T) {
	long := strings.Repeat("a", maxIDLen)
	tests := []struct {
		id string
		ok bool
	}{
		{"s1", true},
		{"0b7c-uuid_like.v2", true},
		{long, true},
		{long + "a", false},
		{"", false},
		{".", false},
		{"..", false},
		{".hidden", false},
		{"a/b", false},
		{`a\b`, false},
		{"../x", false},
		{"a b", false},
		{"a\x00b", false},
		{"é", false},
	}
	m := newTestManager(t, nil)
	for _, tt := range tests {
		_, err := m.Open(context.Background(), tt.id)
		if (err == nil) != tt.ok {
			t.Errorf("Open(%q) err = %v, want ok=%v", tt.id, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("Open(%q) err = %v, want ErrInvalidName", tt.id, err)
		}
	}
	w := openTest(t, m, "s")
	for _, name := range []string{"..", "a/b", strings.Repeat("x", maxSkillLen+1)} {
		if _, err := w.Stage(context.Background(), name, os.DirFS(t.TempDir())); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Stage(%q) err = %v, want ErrInvalidName", name, err)
		}
	}
	if _, err := w.SkillDir(strings.Repeat("x", maxSkillLen)); err != nil {
		t.Errorf("SkillDir at the length limit: %v", err)
	}
}

func TestLayoutAndEnv(t *testing.T) {
	m := newTestManager(t, nil)
	w := openTest(t, m, "sess")
	for _, d := range []string{"skills", "work", "work/inputs", "out", "runs"} {
		if info, err := os.Stat(filepath.Join(w.Dir(), d)); err != nil || !info.IsDir() {
			t.Errorf("layout: %s missing (%v)", d, err)
		}
	}
	src := t.TempDir()
	writeFile(t, src, "SKILL.md", "# demo\n")
	if _, err := w.Stage(context.Background(), "demo", os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	// The links inside the skill copy reach the workspace directories.
	skillDir, _ := w.SkillDir("demo")
	for link, want := range map[string]string{"out": w.OutputDir(), "work": w.WorkDir(), "inputs": w.InputsDir()} {
		got, err := filepath.EvalSymlinks(filepath.Join(skillDir, link))
		if err != nil {
			t.Fatalf("link %s: %v", link, err)
		}
		wantReal, _ := filepath.EvalSymlinks(want)
		if got != wantReal {
			t.Errorf("link %s -> %s, want %s", link, got, wantReal)
		}
		if target, _ := os.Readlink(filepath.Join(skillDir, link)); filepath.IsAbs(target) {
			t.Errorf("link %s is absolute (%s); it must be relative", link, target)
		}
	}

	run1, err := w.NewRun(context.Background(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	run2, err := w.NewRun(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	if run1.Dir == run2.Dir {
		t.Errorf("two runs share %s", run1.Dir)
	}
	for _, r := range []*Run{run1, run2} {
		if info, err := os.Stat(r.Dir); err != nil || !info.IsDir() || filepath.Dir(r.Dir) != w.RunsDir() {
			t.Errorf("run dir %s: %v", r.Dir, err)
		}
	}
	want := map[string]string{
		"WORKSPACE_DIR": w.Dir(), "SKILLS_DIR": w.SkillsDir(), "WORK_DIR": w.WorkDir(),
		"OUTPUT_DIR": w.OutputDir(), "RUN_DIR": run1.Dir, "SKILL_NAME": "demo",
	}
	if len(run1.Env) != len(want) {
		t.Errorf("env = %v, want %v", run1.Env, want)
	}
	for k, v := range want {
		if run1.Env[k] != v {
			t.Errorf("env %s = %q, want %q", k, run1.Env[k], v)
		}
	}
	if _, ok := run2.Env["SKILL_NAME"]; ok || run2.SkillDir != "" {
		t.Errorf("run without skill has SKILL_NAME/SkillDir: %v %q", run2.Env, run2.SkillDir)
	}
	if run1.SkillDir != skillDir {
		t.Errorf("SkillDir = %s, want %s", run1.SkillDir, skillDir)
	}
	env := run1.Environ()
	if len(env) != 6 || env[0] != "OUTPUT_DIR="+w.OutputDir() || env[5] != "WORK_DIR="+w.WorkDir() {
		t.Errorf("Environ() = %v, want sorted KEY=value", env)
	}
	if _, err := w.NewRun(context.Background(), "other"); !errors.Is(err, ErrNotStaged) {
		t.Errorf("NewRun(unstaged) err = %v, want ErrNotStaged", err)
	}
}

func TestSweep(t *testing.T) {
	const ttl = time.Hour
	m := newTestManager(t, &Options{TTL: ttl})
	ctx := context.Background()
	age := func(w *Workspace, d time.Duration) {
		t.Helper()
		old := time.Now().Add(-d)
		if err := os.Chtimes(filepath.Join(m.MetaRoot(), w.ID(), usedName), old, old); err != nil {
			t.Fatal(err)
		}
	}
	fresh := openTest(t, m, "fresh")
	nearly := openTest(t, m, "nearly")
	stale := openTest(t, m, "stale")
	busy := openTest(t, m, "busy")
	age(nearly, ttl-time.Minute)
	age(stale, ttl+time.Minute)
	unlock, err := busy.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	age(busy, ttl+time.Minute)
	// A directory that is not a workspace is never removed.
	stranger := filepath.Join(m.Root(), "not-a-workspace")
	if err := os.Mkdir(stranger, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-10 * ttl)
	os.Chtimes(stranger, old, old)

	removed, err := m.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != "stale" {
		t.Errorf("removed = %v, want [stale]", removed)
	}
	for _, w := range []*Workspace{fresh, nearly, busy} {
		if _, err := os.Stat(w.Dir()); err != nil {
			t.Errorf("%s was removed: %v", w.ID(), err)
		}
	}
	if _, err := os.Stat(stale.Dir()); !os.IsNotExist(err) {
		t.Errorf("stale still exists: %v", err)
	}
	if _, err := os.Stat(stranger); err != nil {
		t.Errorf("non-workspace directory removed: %v", err)
	}
	unlock()
	// Unlocking records use: busy is fresh now.
	if removed, _ := m.Sweep(ctx); len(removed) != 0 {
		t.Errorf("after unlock removed = %v, want none", removed)
	}
	// A stale handle recreates its workspace when locked again.
	unlock, err = stale.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Stat(filepath.Join(stale.Dir(), "out")); err != nil {
		t.Errorf("layout not recreated after sweep: %v", err)
	}
}

func TestOpenSweepsWhenDue(t *testing.T) {
	const ttl = time.Hour
	m := newTestManager(t, &Options{TTL: ttl})
	stale := openTest(t, m, "stale")
	old := time.Now().Add(-ttl - time.Minute)
	if err := os.Chtimes(filepath.Join(m.MetaRoot(), stale.ID(), usedName), old, old); err != nil {
		t.Fatal(err)
	}
	// The last sweep was recent: opening another workspace does not sweep.
	openTest(t, m, "second")
	if _, err := os.Stat(stale.Dir()); err != nil {
		t.Fatalf("swept although the last sweep was recent: %v", err)
	}
	// A quarter of the TTL later, the next Open sweeps.
	due := time.Now().Add(-ttl/4 - time.Minute)
	if err := os.Chtimes(filepath.Join(m.MetaRoot(), sweepStampName), due, due); err != nil {
		t.Fatal(err)
	}
	openTest(t, m, "third")
	if _, err := os.Stat(stale.Dir()); !os.IsNotExist(err) {
		t.Errorf("stale workspace not removed by Open's sweep: %v", err)
	}
	for _, id := range []string{"second", "third"} {
		if _, err := os.Stat(filepath.Join(m.Root(), id)); err != nil {
			t.Errorf("fresh workspace %s removed: %v", id, err)
		}
	}
}
