package workspace

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"
)

func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ageTree sets every mtime under dir an hour back, as for a skill that has
// been on disk for a while (recent mtimes are not trusted for caching).
func ageTree(t testing.TB, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			os.Chtimes(p, old, old)
		}
		return err
	})
}

func stage(t *testing.T, w *Workspace, name string, src fs.FS) *StageResult {
	t.Helper()
	res, err := w.Stage(context.Background(), name, src)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestStageLifecycle(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src, "SKILL.md", "---\nname: demo\n---\n")
	writeFile(t, src, "scripts/run.py", "print('hi')\n")
	if err := os.Chmod(filepath.Join(src, "scripts/run.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, src, ".git/HEAD", "ref\n")
	writeFile(t, src, "node_modules/x/index.js", "x\n")
	writeFile(t, src, "scripts/__pycache__/run.pyc", "\x00")
	writeFile(t, src, ".venv/bin/python", "host venv\n")
	ageTree(t, src)

	w := openTest(t, newTestManager(t, nil), "s")
	dir, _ := w.SkillDir("demo")

	// First time: copied.
	res := stage(t, w, "demo", os.DirFS(src))
	if !res.Copied || res.Files != 2 || res.Dir != dir || !strings.HasPrefix(res.Digest, "sha256:") {
		t.Fatalf("first stage = %+v", res)
	}
	if got := readFile(t, filepath.Join(dir, "scripts/run.py")); got != "print('hi')\n" {
		t.Errorf("copied content = %q", got)
	}
	if info, _ := os.Stat(filepath.Join(dir, "scripts/run.py")); info.Mode()&0o111 == 0 {
		t.Errorf("executable bit lost: %v", info.Mode())
	}
	for _, skipped := range []string{".git", "node_modules", "scripts/__pycache__", ".venv"} {
		if _, err := os.Lstat(filepath.Join(dir, skipped)); !os.IsNotExist(err) {
			t.Errorf("%s was copied", skipped)
		}
	}

	// The working copy is writable: a command edits a file and builds a venv.
	writeFile(t, dir, "SKILL.md", "edited by a command\n")
	writeFile(t, dir, ".venv/bin/python", "venv\n")

	// Unchanged: nothing copied, .venv survives, the edit is put back.
	res2 := stage(t, w, "demo", os.DirFS(src))
	if res2.Copied || res2.Digest != res.Digest || !slices.Equal(res2.Restored, []string{"SKILL.md"}) {
		t.Fatalf("unchanged restage = %+v, want SKILL.md restored", res2)
	}
	if got := readFile(t, filepath.Join(dir, "SKILL.md")); got != "---\nname: demo\n---\n" {
		t.Errorf("unchanged restage kept the edited SKILL.md: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".venv/bin/python")); err != nil {
		t.Errorf(".venv dropped on unchanged restage: %v", err)
	}

	// A new Manager (another process) reuses the manifest on disk.
	m2 := newTestManager(t, &Options{Root: w.m.Root()})
	if res3 := stage(t, openTest(t, m2, "s"), "demo", os.DirFS(src)); res3.Copied {
		t.Errorf("fresh Manager recopied an unchanged skill")
	}

	// Changed: replaced, the edit and .venv are gone, a removed file too.
	writeFile(t, src, "scripts/new.sh", "echo new\n")
	os.Remove(filepath.Join(src, "scripts/run.py"))
	res4 := stage(t, w, "demo", os.DirFS(src))
	if !res4.Copied || res4.Digest == res.Digest {
		t.Fatalf("changed restage = %+v", res4)
	}
	if got := readFile(t, filepath.Join(dir, "SKILL.md")); got != "---\nname: demo\n---\n" {
		t.Errorf("SKILL.md after change = %q", got)
	}
	for _, gone := range []string{".venv", "scripts/run.py"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s survived a changed restage", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err != nil {
		t.Errorf("workspace link missing after replace: %v", err)
	}
	// No temporary directories are left behind.
	left, _ := os.ReadDir(w.SkillsDir())
	for _, e := range left {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temp dir left: skills/%s", e.Name())
		}
	}
}

func TestStageCacheBySizeAndMTime(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src, "a.txt", "aaaa")
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(src, "a.txt"), old, old)
	w := openTest(t, newTestManager(t, nil), "s")
	dir, _ := w.SkillDir("x")
	stage(t, w, "x", os.DirFS(src))

	// Same size and mtime: the cached hash is trusted, so a content change
	// that hides its tracks is not seen. This is the observable proof that
	// an unchanged skill is not re-read.
	writeFile(t, src, "a.txt", "bbbb")
	os.Chtimes(filepath.Join(src, "a.txt"), old, old)
	if res := stage(t, w, "x", os.DirFS(src)); res.Copied {
		t.Fatal("restage re-read a file whose size and mtime were unchanged")
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "aaaa" {
		t.Errorf("staged = %q, want the cached aaaa", got)
	}
	// A new mtime makes it re-read and replaced.
	now := time.Now().Add(-time.Minute)
	os.Chtimes(filepath.Join(src, "a.txt"), now, now)
	if res := stage(t, w, "x", os.DirFS(src)); !res.Copied {
		t.Fatal("changed mtime not noticed")
	}
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "bbbb" {
		t.Errorf("staged = %q, want bbbb", got)
	}
	// Touching without changing content: re-hashed, not copied.
	writeFile(t, dir, ".venv/marker", "kept")
	later := time.Now().Add(-30 * time.Second)
	os.Chtimes(filepath.Join(src, "a.txt"), later, later)
	if res := stage(t, w, "x", os.DirFS(src)); res.Copied {
		t.Error("touched but unchanged file caused a copy")
	}
	if _, err := os.Stat(filepath.Join(dir, ".venv/marker")); err != nil {
		t.Error("touched but unchanged file replaced the copy")
	}
}

func TestStageRacyMTime(t *testing.T) {
	// A file hashed within racyWindow of its mtime is re-read next time,
	// even when size and mtime look unchanged.
	src := t.TempDir()
	writeFile(t, src, "a.txt", "aaaa")
	info, _ := os.Stat(filepath.Join(src, "a.txt"))
	w := openTest(t, newTestManager(t, nil), "s")
	stage(t, w, "x", os.DirFS(src))
	writeFile(t, src, "a.txt", "bbbb")
	os.Chtimes(filepath.Join(src, "a.txt"), info.ModTime(), info.ModTime())
	if res := stage(t, w, "x", os.DirFS(src)); !res.Copied {
		t.Fatal("same-size rewrite within the mtime granularity was missed")
	}
	dir, _ := w.SkillDir("x")
	if got := readFile(t, filepath.Join(dir, "a.txt")); got != "bbbb" {
		t.Errorf("staged = %q", got)
	}
}

func TestStageWithoutMTimes(t *testing.T) {
	// fstest.MapFS, like embed.FS, has no mtimes: content decides.
	src := fstest.MapFS{
		"SKILL.md":   {Data: []byte("v1")},
		"ref/doc.md": {Data: []byte("doc")},
	}
	w := openTest(t, newTestManager(t, nil), "s")
	dir, _ := w.SkillDir("m")
	if res := stage(t, w, "m", src); !res.Copied || res.Files != 2 {
		t.Fatalf("first = %+v", res)
	}
	writeFile(t, dir, ".venv/ok", "")
	if res := stage(t, w, "m", src); res.Copied {
		t.Fatal("unchanged MapFS recopied")
	}
	if _, err := os.Stat(filepath.Join(dir, ".venv/ok")); err != nil {
		t.Error(".venv lost on unchanged restage")
	}
	src["SKILL.md"] = &fstest.MapFile{Data: []byte("v2")}
	if res := stage(t, w, "m", src); !res.Copied {
		t.Fatal("changed MapFS not recopied")
	}
	if got := readFile(t, filepath.Join(dir, "SKILL.md")); got != "v2" {
		t.Errorf("SKILL.md = %q", got)
	}
	// fs.Sub of an FS (as with embed.FS) works the same.
	sub, _ := fs.Sub(fstest.MapFS{"skills/k/SKILL.md": {Data: []byte("k")}}, "skills/k")
	if res := stage(t, w, "k", sub); !res.Copied || res.Files != 1 {
		t.Errorf("fs.Sub stage = %+v", res)
	}
}

func TestStageSymlinks(t *testing.T) {
	base := t.TempDir()
	secret := filepath.Join(base, "secret.txt")
	writeFile(t, base, "secret.txt", "top secret")
	src := filepath.Join(base, "skill")
	writeFile(t, src, "SKILL.md", "s")
	writeFile(t, src, "data/real.txt", "real")
	links := map[string]string{
		"abs":        secret,
		"up":         "../secret.txt",
		"data/up2":   "../../secret.txt",
		"self":       ".",                  // inside: the skill root
		"trick":      "self/../secret.txt", // lexically inside, physically outside
		"dangling":   "missing",
		"loop":       "loop",
		"data/alias": "real.txt",
		"datalink":   "data",
		"via":        "datalink/real.txt",
		"out":        "data", // reserved name
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	w := openTest(t, newTestManager(t, nil), "s")
	res := stage(t, w, "demo", os.DirFS(src))
	var skipped []string
	for _, s := range res.Skipped {
		skipped = append(skipped, s.Path)
	}
	slices.Sort(skipped)
	want := []string{"abs", "dangling", "data/up2", "loop", "out", "trick", "up"}
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped = %v, want %v (%+v)", skipped, want, res.Skipped)
	}
	dir, _ := w.SkillDir("demo")
	for _, name := range []string{"data/alias", "via"} {
		if got := readFile(t, filepath.Join(dir, name)); got != "real" {
			t.Errorf("%s = %q, want real", name, got)
		}
	}
	if target, _ := os.Readlink(filepath.Join(dir, "via")); target != "data/real.txt" {
		t.Errorf("via -> %q, want the resolved data/real.txt", target)
	}
	// Nothing in the copy leads outside it, and nothing outside was written.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 || filepath.Dir(p) == dir && workspaceLink(d.Name()) != "" {
			return err
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Errorf("%s dangles", p)
			return nil
		}
		realDir, _ := filepath.EvalSymlinks(dir)
		if rel, _ := filepath.Rel(realDir, real); !filepath.IsLocal(rel) && rel != "." {
			t.Errorf("%s leads out of the copy to %s", p, real)
		}
		return nil
	})
	if got := readFile(t, secret); got != "top secret" {
		t.Errorf("secret modified: %q", got)
	}
}

