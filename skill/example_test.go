package skill_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/skillkit/skillkit/skill"
)

func ExampleParse() {
	src := "---\n" +
		"name: pdf\n" +
		"description: Extract text from PDF files. Use when: the user attaches a PDF\n" +
		"user-invocable: no\n" +
		"metadata:\n" +
		"  version: 1.2\n" +
		"---\n" +
		"# PDF\n"
	doc, diags, err := skill.Parse([]byte(src), skill.ParseOptions{File: "skills/pdf/SKILL.md", DirName: "pdf"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(doc.Name, "|", doc.Description)
	fmt.Println("user-invocable:", doc.UserInvocable, "version:", doc.Metadata["version"])
	fmt.Printf("body at line %d: %q\n", doc.BodyLine, doc.Body)
	for _, d := range diags {
		fmt.Println(d)
	}
	// Output:
	// pdf | Extract text from PDF files. Use when: the user attaches a PDF
	// user-invocable: false version: 1.2
	// body at line 8: "# PDF\n"
	// skills/pdf/SKILL.md:3: warning: value contains ": " and is not quoted; read it as a string (quote it to silence this warning)
}

func ExampleValidate() {
	fsys := fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: PDF_Tools\ndescription: Read PDFs.\nversion: 2\n---\n")}}
	msgs := skill.Validate(fsys, "pdf-tools")
	if msgs == nil {
		fmt.Println("Valid skill: pdf-tools")
		return
	}
	fmt.Println("Validation failed for pdf-tools:")
	for _, m := range msgs {
		fmt.Println("  -", m)
	}
	// Output:
	// Validation failed for pdf-tools:
	//   - Unexpected fields in frontmatter: version. Only ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] are allowed.
	//   - Skill name 'PDF_Tools' must be lowercase
	//   - Skill name 'PDF_Tools' contains invalid characters. Only letters, digits, and hyphens are allowed.
	//   - Directory name 'pdf-tools' must match skill name 'PDF_Tools'
}

func ExampleReadManifest() {
	fsys := fstest.MapFS{
		"pdf/SKILL.md":               {Data: []byte("---\nname: pdf\ndescription: Read PDFs.\n---\n")},
		"pdf/references/forms.md":    {Data: []byte("# Forms\n")},
		"pdf/scripts/extract.py":     {Data: []byte("print('hi')\n")},
		"pdf/scripts/__pycache__/x":  {Data: []byte("cache")},
		"pdf/examples/demo/SKILL.md": {Data: []byte("a nested skill of its own")},
	}
	m, diags, err := skill.ReadManifest(context.Background(), fsys, "pdf", skill.ManifestOptions{Hash: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range m.Files {
		fmt.Printf("%-22s %3d sha256:%.12s… doc=%v\n", f.Path, f.Size, f.SHA256, f.Doc)
	}
	fmt.Println(len(m.Files), "files,", m.Bytes, "bytes; docs:", m.Docs())
	for _, d := range diags {
		fmt.Println(d.Severity, d.File)
	}
	// Output:
	// SKILL.md                42 sha256:f65784e88d12… doc=false
	// references/forms.md      8 sha256:111198a69a32… doc=true
	// scripts/extract.py      12 sha256:caf026f25d71… doc=false
	// 3 files, 62 bytes; docs: [references/forms.md]
	// warning pdf/examples/demo
}
