package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\n---\n\n# " + name + "\n\nBody of " + name + ".\n"
}

func mapSource(label string, rank int, files map[string]string) source.Source {
	m := fstest.MapFS{}
	for k, v := range files {
		m[k] = &fstest.MapFile{Data: []byte(v), ModTime: time.Unix(1000, 0)}
	}
	return source.FS(m, label, rank)
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// bump gives a file a new modification time, so that a rewrite is seen
// as a change even on coarse-grained clocks.
func bump(t *testing.T, p string, d time.Duration) {
	t.Helper()
	at := time.Now().Add(d)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
}

// countFS wraps a file system, counts every call made through it and,
// when armed, fails them all.
type countFS struct {
	inner fs.FS
	calls atomic.Int64
	fail  atomic.Bool
}

var errArmed = errors.New("file system access after arming")

func (c *countFS) hit() error {
	c.calls.Add(1)
	if c.fail.Load() {
		return errArmed
	}
	return nil
}

func (c *countFS) Open(name string) (fs.File, error) {
	if err := c.hit(); err != nil {
		return nil, err
	}
	return c.inner.Open(name)
}

func (c *countFS) Stat(name string) (fs.FileInfo, error) {
	if err := c.hit(); err != nil {
		return nil, err
	}
	return fs.Stat(c.inner, name)
}

func (c *countFS) Lstat(name string) (fs.FileInfo, error) {
	if err := c.hit(); err != nil {
		return nil, err
	}
	return fs.Lstat(c.inner, name)
}

func (c *countFS) ReadLink(name string) (string, error) {
	if err := c.hit(); err != nil {
		return "", err
	}
	return fs.ReadLink(c.inner, name)
}

func (c *countFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := c.hit(); err != nil {
		return nil, err
	}
	return fs.ReadDir(c.inner, name)
}

func names(ss []skill.Summary) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+"@"+s.Source)
	}
	return out
}

