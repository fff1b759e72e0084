package skill

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantDiag is one expected diagnostic: its line and a piece of its message.
type wantDiag struct {
	Line int
	Has  string
}

type parseCase struct {
	name string
	src  string
	dir  string // ParseOptions.DirName

	// On success:
	wantName string
	wantDesc string
	wantBody *string // nil: not checked
	bodyLine int     // 0: not checked
	warns    []wantDiag
	check    func(t *testing.T, d *Document)

	// On failure (errHas non-empty):
	errHas  string
	errLine int
}

func str(s string) *string { return &s }

const testFile = "skills/pdf/SKILL.md"

// runParseCase parses c.src and checks the outcome, plus the invariants every
// diagnostic must satisfy: it names the file and, where it has a line, that
// line is inside the file.
func runParseCase(t *testing.T, c parseCase) {
	t.Helper()
	doc, diags, err := Parse([]byte(c.src), ParseOptions{File: testFile, DirName: c.dir})
	lines := strings.Count(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(c.src), "\n") + 1
	for _, d := range diags {
		if d.File != testFile {
			t.Errorf("diagnostic %q names file %q, want %q", d, d.File, testFile)
		}
		if d.Line < 1 || d.Line > lines {
			t.Errorf("diagnostic %q has line %d, outside 1..%d", d, d.Line, lines)
		}
	}
	if c.errHas != "" {
		if err == nil {
			t.Fatalf("Parse succeeded (name %q), want error containing %q", doc.Name, c.errHas)
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("error %v does not wrap ErrInvalid", err)
		}
		var le *LoadError
		if !errors.As(err, &le) {
			t.Fatalf("error %T is not a *LoadError", err)
		}
		if le.File != testFile {
			t.Errorf("LoadError.File = %q, want %q", le.File, testFile)
		}
		if !strings.Contains(le.Message, c.errHas) {
			t.Errorf("error message %q does not contain %q", le.Message, c.errHas)
		}
		if le.Line != c.errLine {
			t.Errorf("error line = %d, want %d (%v)", le.Line, c.errLine, err)
		}
		if doc != nil {
			t.Errorf("Parse returned a document along with an error")
		}
		return
	}
	if err != nil {
		t.Fatalf("Parse: %v (diagnostics %v)", err, diags)
	}
	if doc.Name != c.wantName {
		t.Errorf("Name = %q, want %q", doc.Name, c.wantName)
	}
	if c.wantDesc != "" && doc.Description != c.wantDesc {
		t.Errorf("Description = %q, want %q", doc.Description, c.wantDesc)
	}
	if c.wantBody != nil && doc.Body != *c.wantBody {
		t.Errorf("Body = %q, want %q", doc.Body, *c.wantBody)
	}
	if c.bodyLine != 0 && doc.BodyLine != c.bodyLine {
		t.Errorf("BodyLine = %d, want %d", doc.BodyLine, c.bodyLine)
	}
	if len(diags) != len(c.warns) {
		t.Errorf("got %d diagnostics, want %d:\n%s", len(diags), len(c.warns), diagList(diags))
	} else {
		for i, w := range c.warns {
			d := diags[i]
			if d.Severity != Warning || d.Line != w.Line || !strings.Contains(d.Message, w.Has) {
				t.Errorf("diagnostic %d = %q, want a warning on line %d containing %q", i, d, w.Line, w.Has)
			}
		}
	}
	if _, err := json.Marshal(doc.Raw); err != nil {
		t.Errorf("json.Marshal(Raw): %v", err)
	}
	if c.check != nil {
		c.check(t, doc)
	}
}

func diagList(ds []Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("  " + d.String() + "\n")
	}
	return b.String()
}

