package skill

import (
	"strings"
	"testing"
)

// typicalSkill is a SKILL.md of about 2 KB shaped like published skills: a
// handful of front-matter fields (one a folded block) and a Markdown body.
var typicalSkill = []byte("---\n" +
	"name: pdf-processing\n" +
	"description: >\n" +
	"  Extract text and tables from PDF files, fill PDF forms, and merge or\n" +
	"  split documents. Use when the user mentions PDFs, forms or document\n" +
	"  extraction.\n" +
	"license: Apache-2.0\n" +
	"compatibility: Requires python3 with pypdf and pdfplumber installed\n" +
	"allowed-tools: Bash(python3:*) Read Write\n" +
	"metadata:\n" +
	"  author: example-org\n" +
	"  version: \"1.4\"\n" +
	"---\n" +
	"# PDF processing\n\n" +
	"## Quick start\n\n" +
	"Use `scripts/extract.py` to pull text out of a document:\n\n" +
	"```bash\npython3 scripts/extract.py input.pdf > out.txt\n```\n\n" +
	strings.Repeat("- Step: read the reference in references/forms.md before filling a form; keep field names as they are.\n", 14))

// BenchmarkParse measures Parse on a typical ≈2 KB SKILL.md.
func BenchmarkParse(b *testing.B) {
	if n := len(typicalSkill); n < 1800 || n > 2300 {
		b.Fatalf("typical SKILL.md is %d bytes, want about 2 KB", n)
	}
	b.SetBytes(int64(len(typicalSkill)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(typicalSkill, ParseOptions{DirName: "pdf-processing"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseSimpleHeader(b *testing.B) {
	data := []byte("---\nname: skill-00042\ndescription: Generated skill number 42 used to measure discovery on ten thousand skills.\nlicense: MIT\n---\n\n# Body\n\nSome body text.\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(data, ParseOptions{File: "x/SKILL.md", DirName: "skill-00042"}); err != nil {
			b.Fatal(err)
		}
	}
}
