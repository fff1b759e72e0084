package registry_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing/fstest"

	"github.com/skillkit/skillkit/registry"
	"github.com/skillkit/skillkit/skill"
	"github.com/skillkit/skillkit/source"
)

// A registry merges sources by rank: the project's pdf skill shadows the
// bundled one, and a per-request filter hides a skill from every view.
func Example() {
	skillFile := func(name, desc string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + desc + "\n---\nInstructions for " + name + ".\n")}
	}
	project := source.FS(fstest.MapFS{"pdf/SKILL.md": skillFile("pdf", "Project PDF rules.")}, "project", 0)
	bundled := source.FS(fstest.MapFS{
		"pdf/SKILL.md":    skillFile("pdf", "Generic PDF tools."),
		"deploy/SKILL.md": skillFile("deploy", "Deploy to production."),
	}, "bundled", 1)

	ctx := context.Background()
	reg, err := registry.New(ctx, []source.Source{bundled, project}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	snap := reg.Snapshot()
	for _, s := range snap.Summaries() {
		fmt.Printf("%s (%s): %s\n", s.Name, s.Source, s.Description)
	}
	for _, sh := range snap.Shadowed() {
		fmt.Printf("shadowed: %s from %s by %s\n", sh.Skill.Name, sh.Skill.Source, sh.By.Source)
	}
	body, _ := snap.Body(ctx, "pdf")
	fmt.Println(body)

	noDeploy := func(_ context.Context, s skill.Summary) bool { return s.Name != "deploy" }
	view := snap.View(ctx, noDeploy)
	_, err = view.Body(ctx, "deploy")
	fmt.Println(view.Len(), err)
	// Output:
	// deploy (bundled): Deploy to production.
	// pdf (project): Project PDF rules.
	// shadowed: pdf from bundled by project
	// Instructions for pdf.
	// 1 skill "deploy": not found
}

// A skill's files as an fs.FS confined to its manifest, with the SHA-256
// of each file computed once per snapshot, and the one rule that turns a
// model's document names into the skill's documents.
func ExampleSnapshot_Files() {
	fsys := fstest.MapFS{
		"pdf/SKILL.md":            {Data: []byte("---\nname: pdf\ndescription: PDF tools.\n---\nUse the forms reference.\n")},
		"pdf/references/forms.md": {Data: []byte("# Forms\n")},
	}
	ctx := context.Background()
	reg, err := registry.New(ctx, []source.Source{source.FS(fsys, "bundled", 0)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	snap := reg.Snapshot()

	files, _ := snap.Files(ctx, "pdf")
	forms, _ := fs.ReadFile(files, "references/forms.md")
	fmt.Printf("%q\n", forms)
	_, err = fs.ReadFile(files, "../other/SKILL.md")
	fmt.Println(errors.Is(err, fs.ErrNotExist))

	m, _ := snap.Digests(ctx, "pdf")
	for _, f := range m.Files {
		fmt.Println(f.Path, f.Size, f.SHA256[:12])
	}

	docs, _ := snap.ResolveDocs(ctx, "pdf", []string{"./references/forms.md", "references//forms.md"})
	fmt.Println(docs)
	_, err = snap.ResolveDocs(ctx, "pdf", []string{"references/api.md"})
	fmt.Println(err)
	// Output:
	// "# Forms\n"
	// true
	// SKILL.md 67 69871f1feda5
	// references/forms.md 8 111198a69a32
	// [references/forms.md]
	// unknown documents for skill "pdf": "references/api.md"; valid documents: references/forms.md
}