func parseTextCases() []parseCase {
	return []parseCase{
		{
			name:     "plain",
			src:      "---\nname: pdf\ndescription: Read PDF files.\n---\n# PDF\n\nUse it.\n",
			wantName: "pdf", wantDesc: "Read PDF files.", wantBody: str("# PDF\n\nUse it.\n"), bodyLine: 5,
		},
		{
			name:     "BOM",
			src:      "\xEF\xBB\xBF---\nname: pdf\ndescription: Read PDF files.\n---\nBody\n",
			wantName: "pdf", wantDesc: "Read PDF files.", wantBody: str("Body\n"), bodyLine: 5,
			warns: []wantDiag{{1, "starts with a UTF-8 byte-order mark: discovery reads past it, but skillkit validate and the Agent Skills reference validator reject the file"}},
		},
		{
			name:     "CRLF",
			src:      "---\r\nname: pdf\r\ndescription: Read PDF files.\r\n---\r\nBody\r\nmore\r\n",
			wantName: "pdf", wantDesc: "Read PDF files.", wantBody: str("Body\nmore\n"), bodyLine: 5,
		},
		{
			name:     "BOM and CRLF",
			src:      "\xEF\xBB\xBF---\r\nname: pdf\r\ndescription: |\r\n  one\r\n  two\r\n---\r\nBody\r\n",
			wantName: "pdf", wantDesc: "one\ntwo\n", wantBody: str("Body\n"), bodyLine: 7,
			warns: []wantDiag{{1, "byte-order mark"}},
		},
		{
			name:     "lone CR",
			src:      "---\rname: pdf\rdescription: Read PDF files.\r---\rBody\r",
			wantName: "pdf", wantDesc: "Read PDF files.", wantBody: str("Body\n"), bodyLine: 5,
		},
		{
			name:     "fence with trailing blanks",
			src:      "--- \nname: pdf\ndescription: d\n---\t\nBody",
			wantName: "pdf", wantDesc: "d", wantBody: str("Body"),
		},
		{
			name:     "empty body, no final newline",
			src:      "---\nname: pdf\ndescription: d\n---",
			wantName: "pdf", wantDesc: "d", wantBody: str(""), bodyLine: 5,
		},
		{
			name:     "later fences stay in the body",
			src:      "---\nname: pdf\ndescription: d\n---\nA\n---\nB\n",
			wantName: "pdf", wantBody: str("A\n---\nB\n"),
		},
		{name: "front matter not at the top", src: "\n---\nname: pdf\ndescription: d\n---\n", errHas: "SKILL.md must start with YAML frontmatter (---)", errLine: 1},
		{name: "title before front matter", src: "# PDF\n---\nname: pdf\ndescription: d\n---\n", errHas: "must start with YAML frontmatter", errLine: 1},
		{name: "no front matter", src: "just text", errHas: "must start with YAML frontmatter", errLine: 1},
		{name: "empty file", src: "", errHas: "must start with YAML frontmatter", errLine: 1},
		{name: "fence glued to text", src: "---name: pdf\n---\n", errHas: "must start with YAML frontmatter", errLine: 1},
		{name: "unclosed", src: "---\nname: pdf\ndescription: d\n", errHas: "SKILL.md frontmatter not properly closed with ---", errLine: 1},
		{name: "only an opening fence", src: "---", errHas: "not properly closed", errLine: 1},
		{name: "invalid UTF-8", src: "---\nname: pdf\ndescription: \xff\xfe\n---\n", errHas: "not valid UTF-8", errLine: 0},
		{name: "not a mapping", src: "---\n- a\n- b\n---\n", errHas: "SKILL.md frontmatter must be a YAML mapping", errLine: 2},
		{name: "scalar header", src: "---\n\n\njust words\n---\n", errHas: "must be a YAML mapping", errLine: 4},
		{name: "empty header", src: "---\n---\nBody\n", errHas: "must be a YAML mapping", errLine: 2},
		{name: "invalid YAML", src: "---\nname: pdf\ndescription: [unclosed\n---\n", errHas: "Invalid YAML in frontmatter: line 3: did not find expected", errLine: 3},
		{name: "bad indentation", src: "---\nname: pdf\ndescription: d\n  x: y\n---\n", errHas: "Invalid YAML in frontmatter: line 4", errLine: 4},
	}
}

func TestParseText(t *testing.T) {
	for _, c := range parseTextCases() {
		t.Run(c.name, func(t *testing.T) { runParseCase(t, c) })
	}
}

