package mcp

import (
	"errors"
	"strings"
	"testing"
)

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		name string
		path string
	}{
		{"skill://pdf/SKILL.md", "pdf", "SKILL.md"},
		{"skill://pdf", "pdf", ""},
		{"skill://pdf/references", "pdf", "references"},
		{"skill://pdf-tools/references/deep/more.md", "pdf-tools", "references/deep/more.md"},
		{"skill://a1/my%20file.md", "a1", "my file.md"},
		{"skill://a/%25", "a", "%"},
		{"skill://a/%3F%23", "a", "?#"},
		{"skill://a/caf%C3%A9.txt", "a", "café.txt"},
		{"skill://a/.hidden", "a", ".hidden"},
		{"skill://a/..x/y..", "a", "..x/y.."},
		{"skill://a/it's(1)+x=y;z,@:~!$&*", "a", "it's(1)+x=y;z,@:~!$&*"},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			u, err := parseURI(tc.uri)
			if err != nil {
				t.Fatalf("parseURI: %v", err)
			}
			if u.Name != tc.name || u.Path != tc.path {
				t.Errorf("parseURI = %+v; want name %q path %q", u, tc.name, tc.path)
			}
			if got := u.String(); got != tc.uri {
				t.Errorf("String() = %q; want %q", got, tc.uri)
			}
		})
	}
}

func TestParseURIRefuses(t *testing.T) {
	for _, uri := range []string{
		"",
		"skill://",
		"skill:///etc/passwd",
		"skill://x/../y/SKILL.md",
		"skill://a/b/../../c",
		"skill://a/./SKILL.md",
		"skill://a/b/.",
		"skill://a/%2e%2e/SKILL.md",
		"skill://a/%2E%2E/SKILL.md",
		"skill://a/%2e/SKILL.md",
		"skill://a/b%2Fc",
		"skill://a/b%2fc",
		"skill://a/%41.md",
		"skill://a/my%20file.md%",
		"skill://a/bad%zz",
		"skill://a/x%c3%a9",
		"skill://a/SKILL.md\x00",
		"skill://a/%00",
		"skill://a/b\\c",
		"skill://a/%5C",
		"skill://a/",
		"skill://a//SKILL.md",
		"skill://a/b//c",
		"skill://a/SKILL.md?x=1",
		"skill://a/SKILL.md#top",
		"skill://a?x",
		"skill://a/my file.md",
		"skill://a/%FF",
		"SKILL://a/SKILL.md",
		"Skill://a/SKILL.md",
		"file:///etc/passwd",
		"skill:/a/SKILL.md",
		"skill://A/SKILL.md",
		"skill://a--b/SKILL.md",
		"skill://-a/SKILL.md",
		"skill://a.example/SKILL.md",
		"skill://user@a/SKILL.md",
		"skill://a:80/SKILL.md",
		"skill://%61/SKILL.md",
		"skill://acme/billing/refunds/SKILL.md%2F",
		" skill://a/SKILL.md",
	} {
		t.Run(uri, func(t *testing.T) {
			u, err := parseURI(uri)
			if err == nil {
				t.Fatalf("parseURI(%q) = %+v; want an error", uri, u)
			}
			if !errors.Is(err, errBadURI) {
				t.Errorf("error %v does not wrap errBadURI", err)
			}
			if !strings.Contains(err.Error(), "skill://") {
				t.Errorf("error %q does not say what a skill URI looks like", err)
			}
		})
	}
}

// TestParseURISuggests checks that a refused spelling names the canonical
// one when there is one.
func TestParseURISuggests(t *testing.T) {
	for uri, want := range map[string]string{
		"skill://a/":             `"skill://a"`,
		"skill://a/%41.md":       `"skill://a/A.md"`,
		"skill://a/x%c3%a9":      `"skill://a/x%C3%A9"`,
		"skill://a/my file.md":   `"skill://a/my%20file.md"`,
		"skill://a/SKILL.md?x=1": `"skill://a/SKILL.md%3Fx=1"`,
	} {
		_, err := parseURI(uri)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseURI(%q) = %v; want it to suggest %s", uri, err, want)
		}
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{
		"skill://pdf/SKILL.md", "skill://pdf", "skill://a/b/c.md", "skill://a/%20", "skill://a/%2e%2e",
		"skill:///etc/passwd", "skill://x/../y/SKILL.md", "skill://a/\x00", "skill://a/b\\c", "skill://a/?q#f",
		"skill://a/caf%C3%A9", "skill://a/%FF", "skill://a//b", "skill://a/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := parseURI(raw)
		if err != nil {
			return
		}
		if got := u.String(); got != raw {
			t.Fatalf("String(parseURI(%q)) = %q", raw, got)
		}
		again, err := parseURI(u.String())
		if err != nil || again != u {
			t.Fatalf("parseURI(String(%+v)) = %+v, %v", u, again, err)
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if u.Path != "" && (seg == "" || seg == "." || seg == "..") {
				t.Fatalf("parseURI(%q) accepted segment %q", raw, seg)
			}
		}
		if strings.ContainsAny(u.Path, "\\\x00") {
			t.Fatalf("parseURI(%q) accepted path %q", raw, u.Path)
		}
	})
}