func newReg(t *testing.T, srcs []source.Source, opts *Options) *Registry {
	t.Helper()
	r, err := New(context.Background(), srcs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestShadowing(t *testing.T) {
	user := mapSource("user", 2, map[string]string{
		"pdf/SKILL.md":   skillMD("pdf", "user pdf"),
		"notes/SKILL.md": skillMD("notes", "user notes"),
	})
	project := mapSource("project", 1, map[string]string{
		"pdf/SKILL.md": skillMD("pdf", "project pdf"),
		// Same name twice in one source: the first folder in byte order wins.
		"a/dup/SKILL.md": skillMD("dup", "first dup"),
		"b/dup/SKILL.md": skillMD("dup", "second dup"),
	})
	firstA := mapSource("first", 0, map[string]string{"same/SKILL.md": skillMD("same", "from first")})
	firstB := mapSource("second", 0, map[string]string{"same/SKILL.md": skillMD("same", "from second")})
	// Given out of rank order on purpose.
	r := newReg(t, []source.Source{user, project, firstA, firstB}, nil)
	s := r.Snapshot()

	if got, want := names(s.Summaries()), []string{"dup@project", "notes@user", "pdf@project", "same@first"}; !slices.Equal(got, want) {
		t.Errorf("winners %q, want %q", got, want)
	}
	if got := r.Sources(); got[0].Label != "first" || got[1].Label != "second" || got[2].Label != "project" || got[3].Label != "user" {
		t.Errorf("sources not in rank order (equal ranks in the given order): %v", got)
	}
	type shadow struct{ name, loser, loserDir, winner string }
	var got []shadow
	for _, sh := range s.Shadowed() {
		got = append(got, shadow{sh.Skill.Name, sh.Skill.Source, sh.Skill.Dir, sh.By.Source})
	}
	slices.SortFunc(got, func(a, b shadow) int { return strings.Compare(a.name, b.name) })
	want := []shadow{
		{"dup", "project", "b/dup", "project"},
		{"pdf", "user", "pdf", "project"},
		{"same", "second", "same", "first"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("shadowed %v, want %v", got, want)
	}
	var warned []string
	for _, d := range s.Diagnostics() {
		if d.Severity == skill.Warning && strings.Contains(d.Message, "is shadowed by") {
			warned = append(warned, d.File)
		}
	}
	slices.Sort(warned)
	if w := []string{"project/b/dup/SKILL.md", "second/same/SKILL.md", "user/pdf/SKILL.md"}; !slices.Equal(warned, w) {
		t.Errorf("shadow diagnostics name %q, want %q", warned, w)
	}
	if d, _ := s.Lookup("pdf"); d.Description != "project pdf" || d.Rank != 1 {
		t.Errorf("Lookup(pdf) = %+v", d)
	}
	if body, err := s.Body(context.Background(), "dup"); err != nil || !strings.Contains(body, "Body of dup") {
		t.Errorf("Body(dup) = %q, %v", body, err)
	}
	if fm, _ := s.Frontmatter("dup"); fm.Description != "first dup" {
		t.Errorf("winner of the in-source conflict = %q, want the first folder", fm.Description)
	}
}

// tenantKey carries the request's tenant for filters.
type tenantKey struct{}

func TestViewFilters(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"public/SKILL.md":     skillMD("public", "for everyone"),
		"secret/SKILL.md":     skillMD("secret", "for tenant a"),
		"secret/guide.md":     "# Guide\n",
		"secret/tool.sh":      "echo hi\n",
		"other/SKILL.md":      skillMD("other", "also public"),
		"other/reference.txt": "text\n",
	})
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := newReg(t, []source.Source{src}, nil).Snapshot()
	onlyTenantA := func(ctx context.Context, sum skill.Summary) bool {
		return sum.Name != "secret" || ctx.Value(tenantKey{}) == "a"
	}
	noOther := func(_ context.Context, sum skill.Summary) bool { return sum.Name != "other" }

	ctxB := context.WithValue(context.Background(), tenantKey{}, "b")
	ctxA := context.WithValue(context.Background(), tenantKey{}, "a")
	if v := s.View(ctxA, onlyTenantA); v.Len() != 3 {
		t.Errorf("tenant a sees %d skills, want 3", v.Len())
	}
	if v := s.View(ctxA); v != s {
		t.Error("View with no filters should return the snapshot itself")
	}
	v := s.View(ctxB, onlyTenantA, nil, noOther)
	if got := names(v.Summaries()); !slices.Equal(got, []string{"public@root"}) {
		t.Errorf("visible %q, want only public", got)
	}
	for _, name := range []string{"secret", "other"} {
		if _, ok := v.Lookup(name); ok {
			t.Errorf("Lookup(%s) found a hidden skill", name)
		}
		if _, ok := v.Frontmatter(name); ok {
			t.Errorf("Frontmatter(%s) found a hidden skill", name)
		}
		if _, ok := v.SkillFile(name); ok {
			t.Errorf("SkillFile(%s) found a hidden skill", name)
		}
		checks := map[string]error{}
		_, checks["Body"] = v.Body(ctxB, name)
		_, _, checks["Manifest"] = v.Manifest(ctxB, name)
		_, checks["Docs"] = v.Docs(ctxB, name)
		_, checks["ReadFile"] = v.ReadFile(ctxB, name, "SKILL.md")
		_, checks["DocText"] = v.DocText(ctxB, name, "guide.md")
		_, checks["FS"] = v.FS(name)
		_, checks["Files"] = v.Files(ctxB, name)
		_, checks["Digests"] = v.Digests(ctxB, name)
		_, checks["ResolveDocs"] = v.ResolveDocs(ctxB, name, []string{"guide.md"})
		for method, err := range checks {
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("%s(%s) on the view: err = %v, want ErrNotFound", method, name, err)
			}
		}
	}
	// The unfiltered snapshot is untouched.
	if s.Len() != 3 {
		t.Errorf("snapshot lost skills to a view: %d", s.Len())
	}
	if text, err := s.DocText(ctxB, "secret", "guide.md"); err != nil || text != "# Guide\n" {
		t.Errorf("DocText on the snapshot = %q, %v", text, err)
	}
}