func parseScalarCases() []parseCase {
	return []parseCase{
		{
			name:     "literal block",
			src:      "---\nname: pdf\ndescription: |\n  Read PDF files.\n  Use when the user\n  attaches one.\n---\n",
			wantName: "pdf", wantDesc: "Read PDF files.\nUse when the user\nattaches one.\n",
		},
		{
			name:     "folded block",
			src:      "---\nname: pdf\ndescription: >\n  Read PDF\n  files.\n\n  Second paragraph.\n---\n",
			wantName: "pdf", wantDesc: "Read PDF files.\nSecond paragraph.\n",
		},
		{
			name:     "folded strip block",
			src:      "---\nname: pdf\ndescription: >-\n  Read PDF\n  files.\nlicense: MIT\n---\n",
			wantName: "pdf", wantDesc: "Read PDF files.",
			check: func(t *testing.T, d *Document) {
				if d.License != "MIT" {
					t.Errorf("License = %q", d.License)
				}
			},
		},
		{
			name:     "double-quoted with escapes",
			src:      "---\nname: pdf\ndescription: \"Say \\\"hi\\\" to\\tthe \\\\ user\\n\"\n---\n",
			wantName: "pdf", wantDesc: "Say \"hi\" to\tthe \\ user\n",
		},
		{
			name:     "single-quoted",
			src:      "---\nname: 'pdf'\ndescription: 'It''s \"fine\"'\n---\n",
			wantName: "pdf", wantDesc: `It's "fine"`,
		},
		{
			name:     "unicode escape",
			src:      "---\nname: pdf\ndescription: \"caf\\u00e9 \\U0001F600\"\n---\n",
			wantName: "pdf", wantDesc: "café 😀",
		},
		{
			name:     "non-ASCII punctuation and emoji",
			src:      "---\nname: pdf\ndescription: Résumé – “smart” quotes… 😀🚀\n---\nBody 𝄞 😀\n",
			wantName: "pdf", wantDesc: "Résumé – “smart” quotes… 😀🚀", wantBody: str("Body 𝄞 😀\n"),
		},
		{
			name:     "multi-line plain scalar",
			src:      "---\nname: pdf\ndescription: Read PDF\n  files and\n  forms.\n---\n",
			wantName: "pdf", wantDesc: "Read PDF files and forms.",
		},
		{
			name:     "number as description",
			src:      "---\nname: pdf\ndescription: 2024\n---\n",
			wantName: "pdf", wantDesc: "2024",
		},
		{
			name:     "numeric name",
			src:      "---\nname: 123\ndescription: d\n---\n",
			wantName: "123",
		},
		{
			name:     "comments ignored",
			src:      "---\n# header\nname: pdf # trailing\ndescription: d\n---\n",
			wantName: "pdf", wantDesc: "d",
		},
		{
			name:     "key: a: b retried as a string",
			src:      "---\nname: pdf\ndescription: Use when: the user asks\n---\n",
			wantName: "pdf", wantDesc: "Use when: the user asks",
			warns: []wantDiag{{3, `contains ": " and is not quoted`}},
		},
		{
			name:     "two retried lines keep their line numbers (CRLF, BOM)",
			src:      "\xEF\xBB\xBF---\r\nname: pdf\r\n\r\ndescription: Reads: PDFs: all\r\nlicense: Apache: 2.0\r\n---\r\n",
			wantName: "pdf", wantDesc: "Reads: PDFs: all",
			warns: []wantDiag{{1, "byte-order mark"}, {4, "not quoted"}, {5, "not quoted"}},
			check: func(t *testing.T, d *Document) {
				if d.License != "Apache: 2.0" {
					t.Errorf("License = %q", d.License)
				}
			},
		},
		{
			name:     "nested key: a: b retried as a string",
			src:      "---\nname: pdf\ndescription: d\nmetadata:\n  note: a: b\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{5, "not quoted"}},
			check: func(t *testing.T, d *Document) {
				if d.Metadata["note"] != "a: b" {
					t.Errorf("metadata note = %q, want %q", d.Metadata["note"], "a: b")
				}
			},
		},
		{
			name:     "retried value with quotes and backslashes",
			src:      "---\nname: pdf\ndescription: Say: \"hi\" \\ 😀\n---\n",
			wantName: "pdf", wantDesc: `Say: "hi" \ 😀`,
			warns: []wantDiag{{3, "not quoted"}},
		},
		{
			name:   "retry does not hide other errors",
			src:    "---\nname: pdf\ndescription: a: b\nlicense: [x\n---\n",
			errHas: "Invalid YAML in frontmatter: line 4", errLine: 4,
		},
		{
			name:   "tabs are invalid YAML",
			src:    "---\nname: pdf\n\tdescription: d\n---\n",
			errHas: "Invalid YAML in frontmatter", errLine: 3,
		},
	}
}

