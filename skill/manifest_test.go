package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// writeTree creates files (slash paths → contents) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// symlink creates link (slash path under root) pointing at target, or
// skips the test when the file system cannot hold symlinks.
func symlink(t *testing.T, root, target, link string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(link))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func paths(m *Manifest) []string {
	var out []string
	for _, f := range m.Files {
		out = append(out, f.Path)
	}
	return out
}

const skillMD = "---\nname: pdf\ndescription: d\n---\n"

func TestReadManifest(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"SKILL.md":                  skillMD,
		"scripts/run.py":            "print(1)\n",
		"references/guide.md":       "# Guide\n",
		"references/NOTES.TXT":      "notes",
		"references/deep/api.rst":   "api",
		"assets/font.ttf":           "\x00\x01\x02binary",
		"assets/data.json":          "{}",
		"node_modules.md":           "a file, not an ignored folder",
		".git/config":               "x",
		"node_modules/x/index.js":   "x",
		"__pycache__/a.pyc":         "x",
		".venv/bin/python":          "x",
		"scripts/.git/HEAD":         "x",
		"nested/SKILL.md":           skillMD,
		"nested/ref.md":             "belongs to the nested skill",
		"nested/deeper/x.md":        "also",
		"references/deep/SKILL.txt": "not a skill marker",
	}
	writeTree(t, root, files)
	m, diags, err := ReadManifest(context.Background(), os.DirFS(root), ".", ManifestOptions{Hash: true})
	if err != nil {
		t.Fatal(err)
	}
	// The nested skill is left out, with a warning naming it, and the
	// manifest says so.
	if len(diags) != 1 || diags[0].File != "nested" || !strings.Contains(diags[0].Message, "separate skill") {
		t.Errorf("diagnostics:\n%s\nwant one warning about the nested skill", diagList(diags))
	}
	if len(m.Skipped) != 1 || m.Skipped[0].Path != "nested" || m.Skipped[0].Reason != diags[0].Message {
		t.Errorf("Skipped = %+v, want the nested skill with its warning", m.Skipped)
	}
	want := []string{
		"SKILL.md", "assets/data.json", "assets/font.ttf", "node_modules.md",
		"references/NOTES.TXT", "references/deep/SKILL.txt", "references/deep/api.rst", "references/guide.md",
		"scripts/run.py",
	}
	if diff := cmp.Diff(want, paths(m)); diff != "" {
		t.Fatalf("paths (-want +got):\n%s", diff)
	}
	var total int64
	for _, f := range m.Files {
		if f.SHA256 != sha(files[f.Path]) {
			t.Errorf("%s: SHA256 = %s, want %s", f.Path, f.SHA256, sha(files[f.Path]))
		}
		if f.Size != int64(len(files[f.Path])) {
			t.Errorf("%s: Size = %d, want %d", f.Path, f.Size, len(files[f.Path]))
		}
		if f.Target != "" {
			t.Errorf("%s: Target = %q for a plain file", f.Path, f.Target)
		}
		total += f.Size
	}
	if m.Bytes != total {
		t.Errorf("Bytes = %d, want %d", m.Bytes, total)
	}
	wantDocs := []string{"node_modules.md", "references/NOTES.TXT", "references/deep/SKILL.txt", "references/deep/api.rst", "references/guide.md"}
	if diff := cmp.Diff(wantDocs, m.Docs()); diff != "" {
		t.Errorf("Docs (-want +got):\n%s", diff)
	}
	if f, ok := m.Lookup("scripts/run.py"); !ok || f.Size != 9 {
		t.Errorf("Lookup(scripts/run.py) = %+v, %v", f, ok)
	}
	for _, missing := range []string{"nested/ref.md", ".git/config", "scripts", "zzz"} {
		if _, ok := m.Lookup(missing); ok {
			t.Errorf("Lookup(%q) found an entry", missing)
		}
	}

	// Without Hash, no digests; the same files.
	m2, _, err := ReadManifest(context.Background(), os.DirFS(root), ".", ManifestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, paths(m2)); diff != "" {
		t.Errorf("paths without hashing differ:\n%s", diff)
	}
	for _, f := range m2.Files {
		if f.SHA256 != "" {
			t.Errorf("%s: SHA256 set without Hash", f.Path)
		}
	}
}

