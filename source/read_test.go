package source

import (
	"reflect"
	"testing"

	"github.com/skillkit/skillkit/skill"
)

func TestHeaderOnly(t *testing.T) {
	tests := []struct{ in, want string }{
		{"---\nname: a\n---\nbody\nmore\n", "---\nname: a\n---\n"},
		{"---\nname: a\n--- \t\nbody\n", "---\nname: a\n--- \t\n"},
		{"---\nname: a\n----\nx\n---\nbody", "---\nname: a\n----\nx\n---\n"},
		{"---\nname: a\n---", "---\nname: a\n---"},                                 // no newline after the fence: whole
		{"---\r\nname: a\r\n---\r\nbody\r\n", "---\r\nname: a\r\n---\r\nbody\r\n"}, // CR: whole
		{"---\nname: a\n---\n\xff\n", "---\nname: a\n---\n\xff\n"},                 // invalid UTF-8: whole
		{"no front matter", "no front matter"},
		{"---\nname: a\nnever closed\n", "---\nname: a\nnever closed\n"},
	}
	for _, tc := range tests {
		if got := string(headerOnly([]byte(tc.in))); got != tc.want {
			t.Errorf("headerOnly(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzHeaderOnly checks that parsing only the header yields exactly the
// front matter, diagnostics and error that parsing the whole file yields.
func FuzzHeaderOnly(f *testing.F) {
	for _, s := range []string{
		skillMD("a"),
		"---\nname: a\ndescription: d\n---\nbody\n---\nmore\n",
		"---\nname: a\ndescription: d\nx: 1\n--- \nbody",
		"\xEF\xBB\xBF---\nname: a\ndescription: d\n---\n",
		"---\nname: a\ndescription: |\n  multi\n  line\n---\n",
		"---\r\nname: a\r\ndescription: d\r\n---\r\n",
		"---\nname: A\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := skill.ParseOptions{File: "x/SKILL.md", DirName: "x"}
		full, fullDiags, fullErr := skill.Parse(data, opts)
		head, headDiags, headErr := skill.Parse(headerOnly(data), opts)
		if (fullErr == nil) != (headErr == nil) || fullErr != nil && fullErr.Error() != headErr.Error() {
			t.Fatalf("errors differ: whole %v, header %v", fullErr, headErr)
		}
		if !reflect.DeepEqual(fullDiags, headDiags) {
			t.Fatalf("diagnostics differ:\nwhole  %v\nheader %v", fullDiags, headDiags)
		}
		if fullErr == nil && !reflect.DeepEqual(full.Frontmatter, head.Frontmatter) {
			t.Fatalf("front matter differs:\nwhole  %+v\nheader %+v", full.Frontmatter, head.Frontmatter)
		}
	})
}
