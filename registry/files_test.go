package registry

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/skillkit/skillkit/source"
)

// filesSkill is a skill with files at several depths, an ignored folder,
// a nested skill and a link out, none of which but the listed files may
// appear in Files.
func filesSkill(t *testing.T) (string, *Registry, *traceFS) {
	t.Helper()
	root, reg, tfs := hostSkills(t, map[string]string{
		"s/SKILL.md":                skillMD("s", "files"),
		"s/guide.md":                "guide\n",
		"s/references/api.md":       "api\n",
		"s/references/deep/more.md": "more\n",
		"s/assets/logo.png":         "\x89PNG\r\n",
		"s/empty.txt":               "",
		"s/node_modules/x.js":       "ignored\n",
		"s/nested/SKILL.md":         skillMD("nested", "a skill of its own"),
		"s/nested/inner.md":         "inner\n",
		"outside.txt":               "secret\n",
	}, nil)
	if err := os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(root, "s", "escape.txt")); err != nil {
		t.Fatal(err)
	}
	return root, reg, tfs
}

var filesListed = []string{"SKILL.md", "assets/logo.png", "empty.txt", "guide.md", "references/api.md", "references/deep/more.md"}

func TestFilesFSTest(t *testing.T) {
	_, reg, _ := filesSkill(t)
	fsys, err := reg.Snapshot().Files(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(fsys, filesListed...); err != nil {
		t.Fatal(err)
	}
	var walked []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			walked = append(walked, p)
		}
		return err
	})
	if err != nil || !slices.Equal(walked, filesListed) {
		t.Errorf("walk = %q, %v; want exactly the listed files %q", walked, err, filesListed)
	}
	dirs, err := fs.ReadDir(fsys, ".")
	var names []string
	for _, d := range dirs {
		names = append(names, d.Name())
	}
	if want := []string{"SKILL.md", "assets", "empty.txt", "guide.md", "references"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("ReadDir(.) = %q, %v; want %q", names, err, want)
	}
	info, err := fs.Stat(fsys, "references/api.md")
	if err != nil || info.Size() != 4 || info.Mode() != 0o444 || !info.ModTime().IsZero() {
		t.Errorf("Stat = %v, %v", info, err)
	}
}

