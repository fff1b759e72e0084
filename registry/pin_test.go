package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// traceFS wraps a file system and counts each operation by name
// ("open s/a.md", "stat s/a.md"); onOpen, when set, runs before every
// Open.
type traceFS struct {
	inner  fs.FS
	onOpen func(name string)
	mu     sync.Mutex
	ops    map[string]int
}

func (t *traceFS) count(op, name string) {
	t.mu.Lock()
	if t.ops == nil {
		t.ops = map[string]int{}
	}
	t.ops[op+" "+name]++
	t.mu.Unlock()
}

// opens returns how often name was opened, and resets every count.
func (t *traceFS) take(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.ops[key]
	t.ops = nil
	return n
}

// prefixed counts the operations on names under prefix.
func (t *traceFS) prefixed(op, prefix string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, v := range t.ops {
		if strings.HasPrefix(k, op+" "+prefix) {
			n += v
		}
	}
	return n
}

func (t *traceFS) Open(name string) (fs.File, error) {
	t.count("open", name)
	if t.onOpen != nil {
		t.onOpen(name)
	}
	return t.inner.Open(name)
}

func (t *traceFS) Stat(name string) (fs.FileInfo, error) {
	t.count("stat", name)
	return fs.Stat(t.inner, name)
}

func (t *traceFS) ReadDir(name string) ([]fs.DirEntry, error) {
	t.count("readdir", name)
	return fs.ReadDir(t.inner, name)
}

func (t *traceFS) Lstat(name string) (fs.FileInfo, error) { return fs.Lstat(t.inner, name) }

func (t *traceFS) ReadLink(name string) (string, error) { return fs.ReadLink(t.inner, name) }

// hostSkills writes files below a new folder, ages every file and folder
// by an hour (so that no stamp is too recent to trust) and returns the
// folder, a registry over it and the tracing file system it reads
// through.
func hostSkills(t *testing.T, files map[string]string, opts *Options) (string, *Registry, *traceFS) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	age(t, root)
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	tfs := &traceFS{inner: src.FS}
	src.FS = tfs
	return root, newReg(t, []source.Source{src}, opts), tfs
}

// age sets the modification time of everything below root an hour back.
func age(t *testing.T, root string) {
	t.Helper()
	at := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, at, at)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// edit rewrites one file and gives it (and its folder) a modification
// time of its own, still in the past.
func edit(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-30 * time.Minute)
	for _, q := range []string{p, filepath.Dir(p)} {
		if err := os.Chtimes(q, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

var pinFiles = map[string]string{
	"s/SKILL.md":            skillMD("s", "pinned"),
	"s/guide.md":            "guide v1\n",
	"s/references/api.md":   "api v1\n",
	"s/scripts/run.sh":      "echo run\n",
	"other/SKILL.md":        skillMD("other", "never read"),
	"other/references/x.md": "x\n",
}

// TestDocTextPinned edits a document after its text was first read, in
// every way a file can change: the snapshot keeps returning the first
// text.
func TestDocTextPinned(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, root string)
	}{
		{"same size", func(t *testing.T, root string) { edit(t, root, "s/guide.md", "guide v2\n") }},
		{"longer", func(t *testing.T, root string) { edit(t, root, "s/guide.md", "guide version 2\n") }},
		{"removed", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "s", "guide.md")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, reg, _ := hostSkills(t, pinFiles, nil)
			s, ctx := reg.Snapshot(), t.Context()
			if got, err := s.DocText(ctx, "s", "guide.md"); err != nil || got != "guide v1\n" {
				t.Fatalf("DocText = %q, %v", got, err)
			}
			tc.change(t, root)
			for _, doc := range []string{"guide.md", "./guide.md", "references/../guide.md"} {
				if got, err := s.DocText(ctx, "s", doc); err != nil || got != "guide v1\n" {
					t.Errorf("DocText(%q) after the change = %q, %v; want the pinned text", doc, got, err)
				}
			}
		})
	}
}