func TestParseScalars(t *testing.T) {
	for _, c := range parseScalarCases() {
		t.Run(c.name, func(t *testing.T) { runParseCase(t, c) })
	}
}

func TestParseBooleans(t *testing.T) {
	forms := []struct {
		in   string
		want bool
	}{
		{"true", true}, {"false", false}, {"True", true}, {"FALSE", false},
		{"yes", true}, {"no", false}, {"Yes", true}, {"NO", false},
		{"on", true}, {"off", false}, {"ON", true}, {"Off", false},
		{"1", true}, {"0", false},
		{`"yes"`, true}, {`'off'`, false}, {`"1"`, true},
	}
	for _, field := range []string{FieldDisableModelInvocation, FieldUserInvocable} {
		for _, f := range forms {
			t.Run(field+"="+f.in, func(t *testing.T) {
				runParseCase(t, parseCase{
					src:      "---\nname: pdf\ndescription: d\n" + field + ": " + f.in + "\n---\n",
					wantName: "pdf",
					check: func(t *testing.T, d *Document) {
						got := d.UserInvocable
						if field == FieldDisableModelInvocation {
							got = d.DisableModelInvocation
							if d.ModelInvocable() == f.want {
								t.Errorf("ModelInvocable() = %v with %s: %s", d.ModelInvocable(), field, f.in)
							}
						}
						if got != f.want {
							t.Errorf("%s: %s read as %v, want %v", field, f.in, got, f.want)
						}
					},
				})
			})
		}
		for _, bad := range []string{"maybe", "2", "y", "n", "[true]", "{a: b}", `""`, "-1"} {
			warns := []wantDiag{{4, "must be true or false"}}
			if strings.ContainsAny(bad, "[{") {
				warns = append([]wantDiag{{4, "flow "}}, warns...)
			}
			t.Run(field+"="+bad, func(t *testing.T) {
				runParseCase(t, parseCase{
					src:      "---\nname: pdf\ndescription: d\n" + field + ": " + bad + "\n---\n",
					wantName: "pdf",
					warns:    warns,
					check: func(t *testing.T, d *Document) {
						if d.DisableModelInvocation || !d.UserInvocable {
							t.Errorf("defaults changed by an invalid value: disable=%v user=%v", d.DisableModelInvocation, d.UserInvocable)
						}
					},
				})
			})
		}
	}
	t.Run("defaults", func(t *testing.T) {
		runParseCase(t, parseCase{
			src: "---\nname: pdf\ndescription: d\n---\n", wantName: "pdf",
			check: func(t *testing.T, d *Document) {
				if d.DisableModelInvocation || !d.UserInvocable || !d.ModelInvocable() {
					t.Errorf("defaults: disable=%v user=%v", d.DisableModelInvocation, d.UserInvocable)
				}
			},
		})
	})
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{
		"true": true, "TRUE": true, "yes": true, "On": true, "1": true, " true ": true,
		"false": false, "False": false, "no": false, "OFF": false, "0": false,
	} {
		got, ok := ParseBool(in)
		if !ok || got != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v, true", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "y", "n", "2", "t", "truee", "nope"} {
		if _, ok := ParseBool(in); ok {
			t.Errorf("ParseBool(%q) accepted", in)
		}
	}
}