func TestReadManifestSubdirAndMapFS(t *testing.T) {
	fsys := fstest.MapFS{
		"skills/pdf/SKILL.md":         {Data: []byte(skillMD)},
		"skills/pdf/ref/a.md":         {Data: []byte("a")},
		"skills/pdf/sub/SKILL.md":     {Data: []byte(skillMD)},
		"skills/pdf/sub/b.md":         {Data: []byte("b")},
		"skills/other/SKILL.md":       {Data: []byte(skillMD)},
		"skills/pdf/.venv/lib/x.py":   {Data: []byte("x")},
		"skills/pdf/__pycache__/x.py": {Data: []byte("x")},
	}
	m, diags, err := ReadManifest(context.Background(), fsys, "skills/pdf", ManifestOptions{Hash: true})
	if err != nil || len(diags) != 1 || diags[0].File != "skills/pdf/sub" {
		t.Fatalf("err %v, diags %v; want one warning about the nested skill sub", err, diags)
	}
	if diff := cmp.Diff([]string{"SKILL.md", "ref/a.md"}, paths(m)); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
	if m.Files[1].SHA256 != sha("a") || !m.Files[1].Doc || m.Files[0].Doc {
		t.Errorf("files = %+v", m.Files)
	}
	_, _, err = ReadManifest(context.Background(), fsys, "skills/missing", ManifestOptions{Label: "/host/skills/missing"})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "/host/skills/missing") {
		t.Errorf("missing folder: err = %v, want ErrNotExist naming the label", err)
	}
}