// TestFirstReadAfterEdit lists a skill, then changes a file before any
// read of it: every way of reading it fails with ErrStale naming the
// file, the next Refresh replaces the skill, and the new snapshot reads
// the new content.
func TestFirstReadAfterEdit(t *testing.T) {
	reads := []struct {
		name string
		read func(s *Snapshot, ctx context.Context) error
	}{
		{"DocText", func(s *Snapshot, ctx context.Context) error { _, err := s.DocText(ctx, "s", "guide.md"); return err }},
		{"ReadFile", func(s *Snapshot, ctx context.Context) error { _, err := s.ReadFile(ctx, "s", "guide.md"); return err }},
		{"Digests", func(s *Snapshot, ctx context.Context) error { _, err := s.Digests(ctx, "s"); return err }},
		{"Files", func(s *Snapshot, ctx context.Context) error {
			fsys, err := s.Files(ctx, "s")
			if err != nil {
				return err
			}
			_, err = fs.ReadFile(fsys, "guide.md")
			return err
		}},
	}
	changes := []struct {
		name   string
		change func(t *testing.T, root string)
	}{
		{"resized", func(t *testing.T, root string) { edit(t, root, "s/guide.md", "guide version 2\n") }},
		{"removed", func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, "s", "guide.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by a folder", func(t *testing.T, root string) {
			p := filepath.Join(root, "s", "guide.md")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, rd := range reads {
		for _, ch := range changes {
			t.Run(rd.name+"/"+ch.name, func(t *testing.T) {
				root, reg, _ := hostSkills(t, pinFiles, nil)
				s, ctx := reg.Snapshot(), t.Context()
				if _, err := s.Docs(ctx, "s"); err != nil {
					t.Fatal(err)
				}
				ch.change(t, root)
				err := rd.read(s, ctx)
				if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), `guide.md of skill "s"`) || !strings.Contains(err.Error(), "refresh the registry") {
					t.Fatalf("%s after the change: err = %v; want ErrStale naming guide.md", rd.name, err)
				}
				if ch.name != "resized" {
					return
				}
				s2, err := reg.Refresh(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if s2 == s || s2.get("s") == s.get("s") {
					t.Fatal("Refresh kept the skill whose file changed")
				}
				if got, err := s2.DocText(ctx, "s", "guide.md"); err != nil || got != "guide version 2\n" {
					t.Errorf("DocText after Refresh = %q, %v", got, err)
				}
			})
		}
	}
}

// TestDigests checks every digest against crypto/sha256 of the file, and
// that each file is read once per snapshot: not at all when a read
// pinned its digest already, never again on later calls.
func TestDigests(t *testing.T) {
	root, reg, tfs := hostSkills(t, pinFiles, nil)
	s, ctx := reg.Snapshot(), t.Context()
	if _, err := s.ReadFile(ctx, "s", "guide.md"); err != nil {
		t.Fatal(err)
	}
	tfs.take("")
	m, err := s.Digests(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range m.Files {
		got = append(got, f.Path)
		data, err := os.ReadFile(filepath.Join(root, "s", filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if f.SHA256 != sha(string(data)) || f.Size != int64(len(data)) {
			t.Errorf("%s: sha256 %s, size %d; want %s, %d", f.Path, f.SHA256, f.Size, sha(string(data)), len(data))
		}
	}
	if want := []string{"SKILL.md", "guide.md", "references/api.md", "scripts/run.sh"}; !slices.Equal(got, want) {
		t.Errorf("Digests lists %q, want %q", got, want)
	}
	if n := tfs.prefixed("open", "s/guide.md"); n != 0 {
		t.Errorf("guide.md, pinned by ReadFile, was opened %d times by Digests", n)
	}
	if n := tfs.prefixed("open", "s/"); n != 3 {
		t.Errorf("Digests opened %d files, want the 3 not yet pinned", n)
	}
	// The result is a copy; later calls do no I/O and match.
	m.Files[0].SHA256 = "mutated"
	tfs.take("")
	m2, err := s.Digests(ctx, "s")
	if err != nil || m2.Files[0].SHA256 == "mutated" || len(tfs.ops) != 0 {
		t.Errorf("second Digests: %v, first file %q, %d operations", err, m2.Files[0].SHA256, len(tfs.ops))
	}
	if plain, _, _ := s.Manifest(ctx, "s"); plain.Files[1].SHA256 != "" {
		t.Error("Manifest gained digests; it must stay the plain listing")
	}
	// A pinned digest checks later reads: same size, other bytes.
	edit(t, root, "s/scripts/run.sh", "echo RUN\n")
	if _, err := s.ReadFile(ctx, "s", "scripts/run.sh"); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("ReadFile of a file rewritten after its digest was pinned: %v; want ErrStale", err)
	}
	if _, err := s.Digests(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Digests of an unknown skill: %v", err)
	}
}

// TestDigestsConcurrent calls Digests from many goroutines at once: they
// share one computation, so each file is opened once.
func TestDigestsConcurrent(t *testing.T) {
	_, reg, tfs := hostSkills(t, pinFiles, nil)
	s, ctx := reg.Snapshot(), t.Context()
	if _, err := s.Docs(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	tfs.take("")
	var wg sync.WaitGroup
	results := make([]string, 16)
	for i := range results {
		wg.Go(func() {
			m, err := s.Digests(ctx, "s")
			if err != nil {
				results[i] = err.Error()
				return
			}
			results[i] = m.Files[1].SHA256
		})
	}
	wg.Wait()
	for i, r := range results {
		if r != sha("guide v1\n") {
			t.Errorf("caller %d: %s", i, r)
		}
	}
	for _, f := range []string{"SKILL.md", "guide.md", "references/api.md", "scripts/run.sh"} {
		if n := tfs.prefixed("open", "s/"+f); n != 1 {
			t.Errorf("%s opened %d times, want once", f, n)
		}
	}
}

// TestDigestsCancelled cancels the caller computing the digests while
// another waits for them: the cancelled caller gets its context's error,
// the waiting one takes over and gets the digests, and nothing read
// before the cancellation is read again.
func TestDigestsCancelled(t *testing.T) {
	_, reg, tfs := hostSkills(t, pinFiles, nil)
	s := reg.Snapshot()
	if _, err := s.Docs(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	tfs.onOpen = func(name string) {
		if name == "s/SKILL.md" {
			once.Do(func() { close(entered); <-release })
		}
	}
	tfs.take("")
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan error, 1)
	go func() { _, err := s.Digests(ctx, "s"); first <- err }()
	<-entered
	second := make(chan error, 1)
	go func() {
		m, err := s.Digests(t.Context(), "s")
		if err == nil && m.Files[0].SHA256 != sha(pinFiles["s/SKILL.md"]) {
			err = errors.New("wrong SKILL.md digest " + m.Files[0].SHA256)
		}
		second <- err
	}()
	cancel()
	close(release)
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled caller: %v, want context.Canceled", err)
	}
	if err := <-second; err != nil {
		t.Errorf("waiting caller: %v", err)
	}
	if n := tfs.prefixed("open", "s/SKILL.md"); n != 1 {
		t.Errorf("SKILL.md opened %d times, want once", n)
	}
	tfs.take("")
	if _, err := s.Digests(t.Context(), "s"); err != nil || len(tfs.ops) != 0 {
		t.Errorf("Digests after the takeover: %v with %d operations, want none", err, len(tfs.ops))
	}
}

// TestDocTextConcurrent reads one document from many goroutines, with
// ReadFile and Digests beside them: every caller sees the same text, and
// the document's text is pinned once.
func TestDocTextConcurrent(t *testing.T) {
	root, reg, _ := hostSkills(t, pinFiles, nil)
	s, ctx := reg.Snapshot(), t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		wg.Go(func() {
			var err error
			var got string
			switch i % 3 {
			case 0:
				got, err = s.DocText(ctx, "s", "references/api.md")
			case 1:
				var data []byte
				data, err = s.ReadFile(ctx, "s", "./references/api.md")
				got = string(data)
			case 2:
				_, err = s.Digests(ctx, "s")
				got = "api v1\n"
			}
			if err == nil && got != "api v1\n" {
				err = errors.New("got " + got)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	edit(t, root, "s/references/api.md", "api v2\n")
	if got, err := s.DocText(ctx, "s", "references/api.md"); err != nil || got != "api v1\n" {
		t.Errorf("DocText after the edit = %q, %v", got, err)
	}
}

// TestRefreshPinned checks which skills Refresh replaces: one whose
// listed files are unchanged and one nobody listed are reused, and only
// the listed one's files are stat'ed; one whose document was edited
// (size, time or both), whose folder gained a file, whose read found a
// change, or whose stamps are too recent to trust is replaced, the old
// snapshot still serving what it pinned.
func TestRefreshPinned(t *testing.T) {
	t.Run("unchanged", func(t *testing.T) {
		_, reg, tfs := hostSkills(t, pinFiles, nil)
		s, ctx := reg.Snapshot(), t.Context()
		if _, err := s.DocText(ctx, "s", "guide.md"); err != nil {
			t.Fatal(err)
		}
		tfs.take("")
		s2, err := reg.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s2 != s {
			t.Error("Refresh with nothing changed built a new snapshot")
		}
		// fs.Sub has no Stat: a stat through it is an open.
		if n := tfs.prefixed("stat", "s/guide.md") + tfs.prefixed("open", "s/guide.md"); n != 1 {
			t.Errorf("the pinned skill's document was stat'ed %d times, want once", n)
		}
		if n := tfs.prefixed("stat", "other/references") + tfs.prefixed("open", "other/references"); n != 0 {
			t.Errorf("the unlisted skill's files were touched %d times, want never", n)
		}
	})
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, root string, s *Snapshot)
	}{
		{"document edited", func(t *testing.T, root string, _ *Snapshot) { edit(t, root, "s/guide.md", "guide v2\n") }},
		{"same size and time", func(t *testing.T, root string, _ *Snapshot) {
			p := filepath.Join(root, "s", "guide.md")
			info, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("guide v2\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The content changed but its stamp did not: only the read
			// that found the change can tell Refresh.
			if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"file added", func(t *testing.T, root string, _ *Snapshot) {
			writeTree(t, root, map[string]string{"s/references/new.md": "new\n"})
			at := time.Now().Add(-10 * time.Minute)
			if err := os.Chtimes(filepath.Join(root, "s", "references"), at, at); err != nil {
				t.Fatal(err)
			}
		}},
		{"recent stamps", func(t *testing.T, root string, _ *Snapshot) {
			bump(t, filepath.Join(root, "s", "scripts", "run.sh"), time.Minute)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, reg, _ := hostSkills(t, pinFiles, nil)
			s, ctx := reg.Snapshot(), t.Context()
			if tc.name == "recent stamps" {
				// Stamped a minute in the future: too close to trust.
				tc.change(t, root, s)
			}
			if got, err := s.DocText(ctx, "s", "guide.md"); err != nil || got != "guide v1\n" {
				t.Fatalf("DocText = %q, %v", got, err)
			}
			if _, err := s.Digests(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			if tc.name != "recent stamps" {
				tc.change(t, root, s)
			}
			if tc.name == "same size and time" {
				if _, err := s.ReadFile(ctx, "s", "guide.md"); !errors.Is(err, ErrStale) {
					t.Fatalf("ReadFile of the rewritten file: %v, want ErrStale", err)
				}
			}
			s2, err := reg.Refresh(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if s2 == s || s2.get("s") == s.get("s") {
				t.Fatal("Refresh kept the changed skill")
			}
			if s2.get("other") != s.get("other") {
				t.Error("Refresh replaced the skill nobody read")
			}
			if b1, b2 := s.get("s").body.Load(), s2.get("s").body.Load(); b1 != b2 {
				t.Error("the replaced skill lost its body")
			}
			want := "guide v1\n"
			if tc.name == "document edited" || tc.name == "same size and time" {
				want = "guide v2\n"
			}
			if got, err := s2.DocText(ctx, "s", "guide.md"); err != nil || got != want {
				t.Errorf("new snapshot's DocText = %q, %v; want %q", got, err, want)
			}
			if got, err := s.DocText(ctx, "s", "guide.md"); err != nil || got != "guide v1\n" {
				t.Errorf("old snapshot's DocText = %q, %v; want the pinned text", got, err)
			}
			if tc.name == "file added" {
				if docs, _ := s2.Docs(ctx, "s"); !slices.Contains(docs, "references/new.md") {
					t.Errorf("new snapshot's Docs = %q, want the added one", docs)
				}
				if docs, _ := s.Docs(ctx, "s"); slices.Contains(docs, "references/new.md") {
					t.Errorf("old snapshot's Docs = %q changed", docs)
				}
			}
		})
	}
}

// TestListingError lists a skill whose SKILL.md grew past the size limit
// after discovery: every content method reports the listing's error,
// and Refresh replaces the skill (its stamps cannot tell a fix), so a
// fixed skill lists in the next snapshot.
func TestListingError(t *testing.T) {
	body := skillMD("s", "grows")
	root, reg, _ := hostSkills(t, map[string]string{"s/SKILL.md": body, "s/a.md": "a"},
		&Options{Limits: skill.Limits{MaxFileSize: int64(len(body))}})
	s, ctx := reg.Snapshot(), t.Context()
	if err := os.WriteFile(filepath.Join(root, "s", "SKILL.md"), []byte(body+"more"), 0o644); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{}
	_, _, checks["Manifest"] = s.Manifest(ctx, "s")
	_, checks["Docs"] = s.Docs(ctx, "s")
	_, checks["Digests"] = s.Digests(ctx, "s")
	_, checks["Files"] = s.Files(ctx, "s")
	_, checks["ListedFS"] = s.ListedFS(ctx, "s")
	_, checks["ResolveDocs"] = s.ResolveDocs(ctx, "s", []string{"a.md"})
	_, checks["DocText"] = s.DocText(ctx, "s", "a.md")
	_, checks["ReadFile"] = s.ReadFile(ctx, "s", "a.md")
	for method, err := range checks {
		if !errors.Is(err, skill.ErrLimit) {
			t.Errorf("%s: %v, want the listing's ErrLimit", method, err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "s", "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s2, err := reg.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s2.DocText(ctx, "s", "a.md"); err != nil || got != "a" {
		t.Errorf("DocText after the fix and Refresh = %q, %v", got, err)
	}
}

// TestTruncatedManifest lists skills at and over the files limit through
// every method of a snapshot: over it, each serves the same truncated
// manifest (SKILL.md and the files met first), the warning names the
// setting to raise (the option field, or what LimitNames says), and
// ListedFS, what a workspace stages, shows only the listed files.
func TestTruncatedManifest(t *testing.T) {
	for _, c := range []struct {
		name     string
		files    []string // besides SKILL.md
		opts     *Options
		listed   []string
		left     []string
		warnName string // "" for no warning
	}{
		{name: "at the limit", files: []string{"a.md", "refs/b.md"}, opts: &Options{Limits: skill.Limits{MaxFiles: 3}},
			listed: []string{"SKILL.md", "a.md", "refs/b.md"}},
		{name: "over the limit", files: []string{"a.md", "refs/b.md", "refs/c.md"}, opts: &Options{Limits: skill.Limits{MaxFiles: 3}},
			listed: []string{"SKILL.md", "a.md", "refs/b.md"}, left: []string{"refs/c.md"}, warnName: "(registry.Options.Limits.MaxFiles) to 4 or more"},
		{name: "over the limit, the flag named", files: []string{"a.md", "refs/b.md", "refs/c.md"},
			opts:   &Options{Limits: skill.Limits{MaxFiles: 2}, LimitNames: skill.LimitNames{MaxFiles: "--max-files"}},
			listed: []string{"SKILL.md", "a.md"}, left: []string{"refs/b.md", "refs/c.md"}, warnName: "(--max-files) to 4 or more"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			tree := map[string]string{"s/SKILL.md": skillMD("s", "d")}
			for _, f := range c.files {
				tree["s/"+f] = "text of " + f
			}
			writeTree(t, root, tree)
			src, err := source.Dir(root, "root", 0)
			if err != nil {
				t.Fatal(err)
			}
			s, ctx := newReg(t, []source.Source{src}, c.opts).Snapshot(), t.Context()
			m, diags, err := s.Manifest(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range m.Files {
				got = append(got, f.Path)
			}
			if !slices.Equal(got, c.listed) {
				t.Errorf("Manifest lists %q, want %q", got, c.listed)
			}
			if (m.Truncated != nil) != (len(c.left) > 0) {
				t.Errorf("Truncated = %+v with %q left out", m.Truncated, c.left)
			}
			switch {
			case c.warnName == "" && len(diags) > 0:
				t.Errorf("diagnostics %v for a whole skill", diags)
			case c.warnName != "" && (len(diags) != 1 || !strings.Contains(diags[0].Message, c.warnName)):
				t.Errorf("diagnostics %v, want one warning naming %q", diags, c.warnName)
			}
			d, err := s.Digests(ctx, "s")
			if err != nil || len(d.Files) != len(c.listed) || (d.Truncated != nil) != (m.Truncated != nil) {
				t.Errorf("Digests = %+v, %v; want the listed files, flagged alike", d, err)
			}
			files, err := s.Files(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			staged, err := s.ListedFS(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			var walked []string
			if err := fs.WalkDir(staged, ".", func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					walked = append(walked, p)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(walked, c.listed) {
				t.Errorf("ListedFS holds %q, want the listed %q", walked, c.listed)
			}
			for _, p := range c.listed {
				if _, err := s.ReadFile(ctx, "s", p); err != nil {
					t.Errorf("ReadFile(%s): %v", p, err)
				}
				if data, err := fs.ReadFile(staged, p); err != nil || p != "SKILL.md" && string(data) != "text of "+p {
					t.Errorf("ListedFS ReadFile(%s): %v", p, err)
				}
			}
			for _, p := range c.left {
				if _, err := s.ReadFile(ctx, "s", p); !errors.Is(err, ErrNotFound) {
					t.Errorf("ReadFile(%s) = %v, want ErrNotFound: it is not part of the skill", p, err)
				}
				if _, err := fs.Stat(files, p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("Files: Stat(%s) = %v, want fs.ErrNotExist", p, err)
				}
				if _, err := fs.Stat(staged, p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("ListedFS: Stat(%s) = %v, want fs.ErrNotExist", p, err)
				}
				if _, err := staged.Open(p); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("ListedFS: Open(%s) = %v, want fs.ErrNotExist", p, err)
				}
			}
		})
	}
}

// TestListAll lists every skill of a snapshot at once: afterwards
// Manifest makes no file-system call, and a skill whose listing fails
// keeps its error for Manifest.
func TestListAll(t *testing.T) {
	body := skillMD("b", "grows")
	root, reg, tfs := hostSkills(t, map[string]string{
		"a/SKILL.md": skillMD("a", "d"), "a/x.md": "x", "b/SKILL.md": body, "c/SKILL.md": skillMD("c", "d"),
	}, &Options{Limits: skill.Limits{MaxFileSize: int64(len(body))}})
	if err := os.WriteFile(filepath.Join(root, "b", "SKILL.md"), []byte(body+"more"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, ctx := reg.Snapshot(), t.Context()
	if err := s.ListAll(ctx); err != nil {
		t.Fatal(err)
	}
	calls := func() int { return tfs.prefixed("open", "") + tfs.prefixed("stat", "") + tfs.prefixed("readdir", "") }
	before := calls()
	for _, name := range []string{"a", "b", "c"} {
		m, _, err := s.Manifest(ctx, name)
		switch {
		case name == "b" && !errors.Is(err, skill.ErrLimit):
			t.Errorf("Manifest(b) = %v, want the listing's ErrLimit", err)
		case name != "b" && (err != nil || len(m.Files) == 0):
			t.Errorf("Manifest(%s) = %v, %v", name, m, err)
		}
	}
	if got := calls(); got != before {
		t.Errorf("Manifest after ListAll made %d file-system calls, want none", got-before)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := reg.Snapshot().ListAll(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("ListAll with a cancelled context = %v, want context.Canceled", err)
	}
}

// TestListedFSLinks checks what ListedFS keeps of a skill with links: a
// link to a listed file and a link to a listed folder are there as links
// (what staging recreates), a link out of the skill and a nested skill's
// folder are not.
func TestListedFSLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeTree(t, root, map[string]string{
		"s/SKILL.md": skillMD("s", "d"), "s/references/guide.md": "guide", "s/sub/SKILL.md": skillMD("sub", "nested"),
	})
	writeTree(t, outside, map[string]string{"secret.md": "secret"})
	for link, target := range map[string]string{
		"s/alias.md": "references/guide.md", "s/docs": "references", "s/leak.md": filepath.Join(outside, "secret.md"),
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := newReg(t, []source.Source{src}, nil).Snapshot()
	l, err := s.ListedFS(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	lfs := l.(fs.ReadLinkFS)
	for link, target := range map[string]string{"alias.md": "references/guide.md", "docs": "references"} {
		info, err := lfs.Lstat(link)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat(%s) = %v, %v; want the link", link, info, err)
		}
		if got, err := lfs.ReadLink(link); err != nil || got != target {
			t.Errorf("ReadLink(%s) = %q, %v; want %q", link, got, err, target)
		}
	}
	entries, err := fs.ReadDir(l, ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"SKILL.md", "alias.md", "docs", "references"}; !slices.Equal(names, want) {
		t.Errorf("ReadDir(.) = %q, want %q (no link out, no nested skill)", names, want)
	}
	for _, p := range []string{"leak.md", "sub", "sub/SKILL.md", "../s/SKILL.md"} {
		if _, err := lfs.Lstat(p); err == nil {
			t.Errorf("Lstat(%s) succeeded; want it absent", p)
		}
	}
}

// TestListFiles lists skills through the listings discovery took
// (Options.ListFiles): the manifests are those of a registry without
// them; a snapshot lists its skill folder as discovered; a skill reused
// unlisted by a Refresh is listed from its folder again, so a file added
// meanwhile is there.
func TestListFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"s/SKILL.md": skillMD("s", "d"), "s/a.md": "a", "s/refs/b.md": "b", "t/SKILL.md": skillMD("t", "d"),
	})
	age(t, root)
	src, err := source.Dir(root, "root", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	manifests := func(s *Snapshot) map[string][]string {
		out := map[string][]string{}
		for _, sum := range s.Summaries() {
			m, _, err := s.Manifest(ctx, sum.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range m.Files {
				out[sum.Name] = append(out[sum.Name], fmt.Sprintf("%s %d", f.Path, f.Size))
			}
		}
		return out
	}
	want := manifests(newReg(t, []source.Source{src}, nil).Snapshot())
	reg := newReg(t, []source.Source{src}, &Options{ListFiles: true})
	s := reg.Snapshot()
	if err := s.ListAll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := manifests(s); !reflect.DeepEqual(got, want) {
		t.Errorf("with ListFiles %v, without %v", got, want)
	}

	// t is still unlisted when a file is added and the registry refreshed.
	reg = newReg(t, []source.Source{src}, &Options{ListFiles: true})
	writeTree(t, root, map[string]string{"t/new.md": "new"})
	s2, err := reg.Refresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m, _, err := s2.Manifest(ctx, "t"); err != nil || len(m.Files) != 2 {
		t.Errorf("after Refresh, t lists %v, %v; want SKILL.md and new.md", m, err)
	}
}