func parseFieldCases() []parseCase {
	longDesc := strings.Repeat("é", MaxDescriptionLength)
	return []parseCase{
		{
			name: "unknown fields kept in Raw",
			src: "---\nname: pdf\ndescription: d\nversion: 2\nauthor:\n  name: Ann\n  tags: [a, b]\n" +
				"when: 2024-01-02\nratio: .inf\nnothing: ~\n---\n",
			wantName: "pdf",
			warns: []wantDiag{
				{4, `unknown front-matter field "version"`},
				{5, `unknown front-matter field "author"`},
				{7, `flow sequence [a, b]: read anyway, but skillkit validate and the Agent Skills reference validator reject it (their strict YAML has no flow style); write it in block style, one item per indented line: "tags:" followed by "  - a", "  - b"`},
				{8, `"when"`}, {9, `"ratio"`}, {10, `"nothing"`},
			},
			check: func(t *testing.T, d *Document) {
				want := map[string]any{
					"name": "pdf", "description": "d", "version": 2,
					"author": map[string]any{"name": "Ann", "tags": []any{"a", "b"}},
					"when":   "2024-01-02", "ratio": ".inf", "nothing": nil,
				}
				if diff := cmp.Diff(want, d.Raw); diff != "" {
					t.Errorf("Raw (-want +got):\n%s", diff)
				}
				wantKeys := []string{"name", "description", "version", "author", "when", "ratio", "nothing"}
				if diff := cmp.Diff(wantKeys, d.Keys); diff != "" {
					t.Errorf("Keys (-want +got):\n%s", diff)
				}
				js, err := json.Marshal(d.Raw)
				if err != nil {
					t.Fatal(err)
				}
				const wantJSON = `{"author":{"name":"Ann","tags":["a","b"]},"description":"d","name":"pdf","nothing":null,"ratio":".inf","version":2,"when":"2024-01-02"}`
				if string(js) != wantJSON {
					t.Errorf("JSON = %s\nwant   %s", js, wantJSON)
				}
			},
		},
		{
			name:     "nan, binary and non-string keys stay encodable",
			src:      "---\nname: pdf\ndescription: d\nx: .NaN\ny: !!binary aGk=\nz:\n  1: one\n  [a]: b\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{4, `"x"`}, {5, "tag !!binary: read anyway"}, {5, `"y"`}, {6, `"z"`}, {8, "flow sequence [a]"}},
			check: func(t *testing.T, d *Document) {
				if d.Raw["x"] != ".NaN" || d.Raw["y"] != "aGk=" {
					t.Errorf("Raw x=%#v y=%#v; want the source text", d.Raw["x"], d.Raw["y"])
				}
			},
		},
		{
			name:     "recursive alias does not hang",
			src:      "---\nname: pdf\ndescription: d\nloop: &a [*a]\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{4, "anchor &a: read anyway"}, {4, "alias *a refers to a value that contains it"}, {4, `"loop"`}},
			check: func(t *testing.T, d *Document) {
				if _, ok := d.Raw["loop"]; ok {
					t.Errorf("Raw keeps the recursive field: %#v", d.Raw["loop"])
				}
			},
		},
		{
			name:     "aliases to scalars and maps",
			src:      "---\nname: &n pdf\ndescription: *n\nmetadata: &m\n  a: b\nextra: *m\n---\n",
			wantName: "pdf", wantDesc: "pdf",
			warns: []wantDiag{
				{2, "anchor &n: read anyway, but skillkit validate and the Agent Skills reference validator reject it (their strict YAML has no anchors or aliases); write the value out in full wherever it is used"},
				{3, "alias *n: read anyway"}, {4, "anchor &m"}, {6, "alias *m: read anyway"}, {6, `"extra"`},
			},
			check: func(t *testing.T, d *Document) {
				if diff := cmp.Diff(map[string]any{"a": "b"}, d.Raw["extra"]); diff != "" {
					t.Errorf("Raw[extra]: %s", diff)
				}
			},
		},
		{
			name:     "metadata as strings",
			src:      "---\nname: pdf\ndescription: d\nmetadata:\n  version: 1.0\n  count: 3\n  beta: true\n  author: \"Ann\"\n  empty:\n---\n",
			wantName: "pdf",
			check: func(t *testing.T, d *Document) {
				want := map[string]string{"version": "1.0", "count": "3", "beta": "true", "author": "Ann", "empty": ""}
				if diff := cmp.Diff(want, d.Metadata); diff != "" {
					t.Errorf("Metadata (-want +got):\n%s", diff)
				}
				if d.Raw["metadata"].(map[string]any)["version"] != 1.0 {
					t.Errorf("Raw metadata.version = %#v, want the float 1.0", d.Raw["metadata"])
				}
			},
		},
		{
			name:     "metadata entries that are not strings",
			src:      "---\nname: pdf\ndescription: d\nmetadata:\n  ok: yes\n  list:\n    - a\n  map: {a: b}\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{6, `metadata entry "list"`}, {8, `flow mapping {a: b}: read anyway, but skillkit validate and the Agent Skills reference validator reject it (their strict YAML has no flow style); write it in block style, one entry per indented line: "map:" followed by "  a: b"`}, {8, `metadata entry "map"`}},
			check: func(t *testing.T, d *Document) {
				if diff := cmp.Diff(map[string]string{"ok": "yes"}, d.Metadata); diff != "" {
					t.Errorf("Metadata: %s", diff)
				}
			},
		},
		{
			name:     "metadata not a mapping",
			src:      "---\nname: pdf\ndescription: d\nmetadata: v1\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{4, "metadata must be a mapping"}},
		},
		{
			name:     "allowed-tools string",
			src:      "---\nname: pdf\ndescription: d\nallowed-tools: Read  Bash(git:*)\tWrite\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{4, "tab character: read anyway, but skillkit validate and the Agent Skills reference validator reject it (their strict YAML allows tabs only inside quoted values, block scalars (| or >) and comments); use spaces, or quote the value"}},
			check: func(t *testing.T, d *Document) {
				if diff := cmp.Diff([]string{"Read", "Bash(git:*)", "Write"}, d.AllowedTools); diff != "" {
					t.Errorf("AllowedTools: %s", diff)
				}
			},
		},
		{
			name:     "allowed-tools list",
			src:      "---\nname: pdf\ndescription: d\nallowed-tools:\n  - Read\n  - Bash(git:*)\n  - [x]\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{7, `flow sequence [x]: read anyway, but skillkit validate and the Agent Skills reference validator reject it (their strict YAML has no flow style); write allowed-tools as the space-separated string the Agent Skills spec defines: "allowed-tools: x"`}, {7, "allowed-tools entry is not a string"}},
			check: func(t *testing.T, d *Document) {
				if diff := cmp.Diff([]string{"Read", "Bash(git:*)"}, d.AllowedTools); diff != "" {
					t.Errorf("AllowedTools: %s", diff)
				}
			},
		},
		{
			name:     "allowed-tools mapping",
			src:      "---\nname: pdf\ndescription: d\nallowed-tools: {a: b}\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{4, "flow mapping {a: b}"}, {4, "allowed-tools must be"}},
		},
		{
			name:     "license and compatibility",
			src:      "---\nname: pdf\ndescription: d\nlicense: Apache-2.0\ncompatibility: Needs python3 and network access\n---\n",
			wantName: "pdf",
			check: func(t *testing.T, d *Document) {
				if d.License != "Apache-2.0" || d.Compatibility != "Needs python3 and network access" {
					t.Errorf("License %q Compatibility %q", d.License, d.Compatibility)
				}
			},
		},
		{
			name:     "over-long compatibility",
			src:      "---\nname: pdf\ndescription: d\ncompatibility: " + strings.Repeat("😀", MaxCompatibilityLength+1) + "\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{4, "compatibility is 501 characters, over the 500-character limit"}},
		},
		{
			name:     "description at the limit",
			src:      "---\nname: pdf\ndescription: " + longDesc + "\n---\n",
			wantName: "pdf", wantDesc: longDesc,
		},
		{
			name:     "over-long description loads with a warning",
			src:      "---\nname: pdf\n\ndescription: " + longDesc + "é\n---\n",
			wantName: "pdf", wantDesc: longDesc + "é",
			warns: []wantDiag{{4, "description is 1025 characters, over the 1024-character limit"}},
		},
		{
			name:   "non-string description",
			src:    "---\nname: pdf\ndescription:\n  a: b\n---\n",
			errHas: "missing or empty description", errLine: 4,
		},
		{
			name:   "missing description",
			src:    "---\nname: pdf\n---\n",
			errHas: "missing or empty description", errLine: 2,
		},
		{
			name:   "empty description",
			src:    "---\nname: pdf\ndescription: \"  \"\n---\n",
			errHas: "missing or empty description", errLine: 3,
		},
		{
			name:     "duplicate keys: last wins",
			src:      "---\nname: pdf\ndescription: first\ndescription: second\n---\n",
			wantName: "pdf", wantDesc: "second",
			warns: []wantDiag{{4, `field "description" appears more than once`}},
			check: func(t *testing.T, d *Document) {
				if diff := cmp.Diff([]string{"name", "description"}, d.Keys); diff != "" {
					t.Errorf("Keys: %s", diff)
				}
			},
		},
		{
			name:     "non-string key",
			src:      "---\nname: pdf\ndescription: d\n[a, b]: c\n---\n",
			wantName: "pdf",
			warns:    []wantDiag{{4, "flow sequence [a, b]"}, {4, "not a plain string"}},
		},
	}
}

