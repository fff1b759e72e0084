package source_test

import (
	"context"
	"fmt"
	"io/fs"
	"testing/fstest"

	"github.com/skillkit/skillkit/source"
)

// Discover finds the skills of a source — here an in-memory file system;
// source.Dir makes one for a host folder.
func ExampleDiscover() {
	fsys := fstest.MapFS{
		"pdf/SKILL.md":            {Data: []byte("---\nname: pdf\ndescription: Fill and merge PDF forms.\n---\nUse pdftk.\n")},
		"team/review/SKILL.md":    {Data: []byte("---\nname: review\ndescription: Review a pull request.\nowner: me\n---\nRead the diff.\n")},
		"broken/SKILL.md":         {Data: []byte("---\nname: broken\n---\nNo description.\n")},
		"node_modules/x/SKILL.md": {Data: []byte("---\nname: x\ndescription: never found\n---\n")},
	}
	res, err := source.Discover(context.Background(), source.FS(fsys, "bundled", 0), source.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range res.Skills {
		fmt.Printf("%s: %s\n", f.Front.Name, f.Front.Description)
	}
	for _, d := range res.Diagnostics {
		fmt.Println(d)
	}
	// Output:
	// pdf: Fill and merge PDF forms.
	// review: Review a pull request.
	// bundled/broken/SKILL.md:2: error: missing or empty description; add a description saying what the skill does and when to use it
	// bundled/team/review/SKILL.md:4: warning: unknown front-matter field "owner" (kept, but not interpreted); the spec allows ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name']
}

// SkillFS gives the folder of one skill that was found; for a host folder
// (source.Dir) it opens nothing through a symbolic link.
func ExampleSource_SkillFS() {
	src := source.FS(fstest.MapFS{
		"pdf/SKILL.md":          {Data: []byte("---\nname: pdf\ndescription: Fill PDF forms.\n---\nSee reference.md.\n")},
		"pdf/reference.md":      {Data: []byte("# Fields\n")},
		"pdf/scripts/fill.py":   {Data: []byte("print('fill')\n")},
		"other/SKILL.md":        {Data: []byte("---\nname: other\ndescription: Other.\n---\n")},
		"other/not-this-one.md": {Data: []byte("no\n")},
	}, "bundled", 0)
	res, err := source.Discover(context.Background(), src, source.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range res.Skills {
		if f.Front.Name != "pdf" {
			continue
		}
		fsys, err := src.SkillFS(f)
		if err != nil {
			fmt.Println(err)
			return
		}
		data, err := fs.ReadFile(fsys, "reference.md")
		fmt.Printf("%q %v\n", data, err)
	}
	// Output:
	// "# Fields\n" <nil>
}