func TestStageSpecialFile(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src, "SKILL.md", "s")
	if err := syscall.Mkfifo(filepath.Join(src, "fifo"), 0o600); err != nil {
		t.Skipf("mkfifo not available: %v", err)
	}
	w := openTest(t, newTestManager(t, nil), "s")
	res := stage(t, w, "x", os.DirFS(src))
	if len(res.Skipped) != 1 || res.Skipped[0].Path != "fifo" {
		t.Errorf("skipped = %+v, want the fifo", res.Skipped)
	}
}

func TestStageLimits(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src, "a", "12345")
	writeFile(t, src, "b", "67890")
	tests := []struct {
		name  string
		opts  Options
		field string // "" means success
	}{
		{"files at limit", Options{MaxSkillFiles: 2}, ""},
		{"files past limit", Options{MaxSkillFiles: 1}, "MaxSkillFiles"},
		{"bytes at limit", Options{MaxSkillBytes: 10}, ""},
		{"bytes past limit", Options{MaxSkillBytes: 9}, "MaxSkillBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openTest(t, newTestManager(t, &tt.opts), "s")
			_, err := w.Stage(context.Background(), "x", os.DirFS(src))
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("err = %v, want ErrLimit naming %s", err, tt.field)
			}
			if _, err := os.Stat(filepath.Join(w.SkillsDir(), "x")); !os.IsNotExist(err) {
				t.Error("a skill over the limit was staged")
			}
		})
	}
}

