package archive

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCheckName: a name checkName accepts unpacks to a local, valid,
// clean path — never above the folder it is unpacked into — and checking
// that path again gives it back.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{
		"a/b/SKILL.md", "./a/", "dir/", ".", "./", "../x", "a/../../x", "/etc/passwd", "C:/x", `a\b`,
		"a//b", "a/./b", "a/..", "..", "...", ".../x", "a\x00b", "~/x", "x:y", "./../x", "a/b/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		rel, err := checkName(name)
		if err != nil {
			if !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("%q: %v does not wrap ErrUnsafePath", name, err)
			}
			return
		}
		if rel == "." {
			return
		}
		if !fs.ValidPath(rel) || !filepath.IsLocal(rel) || strings.ContainsAny(rel, "\\\x00") || filepath.Clean(rel) != rel {
			t.Fatalf("%q accepted as %q", name, rel)
		}
		for _, elem := range strings.Split(rel, "/") {
			if elem == ".." {
				t.Fatalf("%q accepted as %q", name, rel)
			}
		}
		if again, err := checkName(rel); err != nil || again != rel {
			t.Fatalf("%q → %q → %q, %v", name, rel, again, err)
		}
	})
}

func TestCheckName(t *testing.T) {
	for name, want := range map[string]string{
		"a/b": "a/b", "./a/b/": "a/b", "././a": "a", "./": ".", "dir/": "dir", "...": "...", "a b/c": "a b/c",
		"../x": "", "a/../b": "", "/x": "", "C:x": "", `a\b`: "", "a//b": "", "a/./b": "", "": "", "a\x00": "", "a\nb": "", "\xff": "",
	} {
		got, err := checkName(name)
		if want == "" {
			if err == nil {
				t.Errorf("%q accepted as %q", name, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", name, got, err, want)
		}
	}
}
