package cli

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// archiveFile is one file of a test archive.
type archiveFile struct {
	name, body string
	mode       int64
}

func testSkill(name string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: The %s skill, installed in tests.\n---\nDo %s things.\n", name, name, name)
}

func zipOf(t *testing.T, files ...archiveFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		h.SetMode(os.FileMode(mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tgzOf(t *testing.T, files ...archiveFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		mode := f.mode
		if mode == 0 {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Typeflag: tar.TypeReg, Size: int64(len(f.body)), Mode: mode, ModTime: time.Unix(1700000000, 0)}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(f.body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// archiveServer serves archives on 127.0.0.1.
type archiveServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newArchiveServer(t *testing.T) *archiveServer {
	s := &archiveServer{files: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		data, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, r.URL.Path, time.Unix(1700000000, 0), bytes.NewReader(data))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *archiveServer) put(path string, data []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = data
	return s.URL + path
}

// installEnv is a home, a project and a cache for one test.
type installEnv struct {
	home, project, cache string
	vars                 map[string]string
}

func newInstallEnv(t *testing.T) *installEnv {
	base := t.TempDir()
	e := &installEnv{home: filepath.Join(base, "home"), project: filepath.Join(base, "repo"), cache: filepath.Join(base, "cache")}
	for _, d := range []string{e.home, filepath.Join(e.project, ".git"), filepath.Join(e.project, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.vars = map[string]string{"HOME": e.home, "SKILLKIT_CACHE_DIR": e.cache}
	return e
}

func (e *installEnv) run(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Cwd: filepath.Join(e.project, "src"),
		Getenv: func(k string) string { return e.vars[k] }})
	return out.String(), errb.String(), code
}

func (e *installEnv) userSkills() string { return filepath.Join(e.home, ".agents", "skills") }

// entries lists a folder's entries by name.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestInstallFromURL(t *testing.T) {
	e := newInstallEnv(t)
	srv := newArchiveServer(t)
	u := srv.put("/skills.zip", zipOf(t,
		archiveFile{name: "repo-main/skills/alpha/SKILL.md", body: testSkill("alpha")},
		archiveFile{name: "repo-main/skills/alpha/scripts/run.sh", body: "#!/bin/sh\necho hi\n", mode: 0o755},
		archiveFile{name: "repo-main/skills/beta/SKILL.md", body: testSkill("beta")},
		archiveFile{name: "repo-main/skills/beta/docs/REFERENCE.md", body: "# Ref\n"},
	))
	out, errOut, code := e.run("install", u)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	dest := e.userSkills()
	want := fmt.Sprintf("Installed alpha: %s (from %s: repo-main/skills/alpha)\nInstalled beta: %s (from %s: repo-main/skills/beta)\n",
		filepath.Join(dest, "alpha"), u, filepath.Join(dest, "beta"), u)
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	if got := strings.Join(entries(t, dest), ","); got != "alpha,beta" {
		t.Errorf("installed %q (temporary folders left?)", got)
	}
	if readFile(t, filepath.Join(dest, "beta", "docs", "REFERENCE.md")) != "# Ref\n" {
		t.Error("beta's document not copied")
	}
	info, err := os.Stat(filepath.Join(dest, "alpha", "scripts", "run.sh"))
	if err != nil || info.Mode().Perm() != 0o755 {
		t.Errorf("run.sh: %v, %v", info, err)
	}
	// The installed skills are found by the default roots.
	out, errOut, code = e.run("list")
	if code != 0 || !strings.Contains(out, "alpha") || !strings.Contains(out, "beta") {
		t.Errorf("list after install: exit %d\n%s%s", code, out, errOut)
	}

	// Installed already: refused without --force, the folder untouched.
	os.WriteFile(filepath.Join(dest, "alpha", "local-note.txt"), []byte("mine"), 0o644)
	out, errOut, code = e.run("install", u)
	if code != 1 || out != "" || !strings.Contains(errOut, "alpha is installed already at "+filepath.Join(dest, "alpha")+"; pass --force to replace it") {
		t.Errorf("again: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dest, "alpha", "local-note.txt")); err != nil {
		t.Error("refused install changed the folder")
	}
	// --force replaces it whole.
	out, errOut, code = e.run("install", "--force", u)
	if code != 0 || !strings.Contains(out, "Replaced alpha: ") {
		t.Errorf("--force: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dest, "alpha", "local-note.txt")); err == nil {
		t.Error("--force kept a file of the old folder")
	}
	if got := strings.Join(entries(t, dest), ","); got != "alpha,beta" {
		t.Errorf("after --force: %q", got)
	}
}

func TestInstallProjectAndPaths(t *testing.T) {
	e := newInstallEnv(t)
	dir := t.TempDir()
	// A local .tgz with one skill at its root: installed under its name.
	tgz := filepath.Join(dir, "gamma.tgz")
	os.WriteFile(tgz, tgzOf(t, archiveFile{name: "SKILL.md", body: testSkill("gamma")}, archiveFile{name: "notes.txt", body: "n"}), 0o644)
	out, errOut, code := e.run("install", "--project", tgz)
	proj := filepath.Join(e.project, ".agents", "skills")
	if code != 0 || out != fmt.Sprintf("Installed gamma: %s (from %s: gamma)\n", filepath.Join(proj, "gamma"), tgz) {
		t.Fatalf("tgz: exit %d\n%s%s", code, out, errOut)
	}
	if readFile(t, filepath.Join(proj, "gamma", "notes.txt")) != "n" {
		t.Error("notes.txt not copied")
	}
	// A skill folder.
	folder := filepath.Join(dir, "delta")
	os.MkdirAll(folder, 0o755)
	os.WriteFile(filepath.Join(folder, "SKILL.md"), []byte(testSkill("delta")), 0o644)
	out, errOut, code = e.run("install", "--user", folder)
	if code != 0 || !strings.HasPrefix(out, "Installed delta: "+filepath.Join(e.userSkills(), "delta")) {
		t.Fatalf("folder: exit %d\n%s%s", code, out, errOut)
	}
	// --user and --project together.
	if _, errOut, code := e.run("install", "--user", "--project", folder); code != 2 || !strings.Contains(errOut, "[project user]") {
		t.Errorf("both flags: exit %d: %s", code, errOut)
	}
	// Nothing to install.
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o755)
	if _, errOut, code := e.run("install", empty); code != 2 || !strings.Contains(errOut, "no skill (a folder with a SKILL.md) in "+empty) {
		t.Errorf("empty: exit %d: %s", code, errOut)
	}
	// No HOME for --user.
	delete(e.vars, "HOME")
	if _, errOut, code := e.run("install", folder); code != 2 || !strings.Contains(errOut, "pass --project") {
		t.Errorf("no HOME: exit %d: %s", code, errOut)
	}
}

func TestInstallRefusesInvalid(t *testing.T) {
	e := newInstallEnv(t)
	srv := newArchiveServer(t)
	u := srv.put("/mixed.tar.gz", tgzOf(t,
		archiveFile{name: "good/SKILL.md", body: testSkill("good")},
		archiveFile{name: "misnamed/SKILL.md", body: testSkill("other-name")},
		archiveFile{name: "extra/SKILL.md", body: "---\nname: extra\ndescription: Has a field the specification does not allow.\nowner: me\n---\nx\n"},
	))
	out, errOut, code := e.run("install", u)
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if out != fmt.Sprintf("Installed good: %s (from %s: good)\n", filepath.Join(e.userSkills(), "good"), u) {
		t.Errorf("stdout %q", out)
	}
	for _, want := range []string{
		"Validation failed for " + u + ": extra:\n  - Unexpected fields in frontmatter: owner.",
		"Validation failed for " + u + ": misnamed:\n  - Directory name 'misnamed' must match skill name 'other-name'",
		"skillkit: install: 2 of 3 skills refused, 1 installed into " + e.userSkills(),
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if got := strings.Join(entries(t, e.userSkills()), ","); got != "good" {
		t.Errorf("installed %q", got)
	}
}

func TestInstallHostileArchive(t *testing.T) {
	e := newInstallEnv(t)
	srv := newArchiveServer(t)
	u := srv.put("/evil.zip", zipOf(t,
		archiveFile{name: "ok/SKILL.md", body: testSkill("ok")},
		archiveFile{name: "../../../evil/SKILL.md", body: testSkill("evil")},
	))
	out, errOut, code := e.run("install", u)
	if code != 2 || out != "" || !strings.Contains(errOut, `archive `+u+`: entry "../../../evil/SKILL.md": unsafe path`) {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if got := entries(t, e.userSkills()); len(got) != 0 {
		t.Errorf("installed %q", got)
	}
	// A wrong pin: nothing is unpacked or installed.
	out, errOut, code = e.run("install", srv.put("/ok.zip", zipOf(t, archiveFile{name: "ok/SKILL.md", body: testSkill("ok")}))+"#sha256="+strings.Repeat("ab", 32))
	if code != 2 || !strings.Contains(errOut, "sha256 does not match the pin") {
		t.Errorf("wrong pin: exit %d\n%s%s", code, out, errOut)
	}
}

// TestURLRoots: a ROOT argument, a $SKILLKIT_PATH entry and $SKILLS_ROOT
// may be archive URLs; credentials in them are never shown.
func TestURLRoots(t *testing.T) {
	e := newInstallEnv(t)
	srv := newArchiveServer(t)
	u := srv.put("/skills.zip", zipOf(t, archiveFile{name: "s/alpha/SKILL.md", body: testSkill("alpha")}))
	withCreds := strings.Replace(u, "http://", "http://tok:hunter2@", 1)
	out, errOut, code := e.run("list", withCreds)
	if code != 0 || !strings.Contains(out, "alpha") || strings.Contains(out+errOut, "hunter2") {
		t.Errorf("ROOT URL: exit %d\n%s%s", code, out, errOut)
	}
	e.vars["SKILLKIT_PATH"] = "/nonexistent:" + u
	out, errOut, code = e.run("catalog", "--format", "list")
	if code != 0 || !strings.Contains(out, "- alpha") {
		t.Errorf("SKILLKIT_PATH URL: exit %d\n%s%s", code, out, errOut)
	}
	delete(e.vars, "SKILLKIT_PATH")
	e.vars["SKILLS_ROOT"] = u
	out, errOut, code = e.run("catalog", "--format", "list")
	if code != 0 || !strings.Contains(out, "- alpha") {
		t.Errorf("SKILLS_ROOT URL: exit %d\n%s%s", code, out, errOut)
	}
	// The server gone: a URL fetched before is served from the cache
	// (found through seed 003's name for it); one never fetched is
	// skipped with a warning that does not show its credentials.
	srv.Close()
	delete(e.vars, "SKILLKIT_CACHE_DIR")
	e.vars["SKILLS_CACHE_DIR"] = e.cache
	out, errOut, code = e.run("catalog", "--format", "list")
	if code != 0 || !strings.Contains(out, "- alpha") {
		t.Errorf("offline, cached: exit %d\n%s%s", code, out, errOut)
	}
	e.vars["SKILLS_ROOT"] = strings.Replace(withCreds, "skills.zip", "other.zip", 1)
	out, errOut, code = e.run("list")
	if code != 0 || !strings.Contains(errOut, "SKILLS_ROOT entry") || strings.Contains(errOut, "hunter2") || strings.Contains(out, "alpha") {
		t.Errorf("offline, uncached: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestSessionURLRoot: a session over an archive URL keeps the URL and
// opens it again (from the cache) for later commands.
func TestSessionURLRoot(t *testing.T) {
	e := newInstallEnv(t)
	srv := newArchiveServer(t)
	u := srv.put("/skills.tgz", tgzOf(t, archiveFile{name: "alpha/SKILL.md", body: testSkill("alpha")}))
	store := filepath.Join(t.TempDir(), "sessions.db")
	out, errOut, code := e.run("session", "--store", store, "new", u)
	if code != 0 {
		t.Fatalf("new: exit %d: %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	srv.Close() // within the TTL the cached copy serves
	out, errOut, code = e.run("session", "--store", store, "call", id, "skill", `{"name":"alpha"}`)
	if code != 0 || !strings.Contains(out, "Do alpha things.") {
		t.Errorf("call: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
