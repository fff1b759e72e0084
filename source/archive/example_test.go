package archive_test

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skillkit/skillkit/source"
	"github.com/skillkit/skillkit/source/archive"
)

// Open reads the skills of an archive — here a zip file written first;
// an https:// URL, optionally ending in #sha256=<hex>, is opened alike —
// and the source it returns is discovered as any other.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "archive-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "skills.zip")
	f, err := os.Create(file)
	if err != nil {
		fmt.Println(err)
		return
	}
	zw := zip.NewWriter(f)
	w, _ := zw.Create("skills/pdf/SKILL.md")
	fmt.Fprint(w, "---\nname: pdf\ndescription: Fill and merge PDF forms.\n---\nUse pdftk.\n")
	zw.Close()
	f.Close()

	src, err := archive.Open(context.Background(), file, &archive.Options{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := source.Discover(context.Background(), src, source.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range res.Skills {
		fmt.Printf("%s in %s: %s\n", s.Front.Name, s.Dir, s.Front.Description)
	}
	// Output:
	// pdf in skills/pdf: Fill and merge PDF forms.
}