func TestListingDoesNoIO(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a/SKILL.md": skillMD("a", "first"),
		"b/SKILL.md": skillMD("b", "second"),
	})
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	cfs := &countFS{inner: src.FS}
	src.FS = cfs
	r := newReg(t, []source.Source{src}, nil)
	if cfs.calls.Load() == 0 {
		t.Fatal("the counting file system saw no discovery calls; the test is not wired")
	}
	cfs.calls.Store(0)
	cfs.fail.Store(true)

	ctx := context.Background()
	s := r.Snapshot()
	for range 3 {
		if n := len(s.Summaries()); n != 2 {
			t.Fatalf("Summaries: %d", n)
		}
		if _, ok := s.Lookup("a"); !ok {
			t.Fatal("Lookup(a) failed")
		}
		v := s.View(ctx, func(context.Context, skill.Summary) bool { return true })
		if n := len(v.Summaries()); n != 2 {
			t.Fatalf("View.Summaries: %d", n)
		}
		if _, ok := v.Lookup("b"); !ok {
			t.Fatal("View.Lookup(b) failed")
		}
		_, _ = s.Frontmatter("a")
		_, _ = s.SkillFile("a")
		_ = s.Shadowed()
		_ = s.Diagnostics()
		_ = s.Len()
	}
	if n := cfs.calls.Load(); n != 0 {
		t.Errorf("listing made %d file-system calls, want 0", n)
	}
	// Arming really fails content reads, so the zero above is meaningful.
	if _, err := s.Body(ctx, "a"); !errors.Is(err, errArmed) {
		t.Errorf("Body with the file system armed: err = %v, want the armed error", err)
	}
}

func TestContentCaching(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"a/SKILL.md":       skillMD("a", "first"),
		"a/docs/guide.md":  "guide v1\n",
		"b/SKILL.md":       skillMD("b", "second"),
		"c/SKILL.md":       skillMD("c", "third"),
		"c/reference.md":   "ref\n",
		"gone/SKILL.md":    skillMD("gone", "removed later"),
		"changed/SKILL.md": skillMD("changed", "old description"),
	})
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	cfs := &countFS{inner: src.FS}
	src.FS = cfs
	ctx := context.Background()
	r := newReg(t, []source.Source{src}, nil)
	s := r.Snapshot()

	// Body: the first call reads, the second does no I/O.
	cfs.calls.Store(0)
	body, err := s.Body(ctx, "a")
	if err != nil || body != "# a\n\nBody of a." {
		t.Fatalf("Body(a) = %q, %v", body, err)
	}
	if cfs.calls.Load() == 0 {
		t.Fatal("first Body call did no I/O")
	}
	cfs.calls.Store(0)
	if again, _ := s.Body(ctx, "a"); again != body || cfs.calls.Load() != 0 {
		t.Errorf("second Body call made %d file-system calls, want 0", cfs.calls.Load())
	}

	// DocText: the first call reads, later ones serve the pinned text
	// without touching the file system, even after the file changed; so
	// does the listing, even after a document was added.
	if text, err := s.DocText(ctx, "a", "docs/guide.md"); err != nil || text != "guide v1\n" {
		t.Fatalf("DocText = %q, %v", text, err)
	}
	cfs.calls.Store(0)
	if text, _ := s.DocText(ctx, "a", "docs/guide.md"); text != "guide v1\n" || cfs.calls.Load() != 0 {
		t.Errorf("pinned DocText = %q with %d calls, want the pinned text with 0", text, cfs.calls.Load())
	}
	guide := filepath.Join(root, "a", "docs", "guide.md")
	writeTree(t, root, map[string]string{"a/docs/guide.md": "guide v2, longer\n", "a/docs/new.md": "new\n"})
	bump(t, guide, time.Minute)
	if text, err := s.DocText(ctx, "a", "./docs/guide.md"); err != nil || text != "guide v1\n" {
		t.Errorf("DocText after a change = %q, %v; want the pinned text", text, err)
	}
	if docs, err := s.Docs(ctx, "a"); err != nil || !slices.Equal(docs, []string{"docs/guide.md"}) {
		t.Errorf("Docs(a) after adding a document = %q, %v; want the pinned listing", docs, err)
	}
	if n := cfs.calls.Load(); n != 0 {
		t.Errorf("pinned content made %d file-system calls, want 0", n)
	}
	if _, err := s.DocText(ctx, "a", "SKILL.md"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DocText(SKILL.md) err = %v, want ErrNotFound (not a document)", err)
	}

	// Refresh: add d, remove gone, change changed; a keeps its caches.
	frontA, _ := s.Frontmatter("a")
	writeTree(t, root, map[string]string{
		"d/SKILL.md":       skillMD("d", "added"),
		"changed/SKILL.md": skillMD("changed", "new description"),
	})
	bump(t, filepath.Join(root, "changed", "SKILL.md"), 2*time.Minute)
	if err := os.RemoveAll(filepath.Join(root, "gone")); err != nil {
		t.Fatal(err)
	}
	s2, err := r.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Snapshot() != s2 {
		t.Error("Refresh did not install its snapshot")
	}
	if got, want := names(s2.Summaries()), []string{"a@root", "b@root", "c@root", "changed@root", "d@root"}; !slices.Equal(got, want) {
		t.Errorf("after Refresh %q, want %q", got, want)
	}
	if sum, _ := s2.Lookup("changed"); sum.Description != "new description" {
		t.Errorf("changed skill not re-read: %q", sum.Description)
	}
	if f, _ := s2.Frontmatter("a"); f != frontA {
		t.Error("unchanged skill was parsed again")
	}
	cfs.calls.Store(0)
	if b, err := s2.Body(ctx, "a"); err != nil || b != body || cfs.calls.Load() != 0 {
		t.Errorf("Body(a) after Refresh made %d calls, want the cached body with 0", cfs.calls.Load())
	}
	// a's listed files changed: the new snapshot lists and reads them
	// anew, the old one keeps what it pinned.
	if docs, err := s2.Docs(ctx, "a"); err != nil || !slices.Equal(docs, []string{"docs/guide.md", "docs/new.md"}) {
		t.Errorf("Docs(a) after Refresh = %q, %v", docs, err)
	}
	if text, err := s2.DocText(ctx, "a", "docs/guide.md"); err != nil || text != "guide v2, longer\n" {
		t.Errorf("DocText(a) after Refresh = %q, %v", text, err)
	}
	if text, err := s.DocText(ctx, "a", "docs/guide.md"); err != nil || text != "guide v1\n" {
		t.Errorf("old snapshot's DocText(a) = %q, %v; want the text it pinned", text, err)
	}
	// The old snapshot still answers as it did.
	if _, ok := s.Lookup("gone"); !ok {
		t.Error("old snapshot changed under its readers")
	}
	if _, ok := s2.Lookup("gone"); ok {
		t.Error("removed skill still listed")
	}
}

