package skill

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const onlyAllowed = " Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed."

func skillFS(src string) fstest.MapFS {
	return fstest.MapFS{FileName: {Data: []byte(src)}}
}

func TestValidate(t *testing.T) {
	name64 := strings.Repeat("é", 64)
	name65 := name64 + "é"
	desc1024 := strings.Repeat("😀", 1024)
	compat500 := strings.Repeat("ü", 500)
	cases := []struct {
		name string
		fsys fstest.MapFS
		dir  string
		want []string
	}{
		{"valid", skillFS("---\nname: pdf\ndescription: Read PDFs.\nlicense: MIT\ncompatibility: python3\nmetadata:\n  v: 1\nallowed-tools: Read\n---\nBody\n"), "pdf", nil},
		{"valid without a directory check", skillFS("---\nname: pdf\ndescription: d\n---\n"), "", nil},
		{"valid with CRLF", skillFS("---\r\nname: pdf\r\ndescription: d\r\n---\r\n"), "pdf", nil},
		{"valid with lone CR", skillFS("---\rname: pdf\rdescription: d\r---\r"), "pdf", nil},
		{"a byte-order mark is not skipped", skillFS("\xEF\xBB\xBF---\r\nname: pdf\r\ndescription: d\r\n---\r\n"), "pdf", []string{"SKILL.md must start with YAML frontmatter (---)"}},
		{"null, ~ and yes are text", skillFS("---\nname: null\ndescription: ~\nlicense: yes\n---\n"), "null", nil},
		{"empty values are empty text", skillFS("---\nname: pdf\ndescription:\n---\n"), "pdf", []string{"Field 'description' must be a non-empty string"}},
		{"name and folder compared NFKC-normalised", skillFS("---\nname: caf\u00e9\ndescription: d\n---\n"), "cafe\u0301", nil},
		{"fullwidth name", skillFS("---\nname: \uff46\uff4f\uff4f\ndescription: d\n---\n"), "foo", nil},
		{
			"messages name the normalised name", skillFS("---\nname: \uff21bc\ndescription: d\n---\n"), "abc",
			[]string{"Skill name 'Abc' must be lowercase", "Directory name 'abc' must match skill name 'Abc'"},
		},
		{
			"length counted after normalisation", skillFS("---\nname: " + strings.Repeat("\ufb03", 22) + "\ndescription: d\n---\n"), "",
			[]string{"Skill name '" + strings.Repeat("ffi", 22) + "' exceeds 64 character limit (66 chars)"},
		},
		{"information separators are white space", skillFS("---\nname: \"pdf\\x1c\"\ndescription: \"\\x1f\"\n---\n"), "pdf", []string{"Field 'description' must be a non-empty string"}},
		{"front matter ends at the first --- anywhere", skillFS("---\ndescription: a --- b\nname: pdf\n---\n"), "pdf", []string{"Missing required field in frontmatter: name"}},
		{"--- inside a value after the name cuts the description", skillFS("---\nname: pdf\ndescription: a --- b\n---\n"), "pdf", nil},
		{"the opening --- may run into the first line", skillFS("---name: pdf\ndescription: d\n---\n"), "pdf", nil},
		{"a four-hyphen line closes", skillFS("---\nname: pdf\ndescription: d\n----\n"), "pdf", nil},
		{"a top-level merge gives no field", skillFS("---\nname: pdf\ndescription: d\n<<:\n  name: other\n  version: 1\n---\n"), "pdf", nil},
		{
			"not even from a sequence of mappings", skillFS("---\n<<:\n  - name: pdf\n  - description: d\n---\n"), "pdf",
			[]string{"Missing required field in frontmatter: name", "Missing required field in frontmatter: description"},
		},
		{"a plain << is no text", skillFS("---\nname: pdf\ndescription: <<\n---\n"), "pdf", []string{"Field 'description' must be a non-empty string"}},
		{"name is trimmed", skillFS("---\nname: '  pdf  '\ndescription: d\n---\n"), "pdf", nil},
		{"numbers are text", skillFS("---\nname: 123\ndescription: 456\ncompatibility: 7\n---\n"), "123", nil},
		{"missing file", fstest.MapFS{"README.md": {}}, "pdf", []string{"Missing required file: SKILL.md"}},
		{"lowercase skill.md", fstest.MapFS{"skill.md": {Data: []byte("---\nname: pdf\ndescription: d\n---\n")}}, "pdf", nil},
		{
			"SKILL.md preferred over skill.md",
			fstest.MapFS{
				"SKILL.md": {Data: []byte("---\nname: pdf\ndescription: d\n---\n")},
				"skill.md": {Data: []byte("nothing")},
			}, "pdf", nil,
		},
		{"no front matter", skillFS("# PDF\n"), "pdf", []string{"SKILL.md must start with YAML frontmatter (---)"}},
		{"not closed", skillFS("---\nname: pdf\ndescription: d\n"), "pdf", []string{"SKILL.md frontmatter not properly closed with ---"}},
		{"not a mapping", skillFS("---\n- a\n---\n"), "pdf", []string{"SKILL.md frontmatter must be a YAML mapping"}},
		{"empty front matter", skillFS("---\n---\n"), "pdf", []string{"SKILL.md frontmatter must be a YAML mapping"}},
		{
			"unquoted colon is invalid in strict mode", skillFS("---\nname: pdf\ndescription: Use when: asked\n---\n"), "pdf",
			[]string{"Invalid YAML in frontmatter: line 3: mapping values are not allowed in this context"},
		},
		{
			"duplicate key", skillFS("---\nname: pdf\ndescription: a\ndescription: b\n---\n"), "pdf",
			[]string{`Invalid YAML in frontmatter: line 4: key "description": the reference validator reads strict YAML, which allows each key once; keep one of the two (the other is at line 3)`},
		},
		{
			"unexpected fields, sorted", skillFS("---\nname: pdf\nversion: 1\ndescription: d\nauthor: me\ndisable-model-invocation: true\n---\n"), "pdf",
			[]string{"Unexpected fields in frontmatter: author, disable-model-invocation, version." + onlyAllowed},
		},
		{"missing name", skillFS("---\ndescription: d\n---\n"), "pdf", []string{"Missing required field in frontmatter: name"}},
		{"empty name", skillFS("---\nname: ''\ndescription: d\n---\n"), "pdf", []string{"Field 'name' must be a non-empty string"}},
		{"null name", skillFS("---\nname:\ndescription: d\n---\n"), "pdf", []string{"Field 'name' must be a non-empty string"}},
		{"blank name", skillFS("---\nname: '   '\ndescription: d\n---\n"), "pdf", []string{"Field 'name' must be a non-empty string"}},
		{"list name", skillFS("---\nname:\n  - pdf\ndescription: d\n---\n"), "pdf", []string{"Field 'name' must be a non-empty string"}},
		{"name of 64 characters", skillFS("---\nname: " + name64 + "\ndescription: d\n---\n"), name64, nil},
		{
			"name of 65 characters", skillFS("---\nname: " + name65 + "\ndescription: d\n---\n"), name65,
			[]string{"Skill name '" + name65 + "' exceeds 64 character limit (65 chars)"},
		},
		{"uppercase name", skillFS("---\nname: PDF\ndescription: d\n---\n"), "PDF", []string{"Skill name 'PDF' must be lowercase"}},
		{"leading hyphen", skillFS("---\nname: -pdf\ndescription: d\n---\n"), "-pdf", []string{"Skill name cannot start or end with a hyphen"}},
		{"trailing hyphen", skillFS("---\nname: pdf-\ndescription: d\n---\n"), "pdf-", []string{"Skill name cannot start or end with a hyphen"}},
		{"consecutive hyphens", skillFS("---\nname: pdf--tools\ndescription: d\n---\n"), "pdf--tools", []string{"Skill name cannot contain consecutive hyphens"}},
		{
			"invalid characters", skillFS("---\nname: pdf_tools\ndescription: d\n---\n"), "pdf_tools",
			[]string{"Skill name 'pdf_tools' contains invalid characters. Only letters, digits, and hyphens are allowed."},
		},
		{"unicode letters allowed", skillFS("---\nname: café-日本語-ß\ndescription: d\n---\n"), "café-日本語-ß", nil},
		{"unicode digits allowed", skillFS("---\nname: v²-٣\ndescription: d\n---\n"), "v²-٣", nil},
		{
			"emoji is not a letter", skillFS("---\nname: pdf-😀\ndescription: d\n---\n"), "pdf-😀",
			[]string{"Skill name 'pdf-😀' contains invalid characters. Only letters, digits, and hyphens are allowed."},
		},
		{"directory mismatch", skillFS("---\nname: pdf\ndescription: d\n---\n"), "pdf-tools", []string{"Directory name 'pdf-tools' must match skill name 'pdf'"}},
		{"missing description", skillFS("---\nname: pdf\n---\n"), "pdf", []string{"Missing required field in frontmatter: description"}},
		{"empty description", skillFS("---\nname: pdf\ndescription: \"\"\n---\n"), "pdf", []string{"Field 'description' must be a non-empty string"}},
		{"mapping description", skillFS("---\nname: pdf\ndescription:\n  a: b\n---\n"), "pdf", []string{"Field 'description' must be a non-empty string"}},
		{"description of 1024 characters", skillFS("---\nname: pdf\ndescription: " + desc1024 + "\n---\n"), "pdf", nil},
		{
			"description of 1025 characters", skillFS("---\nname: pdf\ndescription: " + desc1024 + "x\n---\n"), "pdf",
			[]string{"Description exceeds 1024 character limit (1025 chars)"},
		},
		{
			"block description counts its newline", skillFS("---\nname: pdf\ndescription: |\n  " + desc1024 + "\n---\n"), "pdf",
			[]string{"Description exceeds 1024 character limit (1025 chars)"},
		},
		{"compatibility of 500 characters", skillFS("---\nname: pdf\ndescription: d\ncompatibility: " + compat500 + "\n---\n"), "pdf", nil},
		{
			"compatibility of 501 characters", skillFS("---\nname: pdf\ndescription: d\ncompatibility: " + compat500 + "ü\n---\n"), "pdf",
			[]string{"Compatibility exceeds 500 character limit (501 chars)"},
		},
		{"compatibility list", skillFS("---\nname: pdf\ndescription: d\ncompatibility:\n  - a\n---\n"), "pdf", []string{"Field 'compatibility' must be a string"}},
		{
			"every check, in the reference order", skillFS("---\ncompatibility: " + compat500 + "!\nname: -Bad_Name\nzeta: 1\ndescription: " + desc1024 + "!\nalpha: 2\n---\n"), "bad",
			[]string{
				"Unexpected fields in frontmatter: alpha, zeta." + onlyAllowed,
				"Skill name '-Bad_Name' must be lowercase",
				"Skill name cannot start or end with a hyphen",
				"Skill name '-Bad_Name' contains invalid characters. Only letters, digits, and hyphens are allowed.",
				"Directory name 'bad' must match skill name '-Bad_Name'",
				"Description exceeds 1024 character limit (1025 chars)",
				"Compatibility exceeds 500 character limit (501 chars)",
			},
		},
		{
			"long name reports every rule it breaks", skillFS("---\nname: " + strings.Repeat("A-", 33) + "\ndescription: d\n---\n"), "",
			[]string{
				"Skill name '" + strings.Repeat("A-", 33) + "' exceeds 64 character limit (66 chars)",
				"Skill name '" + strings.Repeat("A-", 33) + "' must be lowercase",
				"Skill name cannot start or end with a hyphen",
			},
		},
		{
			"both required fields missing", skillFS("---\nlicense: MIT\n---\n"), "pdf",
			[]string{"Missing required field in frontmatter: name", "Missing required field in frontmatter: description"},
		},
		{"oversized file", skillFS(string(skillOfSize(DefaultMaxFileSize + 1))), "pdf", []string{"SKILL.md exceeds 1048576 byte limit (1048577 bytes)"}},
		{"file at the size limit", skillFS(string(skillOfSize(DefaultMaxFileSize))), "pdf", nil},
		{"invalid UTF-8", skillFS("---\nname: pdf\ndescription: \xff\n---\n"), "pdf", []string{"SKILL.md is not valid UTF-8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Validate(c.fsys, c.dir)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateInvalidYAMLPrefix(t *testing.T) {
	for _, src := range []string{
		"---\nname: pdf\ndescription: [x\n---\n",
		"---\nname: pdf\n\tdescription: d\n---\n",
		"---\nname: \"pdf\n---\n",
		"---\nname: pdf\n[a]: b\ndescription: d\n---\n",
	} {
		got := Validate(skillFS(src), "pdf")
		if len(got) != 1 || !strings.HasPrefix(got[0], "Invalid YAML in frontmatter: line ") {
			t.Errorf("Validate(%q) = %q, want one \"Invalid YAML in frontmatter: line N: ...\" message", src, got)
		}
	}
}