func TestFilesRefuses(t *testing.T) {
	_, reg, _ := filesSkill(t)
	fsys, err := reg.Snapshot().Files(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want error
	}{
		{"../x", fs.ErrNotExist},
		{"../outside.txt", fs.ErrNotExist},
		{"references/../../outside.txt", fs.ErrNotExist},
		{"/etc/passwd", fs.ErrNotExist},
		{"escape.txt", fs.ErrNotExist},
		{"node_modules/x.js", fs.ErrNotExist},
		{"node_modules", fs.ErrNotExist},
		{"nested/inner.md", fs.ErrNotExist},
		{"nested", fs.ErrNotExist},
		{"missing.md", fs.ErrNotExist},
		{"./guide.md", fs.ErrInvalid},
		{"references//api.md", fs.ErrInvalid},
		{"references/", fs.ErrInvalid},
		{"", fs.ErrInvalid},
		{"references\\api.md", fs.ErrInvalid},
		{"guide.md\x00", fs.ErrInvalid},
	} {
		checks := map[string]error{}
		_, checks["Open"] = fsys.Open(tc.name)
		_, checks["Stat"] = fs.Stat(fsys, tc.name)
		_, checks["ReadFile"] = fs.ReadFile(fsys, tc.name)
		_, checks["ReadDir"] = fs.ReadDir(fsys, tc.name)
		for op, err := range checks {
			var pe *fs.PathError
			if !errors.Is(err, tc.want) || !errors.As(err, &pe) || pe.Path != tc.name {
				t.Errorf("%s(%q) = %v; want a *fs.PathError for it wrapping %v", op, tc.name, err, tc.want)
			}
		}
	}
	if _, err := fs.ReadDir(fsys, "guide.md"); err == nil {
		t.Error("ReadDir of a file succeeded")
	}
	if _, err := fs.ReadFile(fsys, "references"); err == nil {
		t.Error("ReadFile of a folder succeeded")
	}
	if _, err := reg.Snapshot().Files(t.Context(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Files of an unknown skill: %v", err)
	}
}

// TestFilesLarge serves a 1 MiB file, four times the default read cap
// ReadFile obeys.
func TestFilesLarge(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<16)
	_, reg, _ := hostSkills(t, map[string]string{"s/SKILL.md": skillMD("s", "big"), "s/assets/big.bin": big}, nil)
	s := reg.Snapshot()
	if _, err := s.ReadFile(t.Context(), "s", "assets/big.bin"); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadFile of 1 MiB: %v, want ErrTooLarge", err)
	}
	fsys, err := s.Files(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	data, err := fs.ReadFile(fsys, "assets/big.bin")
	if err != nil || string(data) != big {
		t.Fatalf("ReadFile through Files: %d bytes, %v", len(data), err)
	}
	f, err := fsys.Open("assets/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := io.ReadAll(iotestHalf{f})
	if err != nil || !bytes.Equal(h, data) {
		t.Errorf("streamed read: %d bytes, %v", len(h), err)
	}
	m, err := s.Digests(t.Context(), "s")
	if err != nil || m.Files[0].Path != "SKILL.md" || m.Files[1].SHA256 != sha(big) {
		t.Errorf("Digests = %+v, %v", m, err)
	}
}

// iotestHalf reads at most 1000 bytes at a time, so the file is streamed
// in many reads.
type iotestHalf struct{ r io.Reader }

func (h iotestHalf) Read(p []byte) (int, error) { return h.r.Read(p[:min(len(p), 1000)]) }

// TestFilesStale rewrites files after the snapshot pinned their digests:
// same size other bytes fail at the end of the read with ErrStale in
// place of io.EOF, and never with the new bytes whole; another size
// fails at Open.
func TestFilesStale(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		atOpen        bool
	}{
		{"same size", "GUIDE\n", false},
		{"longer", "guide, longer\n", true},
		{"shorter", "g\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, reg, _ := filesSkill(t)
			s := reg.Snapshot()
			fsys, err := s.Files(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			if data, err := fs.ReadFile(fsys, "guide.md"); err != nil || string(data) != "guide\n" {
				t.Fatalf("first read = %q, %v", data, err)
			}
			edit(t, root, "s/guide.md", tc.content)
			f, err := fsys.Open("guide.md")
			if tc.atOpen {
				if !errors.Is(err, ErrStale) {
					t.Fatalf("Open after a resize: %v, want ErrStale", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			data, err := io.ReadAll(f)
			if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), `guide.md of skill "s"`) {
				t.Errorf("read after a rewrite = %q, %v; want ErrStale naming guide.md", data, err)
			}
			if string(data) == tc.content {
				t.Error("the rewritten content was returned whole")
			}
			if n, err := f.Read(make([]byte, 8)); n != 0 || !errors.Is(err, ErrStale) {
				t.Errorf("read after the failure = %d, %v; want the failure again", n, err)
			}
			if _, err := s.DocText(t.Context(), "s", "guide.md"); !errors.Is(err, ErrStale) {
				t.Errorf("DocText after the rewrite: %v, want ErrStale", err)
			}
		})
	}
}

// TestFilesPinsDigest reads a file through Files first: its digest is
// pinned there, so Digests does not read it again.
func TestFilesPinsDigest(t *testing.T) {
	_, reg, tfs := filesSkill(t)
	s := reg.Snapshot()
	fsys, err := s.Files(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(fsys, "references/api.md"); err != nil {
		t.Fatal(err)
	}
	tfs.take("")
	m, err := s.Digests(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if n := tfs.prefixed("open", "s/references/api.md"); n != 0 {
		t.Errorf("a file Files read was opened %d times by Digests", n)
	}
	for _, f := range m.Files {
		if f.Path == "references/api.md" && f.SHA256 != sha("api\n") {
			t.Errorf("digest %s", f.SHA256)
		}
	}
}

func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      string // part of the error when refused
	}{
		{"references/x.md", "references/x.md", ""},
		{"./references/x.md", "references/x.md", ""},
		{"././references/x.md", "references/x.md", ""},
		{"references//x.md", "references/x.md", ""},
		{"references/./x.md", "references/x.md", ""},
		{"references/../x.md", "x.md", ""},
		{"references/", "references", ""},
		{".", ".", ""},
		{"./", ".", ""},
		{".//a", "a", ""},
		{"", "", "empty"},
		{"..", "", "outside the skill folder"},
		{"../x", "", "outside the skill folder"},
		{"a/../../x", "", "outside the skill folder"},
		{"./../x", "", "outside the skill folder"},
		{"/abs", "", "absolute"},
		{"//abs", "", "absolute"},
		{"a\x00b", "", "NUL"},
		{`references\x.md`, "", "backslash"},
		{"a\x80.md", "", "UTF-8"},
	} {
		got, err := CleanPath(tc.in)
		if tc.bad != "" {
			if !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "references/api.md") {
				t.Errorf("CleanPath(%q) = %q, %v; want ErrInvalidPath saying %q and what to pass", tc.in, got, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzCleanPath(f *testing.F) {
	for _, s := range []string{"references/x.md", "./a", "a//b", "../x", "/abs", "", ".", "a/../..", "a\\b", "a\x00", "././.", "a/./b/../c/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		got, err := CleanPath(rel)
		if err != nil {
			if !errors.Is(err, ErrInvalidPath) || got != "" {
				t.Fatalf("CleanPath(%q) = %q, %v: a refusal must wrap ErrInvalidPath and return nothing", rel, got, err)
			}
			return
		}
		if !fs.ValidPath(got) || strings.ContainsAny(got, "\x00\\") {
			t.Fatalf("CleanPath(%q) = %q: not a valid, plain fs path", rel, got)
		}
		if again, err := CleanPath(got); err != nil || again != got {
			t.Fatalf("CleanPath(%q) = %q, but CleanPath of that = %q, %v", rel, got, again, err)
		}
		if j := path.Join("/skill", rel); j != "/skill" && !strings.HasPrefix(j, "/skill/") {
			t.Fatalf("CleanPath(%q) accepted a path that leaves the folder (%s)", rel, j)
		}
		if j := path.Join("/skill", rel); j != path.Join("/skill", got) {
			t.Fatalf("CleanPath(%q) = %q names another file than the path (%s)", rel, got, j)
		}
	})
}

func TestResolveDocs(t *testing.T) {
	fsys := fstest.MapFS{
		"s/SKILL.md":          {Data: []byte(skillMD("s", "docs"))},
		"s/guide.md":          {Data: []byte("g")},
		"s/references/x.md":   {Data: []byte("x")},
		"s/references/y.txt":  {Data: []byte("y")},
		"s/scripts/run.sh":    {Data: []byte("r")},
		"bare/SKILL.md":       {Data: []byte(skillMD("bare", "no docs"))},
		"bare/scripts/run.sh": {Data: []byte("r")},
	}
	s := newReg(t, []source.Source{source.FS(fsys, "mem", 0)}, nil).Snapshot()
	valid := []string{"guide.md", "references/x.md", "references/y.txt"}
	for _, tc := range []struct {
		name    string
		skill   string
		docs    []string
		want    []string
		unknown []string
		invalid string
	}{
		{"plain", "s", []string{"references/x.md"}, []string{"references/x.md"}, nil, ""},
		{"dot slash", "s", []string{"./references/x.md"}, []string{"references/x.md"}, nil, ""},
		{"double slash", "s", []string{"references//x.md"}, []string{"references/x.md"}, nil, ""},
		{"sorted and deduplicated", "s", []string{"references/y.txt", "./references/x.md", "guide.md", "references/x.md", "references/../references/x.md"}, []string{"guide.md", "references/x.md", "references/y.txt"}, nil, ""},
		{"none", "s", nil, []string{}, nil, ""},
		{"dot dot", "s", []string{"guide.md", "../x"}, nil, nil, `"../x"`},
		{"absolute", "s", []string{"/abs"}, nil, nil, `"/abs"`},
		{"backslash", "s", []string{`references\x.md`}, nil, nil, `"references\\x.md"`},
		{"SKILL.md", "s", []string{"SKILL.md"}, nil, []string{"SKILL.md"}, ""},
		{"not a document", "s", []string{"scripts/run.sh"}, nil, []string{"scripts/run.sh"}, ""},
		{"unknown", "s", []string{"guide.md", "nope.md", "./nope.md", "nope.md"}, nil, []string{"./nope.md", "nope.md"}, ""},
		{"folder", "s", []string{"references"}, nil, []string{"references"}, ""},
		{"skill without documents", "bare", []string{"x.md"}, nil, []string{"x.md"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.ResolveDocs(t.Context(), tc.skill, tc.docs)
			switch {
			case tc.invalid != "":
				if !errors.Is(err, ErrInvalidPath) || !strings.Contains(err.Error(), tc.invalid) {
					t.Errorf("ResolveDocs = %q, %v; want ErrInvalidPath naming %s", got, err, tc.invalid)
				}
			case tc.unknown != nil:
				var de *DocsError
				if !errors.As(err, &de) || !errors.Is(err, ErrNotFound) || !slices.Equal(de.Unknown, tc.unknown) || de.Skill != tc.skill {
					t.Fatalf("ResolveDocs = %q, %v; want a DocsError for %q", got, err, tc.unknown)
				}
				wantValid := valid
				if tc.skill == "bare" {
					wantValid = nil
				}
				if !slices.Equal(de.Valid, wantValid) {
					t.Errorf("Valid = %q, want %q", de.Valid, wantValid)
				}
				for _, u := range tc.unknown {
					if !strings.Contains(err.Error(), `"`+u+`"`) {
						t.Errorf("error %q does not name %q", err, u)
					}
				}
				for _, v := range wantValid {
					if !strings.Contains(err.Error(), v) {
						t.Errorf("error %q does not list %q", err, v)
					}
				}
			default:
				if err != nil || !slices.Equal(got, tc.want) {
					t.Errorf("ResolveDocs = %q, %v; want %q", got, err, tc.want)
				}
			}
		})
	}
	if _, err := s.ResolveDocs(t.Context(), "nope", []string{"x.md"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown skill: %v", err)
	}
	_, err := s.ResolveDocs(t.Context(), "s", []string{"SKILL.md"})
	if err == nil || !strings.Contains(err.Error(), "always loaded") {
		t.Errorf("SKILL.md error %v does not say it is always loaded", err)
	}
}
