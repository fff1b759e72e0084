package skill

import (
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// parseSeeds returns the sources of every table-driven Parse case.
func parseSeeds() []string {
	var out []string
	for _, cases := range [][]parseCase{parseTextCases(), parseScalarCases(), parseFieldCases(), parseNameCases()} {
		for _, c := range cases {
			out = append(out, c.src)
		}
	}
	return append(out,
		"---\nname: pdf\ndescription: d\ndisable-model-invocation: yes\nuser-invocable: off\n---\n",
		"---\nname: pdf\ndescription: d\na: &x [*x, {b: *x}]\n---\n",
		"---\nname: pdf\ndescription: d\na: &a [1,2]\nb: &b [*a,*a,*a]\nc: &c [*b,*b,*b]\nd: [*c,*c,*c]\n---\n",
	)
}

// FuzzParse checks that Parse never panics and that what it returns is
// usable: a document has a valid name and a description, its Raw encodes
// to JSON, and every diagnostic or error names the file.
func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds() {
		f.Add(s, "pdf")
	}
	f.Fuzz(func(t *testing.T, src, dir string) {
		const file = "x/SKILL.md"
		doc, diags, err := Parse([]byte(src), ParseOptions{File: file, DirName: dir, MaxSize: 64 << 10})
		for _, d := range diags {
			if d.File != file || d.Message == "" {
				t.Fatalf("diagnostic without file or message: %+v", d)
			}
			if d.Line < 0 {
				t.Fatalf("negative line: %+v", d)
			}
		}
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || le.File != file || le.Message == "" {
				t.Fatalf("error %v (%T) is not a LoadError naming the file", err, err)
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrLimit) {
				t.Fatalf("error %v wraps neither ErrInvalid nor ErrLimit", err)
			}
			if doc != nil {
				t.Fatal("document returned with an error")
			}
			return
		}
		if !ValidName(doc.Name) {
			t.Fatalf("document name %q is not valid", doc.Name)
		}
		if strings.TrimSpace(doc.Description) == "" {
			t.Fatal("document without description")
		}
		if _, err := json.Marshal(doc.Raw); err != nil {
			t.Fatalf("Raw does not encode to JSON: %v (%#v)", err, doc.Raw)
		}
		if doc.BodyLine < 2 {
			t.Fatalf("BodyLine %d", doc.BodyLine)
		}
	})
}

// FuzzParseAgreesWithValidate checks that discovery and strict
// validation agree, or discovery says why not. Where ValidateData
// accepts a SKILL.md whose front matter both cut alike (it starts with a
// "---" line, and no "---" lies inside it), Parse loads it under the same
// name (NFKC-normalised) or rejects it only for the skill tool's ASCII
// name rule, saying so. Where ValidateData rejects a front matter for
// strict YAML that Parse reads anyway, Parse warns.
func FuzzParseAgreesWithValidate(f *testing.F) {
	for _, s := range parseSeeds() {
		f.Add(s, "pdf")
	}
	for _, s := range []string{
		"---\nname: café\ndescription: d\n---\n",
		"---\nname: \uff46\uff4f\uff4f\ndescription: d\n---\n",
		"---\nname: pdf\ndescription: d\nmetadata: {a: b}\n---\n",
		"---\nname: pdf\ndescription: a\tb\n---\n",
		"---\nname: pdf\ndescription: |\n  \tcode\n---\n",
		"---\nname: pdf\ndescription: d\nmetadata:\n  - : x\n---\n",
	} {
		f.Add(s, "pdf")
	}
	f.Fuzz(func(t *testing.T, src, dir string) {
		if strings.ContainsAny(dir, "/\x00") {
			return
		}
		msgs := ValidateData([]byte(src), dir)
		doc, diags, err := Parse([]byte(src), ParseOptions{File: "SKILL.md", DirName: dir, MaxSize: DefaultMaxFileSize})
		text := normalizeText([]byte(src))
		sp, msg := splitDocument(text)
		strictSrc, smsg := splitStrict(universalNewlines(src))
		sameCut := msg == "" && smsg == "" && !strings.HasPrefix(src, byteOrderMark) && strictSrc == "\n"+sp.yaml
		if !sameCut {
			return
		}
		if len(msgs) == 0 {
			if err != nil {
				var le *LoadError
				if !errors.As(err, &le) || !strings.Contains(le.Message, "the skill tool accepts only ASCII names") {
					t.Fatalf("ValidateData accepts %q but Parse fails: %v", src, err)
				}
				return
			}
			return
		}
		if len(msgs) == 1 && strings.Contains(msgs[0], "the reference validator reads strict YAML") && err == nil && doc != nil && len(diags) == 0 {
			t.Fatalf("ValidateData rejects %q (%s) but Parse reads it without a warning", src, msgs[0])
		}
	})
}