func TestRootSkillWithoutName(t *testing.T) {
	root := filepath.Join(t.TempDir(), "solo")
	writeTree(t, root, map[string]string{"SKILL.md": "---\ndescription: Alone.\n---\nJust me.\n"})
	src, err := source.Dir(root, "solo", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := newReg(t, []source.Source{src}, nil).Snapshot()
	body, err := s.Body(context.Background(), "solo")
	if err != nil || body != "Just me." {
		t.Errorf("Body(solo) = %q, %v", body, err)
	}
	fsys, err := s.FS("solo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(fsys, "SKILL.md"); err != nil {
		t.Errorf("FS of a root skill: %v", err)
	}
}

func TestReadFile(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	writeTree(t, base, map[string]string{
		"outside.txt":              "secret\n",
		"root/s/SKILL.md":          skillMD("s", "reads files"),
		"root/s/exact.txt":         strings.Repeat("e", 100),
		"root/s/over.txt":          strings.Repeat("o", 101),
		"root/s/sub/notes.md":      "notes\n",
		"root/s/node_modules/x.js": "ignored\n",
		"root/other/SKILL.md":      skillMD("other", "neighbour"),
	})
	if err := os.Symlink(filepath.Join(base, "outside.txt"), filepath.Join(root, "s", "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/notes.md", filepath.Join(root, "s", "inside.md")); err != nil {
		t.Fatal(err)
	}
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := newReg(t, []source.Source{src}, &Options{MaxReadBytes: 100}).Snapshot()
	ctx := context.Background()
	tests := []struct {
		rel  string
		want string
		err  error
	}{
		{"exact.txt", strings.Repeat("e", 100), nil},
		{"./sub/notes.md", "notes\n", nil},
		{"inside.md", "notes\n", nil},
		{"sub/../exact.txt", strings.Repeat("e", 100), nil},
		{"over.txt", "", ErrTooLarge},
		{"../other/SKILL.md", "", ErrNotFound},
		{"../../outside.txt", "", ErrNotFound},
		{filepath.Join(base, "outside.txt"), "", ErrNotFound},
		{"/etc/passwd", "", ErrNotFound},
		{"escape.txt", "", ErrNotFound},
		{"node_modules/x.js", "", ErrNotFound},
		{"missing.txt", "", ErrNotFound},
		{"", "", ErrNotFound},
	}
	for _, tc := range tests {
		data, err := s.ReadFile(ctx, "s", tc.rel)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("ReadFile(%q) err = %v, want %v", tc.rel, err, tc.err)
			}
			continue
		}
		if err != nil || string(data) != tc.want {
			t.Errorf("ReadFile(%q) = %q, %v", tc.rel, data, err)
		}
	}
	if _, err := s.ReadFile(ctx, "nope", "SKILL.md"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown skill: err = %v", err)
	}
	// DocText obeys the same cap.
	writeTree(t, root, map[string]string{"s/big.md": strings.Repeat("b", 101)})
	r2 := newReg(t, []source.Source{src}, &Options{MaxReadBytes: 100})
	if _, err := r2.Snapshot().DocText(ctx, "s", "big.md"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("DocText over the cap: err = %v, want ErrTooLarge", err)
	}
	// A file that grows past the cap after the manifest was listed no
	// longer matches the listing.
	writeTree(t, root, map[string]string{"s/exact.txt": strings.Repeat("e", 150)})
	if _, err := s.ReadFile(ctx, "s", "exact.txt"); !errors.Is(err, ErrStale) {
		t.Errorf("grown file: err = %v, want ErrStale", err)
	}
}