func TestStageCanceled(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src, "a", "1")
	w := openTest(t, newTestManager(t, nil), "s")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Stage(ctx, "x", os.DirFS(src)); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if _, err := w.Stage(context.Background(), "x", nil); err == nil {
		t.Error("nil source accepted")
	}
}

func TestRelSlash(t *testing.T) {
	tests := []struct{ from, to, want string }{
		{".", "a/b", "a/b"},
		{"a", "a/b", "b"},
		{"a/b", "c", "../../c"},
		{"a/b", ".", "../.."},
		{"a", "a", "."},
	}
	for _, tt := range tests {
		if got := relSlash(tt.from, tt.to); got != tt.want {
			t.Errorf("relSlash(%q, %q) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
}

// FuzzStageLinkTarget checks that whatever a source link points at, the
// staged copy holds no link leading out of it.
func FuzzStageLinkTarget(f *testing.F) {
	for _, s := range []string{"../x", "/etc/passwd", ".", "d/../..", "self/../x", "a/b", "d", "d/f", "loop", ""} {
		f.Add(s)
	}
	m, err := New(&Options{Root: filepath.Join(f.TempDir(), "ws"), InMemoryVolumes: true})
	f.Cleanup(func() { _ = m.Close() })
	if err != nil {
		f.Fatal(err)
	}
	w, err := m.Open(context.Background(), "s")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, target string) {
		src := fstest.MapFS{
			"SKILL.md": {Data: []byte("s")},
			"d/f":      {Data: []byte("f")},
			"self":     {Data: []byte("."), Mode: fs.ModeSymlink},
			"loop":     {Data: []byte("loop"), Mode: fs.ModeSymlink},
			"d/link":   {Data: []byte(target), Mode: fs.ModeSymlink},
		}
		if _, err := w.Stage(context.Background(), "f", src); err != nil {
			return // e.g. a target MapFS itself rejects
		}
		dir, _ := w.SkillDir("f")
		target, err := os.Readlink(filepath.Join(dir, "d", "link"))
		if err != nil {
			return // skipped
		}
		if filepath.IsAbs(target) || !filepath.IsLocal(filepath.Join("d", target)) {
			t.Fatalf("link %q staged as %q, which leaves the copy", src["d/link"].Data, target)
		}
	})
}