// validatePrefixes are the beginnings of every message Validate may return.
var validatePrefixes = []string{
	"Missing required file: SKILL.md",
	"SKILL.md must start with YAML frontmatter (---)",
	"SKILL.md frontmatter not properly closed with ---",
	"Invalid YAML in frontmatter: ",
	"SKILL.md frontmatter must be a YAML mapping",
	"Unexpected fields in frontmatter: ",
	"Missing required field in frontmatter: ",
	"Field 'name' must be a non-empty string",
	"Field 'description' must be a non-empty string",
	"Field 'compatibility' must be a string",
	"Skill name ",
	"Directory name ",
	"Description exceeds 1024 character limit (",
	"Compatibility exceeds 500 character limit (",
	"SKILL.md exceeds ",
	"SKILL.md is not valid UTF-8",
}

// FuzzValidate checks that Validate never panics and only ever speaks the
// reference validator's messages (plus skillkit's size and encoding ones).
func FuzzValidate(f *testing.F) {
	for _, s := range parseSeeds() {
		f.Add(s, "pdf")
	}
	f.Fuzz(func(t *testing.T, src, dir string) {
		msgs := Validate(fstest.MapFS{FileName: {Data: []byte(src)}}, dir)
		for _, m := range msgs {
			ok := false
			for _, p := range validatePrefixes {
				ok = ok || strings.HasPrefix(m, p)
			}
			if !ok {
				t.Fatalf("unexpected message %q", m)
			}
		}
	})
}

// FuzzResolve checks that whatever two links point at and whatever path is
// asked for, Resolve never panics, never loops, and only ever returns a
// path inside the root that is not itself a link.
func FuzzResolve(f *testing.F) {
	for _, s := range [][3]string{
		{"d", "../f", "r/a/b/c"},
		{"../x", "f", "r/a"},
		{"/etc", "..", "r/d/b/d/b"},
		{"a", "b", "r/a"},
		{"d/b", "../a", "r/a/x"},
		{".", "./../d", "r/../r/a"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, p string) {
		fsys := fstest.MapFS{
			"r/f":   {Data: []byte("x")},
			"r/d/g": {Data: []byte("y")},
			"r/a":   {Data: []byte(a), Mode: fs.ModeSymlink},
			"r/d/b": {Data: []byte(b), Mode: fs.ModeSymlink},
			"out/z": {Data: []byte("z")},
		}
		got, err := Resolve(fsys, "r", p)
		if err != nil {
			return
		}
		if got != "r" && !strings.HasPrefix(got, "r/") {
			t.Fatalf("Resolve(%q) = %q, outside the root", p, got)
		}
		if strings.Contains(got+"/", "/../") || strings.Contains(got+"/", "/./") {
			t.Fatalf("Resolve(%q) = %q, not clean", p, got)
		}
		if info, err := fs.Lstat(fsys, got); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			t.Fatalf("Resolve(%q) = %q, still a link", p, got)
		}
	})
}