func TestOptionErrors(t *testing.T) {
	ok := mapSource("m", 0, map[string]string{"a/SKILL.md": skillMD("a", "d")})
	tests := []struct {
		name string
		srcs []source.Source
		opts *Options
		want string
	}{
		{"negative workers", []source.Source{ok}, &Options{Workers: -1}, "Options.Workers is -1"},
		{"negative read cap", []source.Source{ok}, &Options{MaxReadBytes: -5}, "Options.MaxReadBytes is -5"},
		{"negative limit", []source.Source{ok}, &Options{Limits: skill.Limits{MaxFiles: -1}}, "MaxFiles is -1"},
		{"negative depth", []source.Source{{Label: "d", FS: ok.FS, MaxDepth: -2}}, nil, "MaxDepth is -2"},
		{"no file system", []source.Source{{Label: "nofs"}}, nil, `source "nofs" has no file system`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(context.Background(), tc.srcs, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	r, err := New(context.Background(), nil, nil)
	if err != nil || r.Snapshot().Len() != 0 {
		t.Errorf("no sources: %v", err)
	}
}

func TestRefreshSkipsUnreadableRoot(t *testing.T) {
	gone, kept := t.TempDir(), t.TempDir()
	writeTree(t, gone, map[string]string{"a/SKILL.md": skillMD("a", "d")})
	writeTree(t, kept, map[string]string{"b/SKILL.md": skillMD("b", "d")})
	var srcs []source.Source
	for i, root := range []string{gone, kept} {
		src, err := source.Dir(root, root, i)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	r := newReg(t, srcs, nil)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	// A root that disappeared contributes nothing and is reported; the
	// skills of the other roots stay available.
	s, err := r.Refresh(context.Background())
	if err != nil {
		t.Fatalf("Refresh with one root removed: %v", err)
	}
	if got := names(s.Summaries()); !slices.Equal(got, []string{"b@" + kept}) {
		t.Errorf("after removing a root: %q", got)
	}
	var reported bool
	for _, d := range s.Diagnostics() {
		reported = reported || d.Severity == skill.Error && strings.Contains(d.String(), gone) && strings.Contains(d.Message, "skill root skipped")
	}
	if !reported {
		t.Errorf("the removed root is not reported: %v", s.Diagnostics())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(ctx, []source.Source{mapSource("m", 0, map[string]string{"a/SKILL.md": skillMD("a", "d")})}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("New with a cancelled context: err = %v", err)
	}
}

func TestConcurrentRefresh(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 20 {
		name := fmt.Sprintf("s%02d", i)
		files[name+"/SKILL.md"] = skillMD(name, "skill "+name)
		files[name+"/guide.md"] = "guide " + name + "\n"
	}
	writeTree(t, root, files)
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := newReg(t, []source.Source{src}, nil)
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s := r.Snapshot()
				name := fmt.Sprintf("s%02d", (i+w)%20)
				if _, ok := s.Lookup(name); !ok {
					continue // being rewritten right now
				}
				_ = s.Summaries()
				_, _ = s.Body(ctx, name)
				_, _, _ = s.Manifest(ctx, name)
				_, _ = s.DocText(ctx, name, "guide.md")
				_ = s.View(ctx, func(_ context.Context, sum skill.Summary) bool { return sum.Name != name }).Summaries()
			}
		})
	}
	for i := range 30 {
		name := fmt.Sprintf("s%02d", i%20)
		writeTree(t, root, map[string]string{
			name + "/SKILL.md": skillMD(name, fmt.Sprintf("version %d", i)),
			name + "/guide.md": fmt.Sprintf("guide %d\n", i),
		})
		if _, err := r.Refresh(ctx); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if n := r.Snapshot().Len(); n != 20 {
		t.Errorf("after concurrent refreshes: %d skills", n)
	}
}

func TestRefreshKeepsDiagnostics(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"warn/SKILL.md":  "---\nname: warn\ndescription: d\nextra: field\n---\nBody\n",
		"other/SKILL.md": skillMD("other", "d"),
		"bad/SKILL.md":   "---\nname: bad\n---\n",
	})
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := newReg(t, []source.Source{src}, nil)
	first := r.Snapshot()
	want := first.Diagnostics()
	if len(want) != 2 {
		t.Fatalf("diagnostics %v, want a warning and an error", want)
	}
	same, err := r.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if same != first {
		t.Error("Refresh with nothing changed built a new snapshot")
	}
	// Change another skill: the unchanged one is reused, its warning stays.
	writeTree(t, root, map[string]string{"other/SKILL.md": skillMD("other", "changed")})
	bump(t, filepath.Join(root, "other", "SKILL.md"), time.Minute)
	next, err := r.Refresh(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if next == first {
		t.Fatal("Refresh after a change returned the old snapshot")
	}
	if got := next.Diagnostics(); !slices.Equal(got, want) {
		t.Errorf("diagnostics after Refresh %v, want %v", got, want)
	}
}

func TestBodyStaleAfterEdit(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a/SKILL.md": skillMD("a", "first")})
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := newReg(t, []source.Source{src}, nil)
	ctx := context.Background()
	// Edited after discovery and before the body was first read: the
	// snapshot must not pair the old header with the new body.
	writeTree(t, root, map[string]string{"a/SKILL.md": skillMD("a", "second")})
	if _, err := r.Snapshot().Body(ctx, "a"); !errors.Is(err, ErrStale) {
		t.Fatalf("Body after an edit: err = %v, want ErrStale", err)
	}
	bump(t, filepath.Join(root, "a", "SKILL.md"), time.Minute)
	s, err := r.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Body(ctx, "a"); err != nil {
		t.Fatalf("Body after Refresh: %v", err)
	}
}

func TestMemo(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a/SKILL.md": skillMD("a", "first"), "b/SKILL.md": skillMD("b", "second")})
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := newReg(t, []source.Source{src}, nil).Snapshot()
	type key struct{}
	builds := 0
	count := func(snap *Snapshot) func() (any, error) {
		return func() (any, error) { builds++; return snap.Len(), nil }
	}
	for range 3 {
		if v, err := s.Memo(key{}, count(s)); err != nil || v != 2 {
			t.Fatalf("Memo = %v, %v", v, err)
		}
	}
	if builds != 1 {
		t.Errorf("built %d times, want once", builds)
	}
	// A view has skills of its own, so its memo is separate.
	v := s.View(context.Background(), func(_ context.Context, sum skill.Summary) bool { return sum.Name == "a" })
	if got, _ := v.Memo(key{}, count(v)); got != 1 || builds != 2 {
		t.Errorf("view memo = %v after %d builds, want 1 after 2", got, builds)
	}
	// Errors are not cached.
	type other struct{}
	if _, err := s.Memo(other{}, func() (any, error) { return nil, errors.New("boom") }); err == nil {
		t.Fatal("want the build error")
	}
	if got, err := s.Memo(other{}, func() (any, error) { return "ok", nil }); err != nil || got != "ok" {
		t.Errorf("after an error: %v, %v", got, err)
	}
}
