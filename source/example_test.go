package source_test

import (
	"context"
	"fmt"
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