func TestParseFields(t *testing.T) {
	for _, c := range parseFieldCases() {
		t.Run(c.name, func(t *testing.T) { runParseCase(t, c) })
	}
}

func parseNameCases() []parseCase {
	return []parseCase{
		{name: "matches directory", src: "---\nname: pdf\ndescription: d\n---\n", dir: "pdf", wantName: "pdf"},
		{
			name: "differs from directory", src: "---\nname: pdf\ndescription: d\n---\n", dir: "pdf-tools",
			wantName: "pdf", warns: []wantDiag{{2, `name "pdf" does not match the directory name "pdf-tools"`}},
		},
		{
			name: "missing name falls back to the directory", src: "---\ndescription: d\n---\n", dir: "pdf",
			wantName: "pdf", warns: []wantDiag{{2, `missing name; using the directory name "pdf"`}},
		},
		{
			name: "empty name falls back to the directory", src: "---\ndescription: d\nname:\n---\n", dir: "pdf",
			wantName: "pdf", warns: []wantDiag{{3, "missing name"}},
		},
		{
			name: "non-string name falls back to the directory", src: "---\ndescription: d\nname: [a]\n---\n", dir: "pdf",
			wantName: "pdf", warns: []wantDiag{{3, "flow sequence [a]"}, {3, `field "name" must be a string`}, {3, "missing name"}},
		},
		{
			name: "surrounding spaces trimmed", src: "---\nname: \" pdf \"\ndescription: d\n---\n", dir: "pdf",
			wantName: "pdf", warns: []wantDiag{{2, "trimmed"}},
		},
		{name: "missing name, no directory", src: "---\ndescription: d\n---\n", errHas: "missing name", errLine: 2},
		{name: "missing name, unusable directory", src: "---\ndescription: d\n---\n", dir: "My Skill", errHas: "missing name", errLine: 2},
		{name: "uppercase", src: "---\nname: PDF\ndescription: d\n---\n", errHas: `name "PDF" is not a valid skill name`, errLine: 2},
		{name: "leading hyphen", src: "---\ndescription: d\nname: -pdf\n---\n", errHas: "not a valid skill name", errLine: 3},
		{name: "double hyphen", src: "---\nname: a--b\ndescription: d\n---\n", errHas: "not a valid skill name", errLine: 2},
		{name: "underscore", src: "---\nname: a_b\ndescription: d\n---\n", errHas: "not a valid skill name", errLine: 2},
		{
			name: "lowercase letters of other scripts: the skill tool's ASCII rule", src: "---\nname: café\ndescription: d\n---\n",
			errHas:  `name "café" is valid in the Agent Skills spec, which allows lowercase letters of any script, but the skill tool accepts only ASCII names (^[a-z0-9]+(?:-[a-z0-9]+)*$: a-z, 0-9 and single hyphens), so the skill is skipped; rename the skill and its folder ("cafe", say)`,
			errLine: 2,
		},
		{name: "ASCII rule, no suggestion", src: "---\nname: 日本語\ndescription: d\n---\n", errHas: "accepts only ASCII names (^[a-z0-9]+(?:-[a-z0-9]+)*$: a-z, 0-9 and single hyphens), so the skill is skipped; rename the skill and its folder", errLine: 2},
		{name: "not lowercase, not the ASCII rule", src: "---\nname: Ärger\ndescription: d\n---\n", errHas: `name "Ärger" is not a valid skill name`, errLine: 2},
		{
			name: "fullwidth letters are read NFKC-normalised", src: "---\nname: ｆｏｏ\ndescription: d\n---\n", dir: "foo",
			wantName: "foo", warns: []wantDiag{{2, `name "ｆｏｏ" is read as its NFKC normalisation "foo", as the Agent Skills reference validator reads names; write it so`}},
		},
		{name: "ligature name in a ligature folder", src: "---\nname: ﬁx\ndescription: d\n---\n", dir: "ﬁx", wantName: "fix", warns: []wantDiag{{2, `read as its NFKC normalisation "fix"`}}},
		{name: "decomposed letters are shown as code points", src: "---\nname: cafe\u0301\ndescription: d\n---\n", errHas: "ASCII", errLine: 2},
		{name: "NFD folder matches an NFC name", src: "---\nname: pdf-cafe\ndescription: d\n---\n", dir: "pdf-cafe", wantName: "pdf-cafe"},
		{name: "null is a name like any other", src: "---\nname: null\ndescription: d\n---\n", dir: "null", wantName: "null"},
		{name: "tilde is no valid name", src: "---\nname: ~\ndescription: d\n---\n", dir: "pdf", errHas: `name "~" is not a valid skill name`, errLine: 2},
		{name: "information separators are trimmed", src: "---\nname: \"pdf\\x1c\"\ndescription: d\n---\n", dir: "pdf", wantName: "pdf", warns: []wantDiag{{2, "trimmed"}}},
		{name: "too long loads with a warning", src: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", wantName: strings.Repeat("a", 65), warns: []wantDiag{{2, "65 characters, over the 64-character limit"}}},
		{name: "64 characters", src: "---\nname: " + strings.Repeat("a", 64) + "\ndescription: d\n---\n", wantName: strings.Repeat("a", 64)},
	}
}

func TestParseName(t *testing.T) {
	for _, c := range parseNameCases() {
		t.Run(c.name, func(t *testing.T) { runParseCase(t, c) })
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"pdf": true, "a": true, "pdf-tools": true, "a1-2b": true, "0": true,
		strings.Repeat("x", 64): true, strings.Repeat("x", 65): true,
		"": false, "-a": false, "a-": false, "a--b": false, "A": false, "a_b": false,
		"a b": false, "café": false, "a/b": false, "a.b": false,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

// skillOfSize returns a valid SKILL.md of exactly n bytes.
func skillOfSize(n int) []byte {
	head := "---\nname: pdf\ndescription: d\n---\n"
	return []byte(head + strings.Repeat("x", n-len(head)))
}

func TestParseSizeLimit(t *testing.T) {
	if _, _, err := Parse(skillOfSize(DefaultMaxFileSize), ParseOptions{}); err != nil {
		t.Fatalf("exactly %d bytes rejected: %v", DefaultMaxFileSize, err)
	}
	_, _, err := Parse(skillOfSize(DefaultMaxFileSize+1), ParseOptions{File: testFile})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("one byte over the limit: err = %v, want ErrLimit", err)
	}
	if !strings.Contains(err.Error(), testFile) || !strings.Contains(err.Error(), "1048577 bytes") {
		t.Errorf("limit error %q does not name the file and size", err)
	}

	if _, _, err := Parse(skillOfSize(100), ParseOptions{MaxSize: 100}); err != nil {
		t.Errorf("custom limit: exactly 100 bytes rejected: %v", err)
	}
	if _, _, err := Parse(skillOfSize(101), ParseOptions{MaxSize: 100}); !errors.Is(err, ErrLimit) {
		t.Errorf("custom limit: 101 bytes: err = %v, want ErrLimit", err)
	}
	_, _, err = Parse(skillOfSize(100), ParseOptions{MaxSize: -1})
	if err == nil || errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "MaxSize") {
		t.Errorf("negative MaxSize: err = %v, want an option error naming MaxSize", err)
	}
}

func TestParseDefaultFile(t *testing.T) {
	_, _, err := Parse([]byte("nothing"), ParseOptions{})
	var le *LoadError
	if !errors.As(err, &le) || le.File != FileName {
		t.Fatalf("err = %v, want a LoadError naming %s", err, FileName)
	}
	if got, want := err.Error(), "SKILL.md:1: error: SKILL.md must start with YAML frontmatter (---)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if d := le.Diagnostic(); d.Severity != Error || d.Line != 1 {
		t.Errorf("Diagnostic() = %+v", d)
	}
}

func TestDiagnosticString(t *testing.T) {
	for _, c := range []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{File: "a/SKILL.md", Line: 3, Message: "m"}, "a/SKILL.md:3: warning: m"},
		{Diagnostic{File: "a/x", Severity: Error, Message: "m"}, "a/x: error: m"},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}