func TestIsDocAndIgnoredDir(t *testing.T) {
	for rel, want := range map[string]bool{
		"SKILL.md": false, "sub/SKILL.md": true, "a.md": true, "a.MD": true, "x/y.txt": true,
		"a.markdown": true, "a.rst": true, "a.py": false, "a.pdf": false, "md": false, "a.md.bak": false,
	} {
		if got := IsDoc(rel); got != want {
			t.Errorf("IsDoc(%q) = %v, want %v", rel, got, want)
		}
	}
	for name, want := range map[string]bool{
		".git": true, "node_modules": true, "__pycache__": true, ".venv": true,
		"scripts": false, "git": false, "venv": false, ".github": false,
	} {
		if got := IgnoredDir(name); got != want {
			t.Errorf("IgnoredDir(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestReadManifestSymlinks covers links that stay inside (followed), links
// that leave the skill (skipped with a warning naming the link), broken
// links and cycles.
func TestReadManifestSymlinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "pdf")
	writeTree(t, base, map[string]string{
		"outside.txt":        "secret",
		"outdir/secret.md":   "secret",
		"pdf/SKILL.md":       skillMD,
		"pdf/ref/guide.md":   "guide",
		"pdf/zreal/data.txt": "data",
		"pdf/b/y.txt":        "y",
	})
	symlink(t, root, "ref/guide.md", "file-link.md")     // file inside
	symlink(t, root, "ref", "dir-link")                  // folder inside
	symlink(t, root, "zreal", "a-link")                  // folder inside, listed before its target
	symlink(t, root, "../outside.txt", "escape-rel.txt") // out via ..
	symlink(t, root, "../outdir", "escape-dir")          // folder out via ..
	symlink(t, root, filepath.Join(base, "outside.txt"), "escape-abs.txt")
	symlink(t, root, "ref/../../outside.txt", "sneaky.txt")
	symlink(t, root, "missing.txt", "broken.txt")
	symlink(t, root, "loop2", "loop1")
	symlink(t, root, "loop1", "loop2")
	symlink(t, root, "..", "ref/up") // folder link to an ancestor
	symlink(t, root, ".", "self")    // folder link to the root
	symlink(t, root, "../b", "c/x")  // c/x → b, b/back → c: mutual folder links
	symlink(t, root, "../c", "b/back")

	m, diags, err := ReadManifest(context.Background(), os.DirFS(root), ".", ManifestOptions{Hash: true, Label: root})
	if err != nil {
		t.Fatalf("ReadManifest: %v\n%s", err, diagList(diags))
	}
	want := []string{
		"SKILL.md",
		"a-link/data.txt",
		"b/y.txt",
		"c/x/y.txt",
		"dir-link/guide.md",
		"file-link.md",
		"ref/guide.md",
		"zreal/data.txt",
	}
	if diff := cmp.Diff(want, paths(m)); diff != "" {
		t.Errorf("paths (-want +got):\n%s\ndiagnostics:\n%s", diff, diagList(diags))
	}
	if f, _ := m.Lookup("file-link.md"); f.Target != "ref/guide.md" || f.SHA256 != sha("guide") || !f.Doc {
		t.Errorf("file-link.md = %+v, want Target ref/guide.md and the target's digest", f)
	}
	if f, _ := m.Lookup("a-link/data.txt"); f.Target != "zreal/data.txt" {
		t.Errorf("a-link/data.txt Target = %q, want the resolved zreal/data.txt (reached through a folder link)", f.Target)
	}
	if f, _ := m.Lookup("zreal/data.txt"); f.Target != "" {
		t.Errorf("zreal/data.txt Target = %q for a file reached without links", f.Target)
	}
	wantWarn := map[string]string{
		"escape-rel.txt": "outside the skill folder",
		"escape-dir":     "outside the skill folder",
		"escape-abs.txt": "absolute path",
		"sneaky.txt":     "outside the skill folder",
		"broken.txt":     "broken link",
		"loop1":          "too many levels of symbolic links",
		"loop2":          "too many levels of symbolic links",
		"ref/up":         "symlink cycle",
		"dir-link/up":    "symlink cycle",
		"self":           "symlink cycle",
		"b/back/x":       "symlink cycle", // b/back is c; c/x leads to b, being walked
		"c/x/back":       "symlink cycle",
	}
	got := map[string]string{}
	for _, d := range diags {
		rel, ok := strings.CutPrefix(d.File, root+"/")
		if !ok {
			t.Errorf("diagnostic %q does not name a path under %s", d, root)
			continue
		}
		if d.Severity != Warning {
			t.Errorf("diagnostic %q is not a warning", d)
		}
		got[rel] = d.Message
	}
	for rel, has := range wantWarn {
		if !strings.Contains(got[rel], has) {
			t.Errorf("warning for %s = %q, want one containing %q", rel, got[rel], has)
		}
	}
	for rel := range got {
		if _, ok := wantWarn[rel]; !ok {
			t.Errorf("unexpected warning for %s: %s", rel, got[rel])
		}
	}
	for _, f := range m.Files {
		if strings.Contains(f.Path, "secret") || strings.Contains(f.Path, "outside") {
			t.Errorf("manifest holds %s, from outside the skill", f.Path)
		}
	}
}

func TestResolve(t *testing.T) {
	base := t.TempDir()
	writeTree(t, base, map[string]string{
		"elsewhere/file.txt":    "x",
		"skill/real/file.txt":   "x",
		"skill/real/inner/a.md": "x",
	})
	root := filepath.Join(base, "skill")
	symlink(t, root, "../elsewhere", "out") // an intermediate component that leads out
	symlink(t, root, "real", "in")          // an intermediate component that stays inside
	symlink(t, root, "real/inner/../file.txt", "dotdot")
	symlink(t, root, "/etc", "abs")
	fsys := os.DirFS(base)
	cases := []struct {
		root, p, want string
		escape        bool
	}{
		{"skill", "skill/real/file.txt", "skill/real/file.txt", false},
		{"skill", "skill/in/inner/a.md", "skill/real/inner/a.md", false},
		{"skill", "skill/dotdot", "skill/real/file.txt", false},
		{"skill", "skill", "skill", false},
		{"skill", "skill/out/file.txt", "", true},
		{"skill", "skill/abs/passwd", "", true},
		{"skill", "skill/real/../../elsewhere/file.txt", "", true},
		{"skill", "skillx/file.txt", "", true},
		{"skill", "elsewhere/file.txt", "", true},
		{".", "skill/out/file.txt", "elsewhere/file.txt", false},
		{".", "../x", "", true},
	}
	for _, c := range cases {
		got, err := Resolve(fsys, c.root, c.p)
		if c.escape {
			if !errors.Is(err, ErrEscape) {
				t.Errorf("Resolve(%q, %q) = %q, %v; want ErrEscape", c.root, c.p, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", c.root, c.p, got, err, c.want)
		}
	}
}

// TestReadManifestLimits lists skills at and over the per-skill limits:
// at a limit the manifest is whole; over it, it holds the files met
// first (SKILL.md first) up to the limit, says which limit cut it and how
// much the folder holds, and one warning names the setting to raise.
func TestReadManifestLimits(t *testing.T) {
	refs := func(n int) map[string]string { // SKILL.md and n-1 more files
		tree := map[string]string{"SKILL.md": skillMD}
		for i := 1; i < n; i++ {
			tree[fmt.Sprintf("refs/%04d.md", i)] = ""
		}
		return tree
	}
	for _, c := range []struct {
		name      string
		tree      map[string]string
		sparse    map[string]int64 // files made this size without writing it
		opts      ManifestOptions
		files     int         // listed
		trunc     *Truncation // nil: whole
		warn      []string    // in the one warning
		mustKeep  []string    // listed paths
		mustLeave []string    // paths left out
	}{
		{name: "512 files at the default limit", tree: refs(512), files: 512},
		{name: "513 files over the default limit", tree: refs(513), files: 512,
			trunc:    &Truncation{Limit: "MaxFiles", Max: 512, Files: 513, Bytes: int64(len(skillMD))},
			warn:     []string{"skill has 513 files, more than the 512 a skill may hold", "only the first 512 files", "raise the files-per-skill limit (Limits.MaxFiles) to 513 or more"},
			mustKeep: []string{"SKILL.md", "refs/0511.md"}, mustLeave: []string{"refs/0512.md"}},
		{name: "5 files at a limit of 5", tree: refs(5), opts: ManifestOptions{Limits: Limits{MaxFiles: 5}}, files: 5},
		{name: "6 files over a limit of 5, the flag named", tree: refs(6),
			opts:  ManifestOptions{Limits: Limits{MaxFiles: 5}, LimitNames: LimitNames{MaxFiles: "--max-files"}},
			files: 5, trunc: &Truncation{Limit: "MaxFiles", Max: 5, Files: 6, Bytes: int64(len(skillMD))},
			warn: []string{"skill has 6 files, more than the 5", "(--max-files) to 6 or more"}},
		{name: "SKILL.md is kept though other names sort first",
			tree: map[string]string{"SKILL.md": skillMD, "AAA.md": "a", "BBB.md": "b", "Cdir/x.md": "x"},
			opts: ManifestOptions{Limits: Limits{MaxFiles: 2}}, files: 2,
			trunc:    &Truncation{Limit: "MaxFiles", Max: 2, Files: 4, Bytes: int64(len(skillMD)) + 3},
			mustKeep: []string{"SKILL.md", "AAA.md"}, mustLeave: []string{"BBB.md", "Cdir/x.md"}},
		{name: "100 bytes at a limit of 100",
			tree: map[string]string{"SKILL.md": skillMD, "a.bin": strings.Repeat("x", 100-len(skillMD))},
			opts: ManifestOptions{Limits: Limits{MaxBytes: 100}, Hash: true}, files: 2},
		{name: "101 bytes over a limit of 100",
			tree: map[string]string{"SKILL.md": skillMD, "a.bin": strings.Repeat("x", 100-len(skillMD)), "b.bin": "x"},
			opts: ManifestOptions{Limits: Limits{MaxBytes: 100}, Hash: true, Label: "pdf"}, files: 2,
			trunc:     &Truncation{Limit: "MaxBytes", Max: 100, Files: 3, Bytes: 101},
			warn:      []string{"skill holds 101 bytes in 3 files, more than the 100 bytes", "(Limits.MaxBytes) to 101 or more"},
			mustLeave: []string{"b.bin"}},
		{name: "16 MiB at the default", tree: map[string]string{"SKILL.md": skillMD, "assets/big.bin": ""},
			sparse: map[string]int64{"assets/big.bin": DefaultMaxBytes - int64(len(skillMD))}, files: 2},
		{name: "16 MiB + 1 over the default", tree: map[string]string{"SKILL.md": skillMD, "assets/big.bin": ""},
			sparse: map[string]int64{"assets/big.bin": DefaultMaxBytes - int64(len(skillMD)) + 1}, files: 1,
			trunc:    &Truncation{Limit: "MaxBytes", Max: DefaultMaxBytes, Files: 2, Bytes: DefaultMaxBytes + 1},
			warn:     []string{"more than the 16777216 bytes a skill may hold"},
			mustKeep: []string{"SKILL.md"}, mustLeave: []string{"assets/big.bin"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, c.tree)
			for rel, size := range c.sparse {
				if err := os.Truncate(filepath.Join(root, filepath.FromSlash(rel)), size); err != nil {
					t.Fatal(err)
				}
			}
			m, diags, err := ReadManifest(context.Background(), os.DirFS(root), ".", c.opts)
			if err != nil {
				t.Fatalf("ReadManifest: %v; a skill over a limit is truncated, not an error", err)
			}
			if len(m.Files) != c.files {
				t.Errorf("%d files listed, want %d", len(m.Files), c.files)
			}
			if diff := cmp.Diff(c.trunc, m.Truncated); diff != "" {
				t.Errorf("Truncated (-want +got):\n%s", diff)
			}
			var sum int64
			for _, f := range m.Files {
				sum += f.Size
			}
			if sum != m.Bytes {
				t.Errorf("Bytes = %d, the listed files hold %d", m.Bytes, sum)
			}
			var warnings []string
			for _, d := range diags {
				warnings = append(warnings, d.String())
			}
			switch {
			case c.trunc == nil && len(warnings) > 0:
				t.Errorf("warnings %q for a whole manifest", warnings)
			case c.trunc != nil && len(warnings) != 1:
				t.Fatalf("warnings %q, want exactly one", warnings)
			}
			for _, w := range c.warn {
				if !strings.Contains(warnings[0], w) {
					t.Errorf("warning %q lacks %q", warnings[0], w)
				}
			}
			for _, p := range c.mustKeep {
				if _, ok := m.Lookup(p); !ok {
					t.Errorf("%s not listed", p)
				}
			}
			for _, p := range c.mustLeave {
				if _, ok := m.Lookup(p); ok {
					t.Errorf("%s listed, want it left out", p)
				}
			}
		})
	}
}

func TestReadManifestSkillFileLimit(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"SKILL.md": skillMD, "sub/big.md": strings.Repeat("x", 500)})
	lim := Limits{MaxFileSize: int64(len(skillMD))}
	if _, _, err := ReadManifest(ctx, os.DirFS(root), ".", ManifestOptions{Limits: lim}); err != nil {
		t.Fatalf("SKILL.md at the limit (other files may be larger): %v", err)
	}
	lim.MaxFileSize--
	_, _, err := ReadManifest(ctx, os.DirFS(root), ".", ManifestOptions{Limits: lim, Label: "pdf"})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "pdf/SKILL.md is 33 bytes") {
		t.Fatalf("SKILL.md one byte over: err = %v, want ErrLimit naming pdf/SKILL.md", err)
	}

	// The default: exactly 1 MiB passes, one byte more fails.
	big := filepath.Join(root, "SKILL.md")
	if err := os.Truncate(big, DefaultMaxFileSize); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadManifest(ctx, os.DirFS(root), ".", ManifestOptions{}); err != nil {
		t.Fatalf("1 MiB SKILL.md: %v", err)
	}
	if err := os.Truncate(big, DefaultMaxFileSize+1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadManifest(ctx, os.DirFS(root), ".", ManifestOptions{}); !errors.Is(err, ErrLimit) {
		t.Fatalf("1 MiB + 1 SKILL.md: err = %v, want ErrLimit", err)
	}
}

func TestReadManifestEntryLimit(t *testing.T) {
	// Folder links that fan out (every level links twice to the next)
	// would make the walk exponential; the entry bound stops it, and the
	// manifest is truncated at what was met by then.
	root := t.TempDir()
	writeTree(t, root, map[string]string{"SKILL.md": skillMD, "l20/leaf.md": "leaf"})
	for i := 0; i < 20; i++ {
		symlink(t, root, fmt.Sprintf("../l%d", i+1), fmt.Sprintf("l%d/a", i))
		symlink(t, root, fmt.Sprintf("../l%d", i+1), fmt.Sprintf("l%d/b", i))
	}
	m, diags, err := ReadManifest(context.Background(), os.DirFS(root), ".", ManifestOptions{})
	if err != nil {
		t.Fatalf("ReadManifest: %v; want a truncated manifest", err)
	}
	if m.Truncated == nil || !m.Truncated.Partial || m.Truncated.Limit != "MaxFiles" {
		t.Fatalf("Truncated = %+v, want a partial walk cut at the entry bound of MaxFiles", m.Truncated)
	}
	if _, ok := m.Lookup(FileName); !ok {
		t.Errorf("SKILL.md not listed")
	}
	if len(diags) != 1 || !strings.Contains(diags[0].Message, "more than 2112 entries") {
		t.Errorf("diagnostics %v, want one warning naming the entry bound", diags)
	}
}

func TestReadManifestOptions(t *testing.T) {
	fsys := fstest.MapFS{"SKILL.md": {Data: []byte(skillMD)}}
	for _, lim := range []Limits{{MaxFileSize: -1}, {MaxFiles: -1}, {MaxBytes: -1}} {
		_, _, err := ReadManifest(context.Background(), fsys, ".", ManifestOptions{Limits: lim})
		if err == nil || !strings.Contains(err.Error(), "Limits.Max") {
			t.Errorf("%+v: err = %v, want an error naming the field", lim, err)
		}
	}
	l, err := Limits{}.WithDefaults()
	if err != nil || l != (Limits{DefaultMaxFileSize, DefaultMaxFiles, DefaultMaxBytes}) {
		t.Errorf("WithDefaults() = %+v, %v", l, err)
	}
}

func TestReadManifestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fsys := fstest.MapFS{"SKILL.md": {Data: []byte(skillMD)}}
	if _, _, err := ReadManifest(ctx, fsys, ".", ManifestOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestHashFile(t *testing.T) {
	fsys := fstest.MapFS{"a": {Data: []byte("hello")}}
	got, err := HashFile(fsys, "a")
	if err != nil || got != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Errorf("HashFile = %q, %v", got, err)
	}
	if _, err := HashFile(fsys, "missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}
