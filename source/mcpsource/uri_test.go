package mcpsource

import (
	"strings"
	"testing"

	"github.com/skillkit/skillkit/skill"
)

func TestParseSkillURI(t *testing.T) {
	cases := []struct {
		uri  string
		want string // segments joined by "|", or the error's text
		ok   bool
	}{
		{"skill://pdf/SKILL.md", "pdf", true},
		{"skill://acme/billing/refunds/SKILL.md", "acme|billing|refunds", true},
		{"skill://pdf/skill.md", "does not name a SKILL.md", false},
		{"skill:///SKILL.md", "does not name a SKILL.md", false},
		{"skill://SKILL.md", "does not name a SKILL.md", false},
		{"skill://a//b/SKILL.md", "empty path segment", false},
		{"skill://a/./SKILL.md", `path segment "." is not allowed`, false},
		{"skill://a%2Fb/SKILL.md", `holds '%'`, false},
		{"skill://a?x=1/SKILL.md", `holds '?'`, false},
		{"skill://a\\b/SKILL.md", `holds '\\'`, false},
		{"skill://a\x00/SKILL.md", `holds '\x00'`, false},
		{"https://a/SKILL.md", "does not start with skill://", false},
		{"skill://" + strings.Repeat("a", 256) + "/SKILL.md", "over 255", false},
	}
	for _, c := range cases {
		segs, err := parseSkillURI(c.uri)
		switch {
		case c.ok && (err != nil || strings.Join(segs, "|") != c.want):
			t.Errorf("parseSkillURI(%q) = %q, %v; want %q", c.uri, segs, err, c.want)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("parseSkillURI(%q) error %v; want %q", c.uri, err, c.want)
		}
	}
}

func TestResourcePath(t *testing.T) {
	cases := []struct{ skill, uri, want string }{
		{"acme/pdf", "skill://acme/pdf/SKILL.md", "SKILL.md"},
		{"acme/pdf", "skill://acme/pdf/references/forms.md", "references/forms.md"},
		{"acme/pdf", "skill://acme/pdfx/a.md", ""},
		{"acme/pdf", "skill://acme/pdf/", ""},
		{"acme/pdf", "skill://acme/pdf/../x", ""},
		{"acme/pdf", "skill://acme/pdf/a//b", ""},
	}
	for _, c := range cases {
		got, err := resourcePath(c.skill, c.uri)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("resourcePath(%q, %q) = %q, %v; want %q", c.skill, c.uri, got, err, c.want)
		}
	}
}

// FuzzSkillURI checks that the parser never panics, that what it accepts
// is exactly the URI given (rebuilt from its segments) and that every
// accepted path is one a file system takes as a plain relative path.
func FuzzSkillURI(f *testing.F) {
	for _, s := range []string{"skill://pdf/SKILL.md", "skill://a/b/c/SKILL.md", "skill://a/../SKILL.md", "skill://é/SKILL.md", "skill:///SKILL.md", "x"} {
		f.Add(s, "references/forms.md")
	}
	f.Fuzz(func(t *testing.T, uri, file string) {
		segs, err := parseSkillURI(uri)
		if err != nil {
			return
		}
		p := strings.Join(segs, "/")
		if Scheme+p+"/SKILL.md" != uri {
			t.Fatalf("%q parsed to %q", uri, segs)
		}
		for _, s := range segs {
			if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\%?#") {
				t.Fatalf("%q: bad segment %q accepted", uri, s)
			}
		}
		rel, err := resourcePath(p, Scheme+p+"/"+file)
		if err != nil {
			return
		}
		if rel != file {
			t.Fatalf("resource %q of %q: path %q", file, p, rel)
		}
		for _, s := range strings.Split(rel, "/") {
			if s == "" || s == "." || s == ".." || strings.Contains(s, "\\") {
				t.Fatalf("resource %q: bad segment %q accepted", file, s)
			}
		}
	})
}

// FuzzDropAllowedTools checks that commenting out allowed-tools never
// panics, keeps the size, and yields front matter without the field and
// with every other field unchanged — or refuses.
func FuzzDropAllowedTools(f *testing.F) {
	for _, s := range []string{
		"---\nname: a\ndescription: d\nallowed-tools: Bash Read\n---\nbody\n",
		"---\nname: a\nallowed-tools:\n  - Bash\n- Read\ndescription: d\n---\n",
		"---\r\n'allowed-tools' : x\r\nname: a\r\ndescription: d\r\n---\r\n",
		"---\nname: a\ndescription: d\nallowed-tools: |\n  x\n\n  y\nmetadata: {a: b}\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, _, err := skill.Parse(data, skill.ParseOptions{MaxSize: int64(len(data)) + 1})
		if err != nil || doc == nil {
			return
		}
		if _, ok := doc.Raw[skill.FieldAllowedTools]; !ok {
			return
		}
		out, err := dropAllowedTools(data, doc.Raw)
		if err != nil {
			return
		}
		if len(out) != len(data) {
			t.Fatalf("size %d, was %d", len(out), len(data))
		}
		got, _, err := skill.Parse(out, skill.ParseOptions{MaxSize: int64(len(out)) + 1})
		if err != nil {
			t.Fatalf("accepted output does not parse: %v", err)
		}
		if _, ok := got.Raw[skill.FieldAllowedTools]; ok || len(got.AllowedTools) != 0 {
			t.Fatalf("allowed-tools kept in %q", out)
		}
		if got.Body != doc.Body {
			t.Fatalf("body changed: %q, was %q", got.Body, doc.Body)
		}
	})
}
