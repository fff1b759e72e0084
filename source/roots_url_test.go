package source

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplitList(t *testing.T) {
	for v, want := range map[string][]string{
		"/a:/b":                                   {"/a", "/b"},
		"/a::/b:":                                 {"/a", "/b"},
		"https://example.com/skills.zip":          {"https://example.com/skills.zip"},
		"/a:https://example.com/s.zip:/b":         {"/a", "https://example.com/s.zip", "/b"},
		"http://127.0.0.1:8080/s.tgz:/b":          {"http://127.0.0.1:8080/s.tgz", "/b"},
		"https://user:pass@host:443/s.zip:./rel":  {"https://user:pass@host:443/s.zip", "./rel"},
		"https://host:8080:/srv/skills":           {"https://host:8080", "/srv/skills"},
		"HTTPS://host/a.zip#sha256=00:~/skills":   {"HTTPS://host/a.zip#sha256=00", "~/skills"},
		"http:/not-a-url":                         {"http", "/not-a-url"},
		"https://host/a.zip?x=1:https://h2/b.zip": {"https://host/a.zip?x=1", "https://h2/b.zip"},
	} {
		if got := SplitList(v); !slices.Equal(got, want) {
			t.Errorf("SplitList(%q) = %q, want %q", v, got, want)
		}
	}
}

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://h/a.zip": true, "HTTP://h/x": true, "http://": false, "ftp://h/x": false,
		"/srv/skills": false, "skills.zip": false, "https:/x": false,
	} {
		if IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v", s, !want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://tok:secret@host/a.zip?sig=abc&x=1#sha256=00": "https://host/a.zip?sig=REDACTED&x=REDACTED#sha256=00",
		"https://ghp_token@github.com/o/r/archive/main.zip":   "https://github.com/o/r/archive/main.zip",
		"http://host/a.zip": "http://host/a.zip",
		"http://[::1":       "(unparsable URL)",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDefaultRootsURL(t *testing.T) {
	base := t.TempDir()
	folder := filepath.Join(base, "folder")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	var opened []string
	open := func(url, label string, rank int) (Source, error) {
		opened = append(opened, url)
		if strings.Contains(url, "bad") {
			return Source{}, errors.New("the server answered 404 Not Found")
		}
		return Source{Label: label, FS: os.DirFS(folder), Rank: rank}, nil
	}
	good, bad := "https://user:pw@example.com/skills.zip", "https://example.com/bad.zip"

	srcs, warnings, err := DefaultRootsURL(base, env(map[string]string{"SKILLKIT_PATH": good + ":" + bad + ":" + folder}), "", open)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(opened, []string{good, bad}) {
		t.Errorf("opened %q", opened)
	}
	if len(srcs) != 2 || srcs[0].Label != "https://example.com/skills.zip" || srcs[0].Rank != 0 || srcs[1].Path != folder || srcs[1].Rank != 1 {
		t.Errorf("sources %+v", srcs)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], bad) || !strings.Contains(warnings[0], "404") {
		t.Errorf("warnings %q", warnings)
	}

	// Without an opener a URL entry is skipped with a warning, its
	// credentials not shown.
	_, warnings, err = DefaultRoots(base, env(map[string]string{"SKILLKIT_PATH": good}), "")
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "does not fetch") || strings.Contains(warnings[0], "pw") {
		t.Errorf("no opener: %q, %v", warnings, err)
	}

	// SKILLS_ROOT (seed 003) is one root, used when SKILLKIT_PATH is
	// unset; a URL there is opened too.
	srcs, _, err = DefaultRootsURL(base, env(map[string]string{"SKILLS_ROOT": folder}), "", open)
	if err != nil || len(srcs) != 1 || srcs[0].Label != "SKILLS_ROOT:"+folder {
		t.Errorf("SKILLS_ROOT folder: %+v, %v", srcs, err)
	}
	opened = nil
	srcs, _, err = DefaultRootsURL(base, env(map[string]string{"SKILLS_ROOT": good}), "", open)
	if err != nil || len(srcs) != 1 || !slices.Equal(opened, []string{good}) {
		t.Errorf("SKILLS_ROOT URL: %+v, %v", srcs, err)
	}
	srcs, _, err = DefaultRootsURL(base, env(map[string]string{"SKILLKIT_PATH": folder, "SKILLS_ROOT": filepath.Join(base, "other")}), "", open)
	if err != nil || len(srcs) != 1 || srcs[0].Label != "SKILLKIT_PATH:"+folder {
		t.Errorf("SKILLKIT_PATH wins: %+v, %v", srcs, err)
	}
	_, warnings, _ = DefaultRootsURL(base, env(map[string]string{"SKILLS_ROOT": filepath.Join(base, "missing")}), "", open)
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "SKILLS_ROOT entry") {
		t.Errorf("missing SKILLS_ROOT: %q", warnings)
	}
}
