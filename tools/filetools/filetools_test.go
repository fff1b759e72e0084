package filetools_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/tools/filetools"
)

func TestNewOptions(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"file.txt": "x"})
	tests := []struct {
		name string
		opts *filetools.Options
		want string // part of the error
	}{
		{"nil", nil, "Options.BaseDir"},
		{"no base", &filetools.Options{}, "Options.BaseDir is empty"},
		{"missing base", &filetools.Options{BaseDir: filepath.Join(dir, "nope")}, "Options.BaseDir"},
		{"base is a file", &filetools.Options{BaseDir: filepath.Join(dir, "file.txt")}, "Options.BaseDir"},
		{"negative read", &filetools.Options{BaseDir: dir, MaxReadBytes: -1}, "Options.MaxReadBytes is -1"},
		{"negative write", &filetools.Options{BaseDir: dir, MaxWriteBytes: -1}, "Options.MaxWriteBytes is -1"},
		{"negative entries", &filetools.Options{BaseDir: dir, MaxEntries: -1}, "Options.MaxEntries is -1"},
		{"negative matches", &filetools.Options{BaseDir: dir, MaxMatches: -1}, "Options.MaxMatches is -1"},
		{"bad name", &filetools.Options{BaseDir: dir, Name: "my files"}, "Options.Name"},
		{"name too long", &filetools.Options{BaseDir: dir, Name: strings.Repeat("n", 60)}, "Options.Name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := filetools.New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: error %v, want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := filetools.New(&filetools.Options{BaseDir: filepath.Join(dir, "nope")}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing base: %v does not wrap fs.ErrNotExist", err)
	}
}

func TestNewNames(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		opts filetools.Options
		want []string
	}{
		{filetools.Options{}, []string{"file_read_file", "file_write_file", "file_list_files", "file_glob", "file_grep"}},
		{filetools.Options{ReadOnly: true}, []string{"file_read_file", "file_list_files", "file_glob", "file_grep"}},
		{filetools.Options{Name: "docs"}, []string{"docs_read_file", "docs_write_file", "docs_list_files", "docs_glob", "docs_grep"}},
		{filetools.Options{Name: strings.Repeat("n", 53)}, nil}, // the longest: "<53>_write_file" is 64
	}
	for _, tt := range tests {
		tt.opts.BaseDir = dir
		ts, err := filetools.New(&tt.opts)
		if err != nil {
			t.Fatalf("%+v: %v", tt.opts, err)
		}
		list, err := ts.Expand()
		if err != nil {
			t.Fatalf("%+v: Expand: %v", tt.opts, err)
		}
		if err := tools.Check(list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range list {
			names = append(names, tl.Name)
		}
		if tt.want != nil && !slices.Equal(names, tt.want) {
			t.Errorf("%+v: tools %v, want %v", tt.opts, names, tt.want)
		}
	}
	if _, err := filetools.New(&filetools.Options{BaseDir: dir, Name: strings.Repeat("n", 54)}); err == nil {
		t.Error("a name one past the longest was accepted")
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{
		"three.txt":     "one\ntwo\nthree\n",
		"noeol.txt":     "a\nb",
		"empty.txt":     "",
		"nul.txt":       "text\x00more",
		"image.png":     "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89",
		"latin1.txt":    "caf\xe9 au lait\n",
		"sub/inner.txt": "inner\n",
	})
	s := newSet(t, dir, filetools.Options{})
	s.run(t, []step{
		{"whole file", "read_file", args{"path": "three.txt"}, want{text: "one\ntwo\nthree\n"}},
		{"nested", "read_file", args{"path": "sub/inner.txt"}, want{text: "inner\n"}},
		{"dot segments", "read_file", args{"path": "./sub/../three.txt"}, want{text: "one\ntwo\nthree\n"}},
		{"first two", "read_file", args{"path": "three.txt", "max_lines": 2}, want{text: "one\ntwo\n[lines 1-2 of 3; 1 more: read on with offset_line 3]"}},
		{"middle", "read_file", args{"path": "three.txt", "offset_line": 2, "max_lines": 1}, want{text: "two\n[lines 2-2 of 3; 1 more: read on with offset_line 3]"}},
		{"to the end", "read_file", args{"path": "three.txt", "offset_line": 2}, want{text: "two\nthree\n[lines 2-3 of 3]"}},
		{"max past end", "read_file", args{"path": "three.txt", "max_lines": 3}, want{text: "one\ntwo\nthree\n"}},
		{"last line", "read_file", args{"path": "three.txt", "offset_line": 3}, want{text: "three\n[lines 3-3 of 3]"}},
		{"past the end", "read_file", args{"path": "three.txt", "offset_line": 4}, want{isError: true, text: `Error: offset_line is 4, past the end of "three.txt", which has 3 lines`}},
		{"no final newline", "read_file", args{"path": "noeol.txt", "offset_line": 2}, want{text: "b\n[lines 2-2 of 2]"}},
		{"negative offset", "read_file", args{"path": "three.txt", "offset_line": -1}, want{isError: true, contains: []string{"offset_line is -1"}}},
		{"negative max", "read_file", args{"path": "three.txt", "max_lines": -2}, want{isError: true, contains: []string{"max_lines is -2"}}},
		{"empty file", "read_file", args{"path": "empty.txt"}, want{text: "[the file is empty]"}},
		{"NUL byte", "read_file", args{"path": "nul.txt"}, want{isError: true, contains: []string{`path "nul.txt" is a binary file`, "9 bytes"}}},
		{"PNG", "read_file", args{"path": "image.png"}, want{isError: true, contains: []string{"binary file (image/png"}}},
		{"Latin-1 text", "read_file", args{"path": "latin1.txt"}, want{text: "caf\uFFFD au lait\n"}},
		{"missing", "read_file", args{"path": "nope.txt"}, want{isError: true, contains: []string{`path "nope.txt" does not exist`, "file_list_files"}}},
		{"folder", "read_file", args{"path": "sub"}, want{isError: true, contains: []string{`path "sub" is a folder`, "file_list_files"}}},
		{"top folder", "read_file", args{"path": "."}, want{isError: true, contains: []string{"is a folder"}}},
		{"empty path", "read_file", args{"path": ""}, want{isError: true, contains: []string{"path is empty"}}},
		{"no path", "read_file", args{}, want{isError: true, contains: []string{"invalid arguments", "path"}}},
		{"unknown argument", "read_file", args{"path": "three.txt", "lines": 2}, want{isError: true, contains: []string{"invalid arguments", "lines"}}},
		{"file as folder", "read_file", args{"path": "three.txt/x"}, want{isError: true, contains: []string{`path "three.txt/x"`}}},
	})
}

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"at.txt": strings.Repeat("a", 10), "over.txt": strings.Repeat("a", 11)})
	s := newSet(t, dir, filetools.Options{MaxReadBytes: 10})
	want{text: strings.Repeat("a", 10)}.check(t, "at the limit", s.call(t, "read_file", args{"path": "at.txt"}))
	want{isError: true, contains: []string{`path "over.txt" is 11 bytes`, "limit of 10 bytes", "file_grep"}}.
		check(t, "over the limit", s.call(t, "read_file", args{"path": "over.txt"}))

	// The default is 1 MiB.
	dir = t.TempDir()
	put(t, dir, map[string]string{"at.txt": strings.Repeat("a", filetools.DefaultMaxReadBytes), "over.txt": strings.Repeat("a", filetools.DefaultMaxReadBytes+1)})
	s = newSet(t, dir, filetools.Options{})
	if r := s.call(t, "read_file", args{"path": "at.txt"}); r.IsError || len(r.Text) != filetools.DefaultMaxReadBytes {
		t.Errorf("default limit: a file of %d bytes: error %v, %d bytes", filetools.DefaultMaxReadBytes, r.IsError, len(r.Text))
	}
	want{isError: true, contains: []string{"1048577 bytes", "limit of 1048576 bytes"}}.check(t, "over the default", s.call(t, "read_file", args{"path": "over.txt"}))
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		args  args
		want  want
		after map[string]string // files and their content afterwards
	}{
		{"new file", nil, args{"path": "a.txt", "content": "hello"}, want{text: "wrote a.txt: 5 bytes"}, map[string]string{"a.txt": "hello"}},
		{"new folders", nil, args{"path": "x/y/z.txt", "content": "deep"}, want{text: "wrote x/y/z.txt: 4 bytes"}, map[string]string{"x/y/z.txt": "deep"}},
		{"empty content", nil, args{"path": "e.txt", "content": ""}, want{text: "wrote e.txt: 0 bytes"}, map[string]string{"e.txt": ""}},
		{"exists", map[string]string{"a.txt": "old"}, args{"path": "a.txt", "content": "new"},
			want{isError: true, contains: []string{`path "a.txt" already exists`, "overwrite true"}}, map[string]string{"a.txt": "old"}},
		{"exists, overwrite false", map[string]string{"a.txt": "old"}, args{"path": "a.txt", "content": "new", "overwrite": false},
			want{isError: true, contains: []string{"already exists"}}, map[string]string{"a.txt": "old"}},
		{"overwrite", map[string]string{"a.txt": "old"}, args{"path": "a.txt", "content": "new", "overwrite": true},
			want{text: "replaced a.txt: 3 bytes"}, map[string]string{"a.txt": "new"}},
		{"overwrite a new file", nil, args{"path": "n.txt", "content": "n", "overwrite": true}, want{text: "wrote n.txt: 1 bytes"}, map[string]string{"n.txt": "n"}},
		{"folder", map[string]string{"d/f": "f"}, args{"path": "d", "content": "x", "overwrite": true},
			want{isError: true, contains: []string{`path "d" is a folder`}}, map[string]string{"d/f": "f"}},
		{"trailing slash", nil, args{"path": "d/", "content": "x"}, want{isError: true, contains: []string{"names a folder"}}, nil},
		{"top folder", nil, args{"path": ".", "content": "x"}, want{isError: true, contains: []string{"names a folder"}}, nil},
		{"parent is a file", map[string]string{"f": "f"}, args{"path": "f/x.txt", "content": "x"},
			want{isError: true, contains: []string{`path "f/x.txt" cannot be used`}}, map[string]string{"f": "f"}},
		{"escape", nil, args{"path": "../x.txt", "content": "x"}, want{isError: true, contains: []string{`path "../x.txt" leads out of the folder`}}, nil},
		{"absolute", nil, args{"path": "/tmp/x.txt", "content": "x"}, want{isError: true, contains: []string{`path "/tmp/x.txt" is absolute`}}, nil},
		{"no content", nil, args{"path": "x.txt"}, want{isError: true, contains: []string{"invalid arguments", "content"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			put(t, dir, tt.files)
			s := newSet(t, dir, filetools.Options{})
			tt.want.check(t, "write_file", s.call(t, "write_file", tt.args))
			for rel, content := range tt.after {
				data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
				if err != nil || string(data) != content {
					t.Errorf("%s: %q, %v; want %q", rel, data, err, content)
				}
			}
			noTemp(t, dir)
		})
	}
}

func TestWriteKeepsMode(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	s := newSet(t, dir, filetools.Options{})
	want{text: "replaced run.sh: 18 bytes"}.check(t, "overwrite", s.call(t, "write_file", args{"path": "run.sh", "content": "#!/bin/sh\necho hi\n", "overwrite": true}))
	fi, err := os.Stat(filepath.Join(dir, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf("mode after overwrite: %v, %v; want 0750", fi.Mode(), err)
	}
}

func TestWriteLimit(t *testing.T) {
	dir := t.TempDir()
	s := newSet(t, dir, filetools.Options{MaxWriteBytes: 10})
	want{text: "wrote at.txt: 10 bytes"}.check(t, "at the limit", s.call(t, "write_file", args{"path": "at.txt", "content": strings.Repeat("a", 10)}))
	want{isError: true, contains: []string{"content is 11 bytes", "limit of 10 bytes"}}.
		check(t, "over the limit", s.call(t, "write_file", args{"path": "over.txt", "content": strings.Repeat("a", 11)}))
	if _, err := os.Stat(filepath.Join(dir, "over.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("over.txt was written: %v", err)
	}

	s = newSet(t, dir, filetools.Options{})
	want{text: "wrote d-at.txt: 1048576 bytes"}.check(t, "at the default", s.call(t, "write_file", args{"path": "d-at.txt", "content": strings.Repeat("a", filetools.DefaultMaxWriteBytes)}))
	want{isError: true, contains: []string{"content is 1048577 bytes", "limit of 1048576 bytes"}}.
		check(t, "over the default", s.call(t, "write_file", args{"path": "d-over.txt", "content": strings.Repeat("a", filetools.DefaultMaxWriteBytes+1)}))
	noTemp(t, dir)
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	s := newSet(t, dir, filetools.Options{ReadOnly: true})
	if _, ok := s["write_file"]; ok {
		t.Fatal("write_file offered by a read-only set")
	}
	if len(s) != 4 {
		t.Errorf("read-only set has %d tools, want 4", len(s))
	}
}

func TestListFiles(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"b.txt": "bb", "a.md": "a", "sub/c.txt": "ccc", "Z": "", "empty/.keep": ""})
	if err := os.Remove(filepath.Join(dir, "empty", ".keep")); err != nil {
		t.Fatal(err)
	}
	s := newSet(t, dir, filetools.Options{})
	top := "Z (0 bytes)\na.md (1 bytes)\nb.txt (2 bytes)\nempty/\nsub/"
	s.run(t, []step{
		{"default", "list_files", args{}, want{text: top}},
		{"dot", "list_files", args{"path": "."}, want{text: top}},
		{"empty path", "list_files", args{"path": ""}, want{text: top}},
		{"sub", "list_files", args{"path": "sub"}, want{text: "c.txt (3 bytes)"}},
		{"sub slash", "list_files", args{"path": "sub/"}, want{text: "c.txt (3 bytes)"}},
		{"empty folder", "list_files", args{"path": "empty"}, want{text: "[folder \"empty\" is empty]"}},
		{"a file", "list_files", args{"path": "a.md"}, want{isError: true, contains: []string{`path "a.md" is not a folder`, "file_read_file"}}},
		{"missing", "list_files", args{"path": "nope"}, want{isError: true, contains: []string{`path "nope" does not exist`}}},
		{"escape", "list_files", args{"path": ".."}, want{isError: true, contains: []string{`path ".." leads out`}}},
		{"absolute", "list_files", args{"path": "/"}, want{isError: true, contains: []string{`path "/" is absolute`}}},
	})
}

// fill makes n files f000 … beneath dir/rel.
func fill(t testing.TB, dir, rel string, n int) {
	t.Helper()
	files := map[string]string{}
	for i := range n {
		files[rel+"/f"+string(rune('a'+i/26/26%26))+string(rune('a'+i/26%26))+string(rune('a'+i%26))+".txt"] = "x\n"
	}
	put(t, dir, files)
}

func TestEntryLimit(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, "at", 3)
	fill(t, dir, "over", 4)
	fill(t, dir, "many", 25) // past twice the limit: the kept entries are compacted
	s := newSet(t, dir, filetools.Options{MaxEntries: 3})
	s.run(t, []step{
		{"", "list_files", args{"path": "at"}, want{text: "faaa.txt (2 bytes)\nfaab.txt (2 bytes)\nfaac.txt (2 bytes)"}},
		{"", "list_files", args{"path": "over"}, want{text: "faaa.txt (2 bytes)\nfaab.txt (2 bytes)\nfaac.txt (2 bytes)\n[1 of 4 entries left out: at most 3 are shown; list the folders below one at a time, or narrow down with file_glob]"}},
		{"", "list_files", args{"path": "many"}, want{contains: []string{"faaa.txt (2 bytes)\nfaab.txt (2 bytes)\nfaac.txt (2 bytes)\n[22 of 25 entries left out"}}},
		{"", "glob", args{"pattern": "at/*"}, want{text: "at/faaa.txt\nat/faab.txt\nat/faac.txt"}},
		{"", "glob", args{"pattern": "over/*"}, want{text: "over/faaa.txt\nover/faab.txt\nover/faac.txt\n[1 of 4 paths left out: at most 3 are shown; use a narrower pattern]"}},
		{"", "glob", args{"pattern": "many/**"}, want{contains: []string{"many/\nmany/faaa.txt\nmany/faab.txt\n[23 of 26 paths left out"}}},
	})

	// The default is 1000.
	big := t.TempDir()
	fill(t, big, "at", filetools.DefaultMaxEntries)
	fill(t, big, "over", filetools.DefaultMaxEntries+1)
	s = newSet(t, big, filetools.Options{})
	for _, tool := range []string{"list_files", "glob"} {
		a, o := args{"path": "at"}, args{"path": "over"}
		if tool == "glob" {
			a, o = args{"pattern": "at/*"}, args{"pattern": "over/*"}
		}
		if r := s.call(t, tool, a); strings.Count(r.Text, "\n") != filetools.DefaultMaxEntries-1 || strings.Contains(r.Text, "left out") {
			t.Errorf("%s at the default limit: %d lines", tool, strings.Count(r.Text, "\n")+1)
		}
		want{contains: []string{"[1 of 1001 ", "at most 1000 are shown"}}.check(t, tool+" over the default", s.call(t, tool, o))
	}
}

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{
		"README.md": "r", "docs/a.md": "a", "docs/deep/b.md": "b", "docs/c.txt": "c", ".hidden/h.md": "h", "x[1].md": "x",
	})
	s := newSet(t, dir, filetools.Options{})
	s.run(t, []step{
		{"all md", "glob", args{"pattern": "**/*.md"}, want{text: ".hidden/h.md\nREADME.md\ndocs/a.md\ndocs/deep/b.md\nx[1].md"}},
		{"top", "glob", args{"pattern": "*"}, want{text: ".hidden/\nREADME.md\ndocs/\nx[1].md"}},
		{"folder", "glob", args{"pattern": "docs/*"}, want{text: "docs/a.md\ndocs/c.txt\ndocs/deep/"}},
		{"dot slash", "glob", args{"pattern": "./docs/*.md"}, want{text: "docs/a.md"}},
		{"braces", "glob", args{"pattern": "docs/{a.md,c.txt}"}, want{text: "docs/a.md\ndocs/c.txt"}},
		{"escaped", "glob", args{"pattern": `x\[1\].md`}, want{text: "x[1].md"}},
		{"exact", "glob", args{"pattern": "docs/c.txt"}, want{text: "docs/c.txt"}},
		{"no match", "glob", args{"pattern": "**/*.go"}, want{text: `[no paths match "**/*.go"]`}},
		{"bad", "glob", args{"pattern": "docs/[a"}, want{isError: true, contains: []string{`pattern "docs/[a" is not a valid glob`}}},
		{"empty", "glob", args{"pattern": ""}, want{isError: true, contains: []string{"pattern is empty"}}},
		{"dotdot", "glob", args{"pattern": "../*"}, want{isError: true, contains: []string{`pattern "../*" has a ".." segment`}}},
		{"inner dotdot", "glob", args{"pattern": "docs/../../*"}, want{isError: true, contains: []string{`has a ".." segment`}}},
		{"absolute", "glob", args{"pattern": "/etc/*"}, want{isError: true, contains: []string{`pattern "/etc/*" is absolute`}}},
		// Repeated ** match what one does, each path once.
		{"repeated doublestar", "glob", args{"pattern": "**/**/**/**/**/**/**/**/*.md"}, want{text: ".hidden/h.md\nREADME.md\ndocs/a.md\ndocs/deep/b.md\nx[1].md"}},
		{"a path reached twice", "glob", args{"pattern": "**/docs/**/*.md"}, want{text: "docs/a.md\ndocs/deep/b.md"}},
	})
}

// TestRepeatedDoublestarIsLinear: eight ** over a deep tree cost what one
// does (the globber walks each repetition anew otherwise, exponentially
// in the depth), and grep reads each file once.
func TestRepeatedDoublestarIsLinear(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	p := ""
	for i := range 12 {
		p += "d/"
		files[p+"f"+string(rune('a'+i))+".txt"] = "needle\n"
	}
	put(t, dir, files)
	s := newSet(t, dir, filetools.Options{})
	res := s.call(t, "grep", args{"pattern": "needle", "path_glob": strings.Repeat("**/", 8) + "*.txt"})
	if n := strings.Count(res.Text, "needle"); n != 12 {
		t.Fatalf("grep found %d lines; want each of the 12 files once:\n%s", n, res.Text)
	}
}

func TestGrep(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{
		"a.txt":      "alpha\nBeta\nbeta gamma\r\n",
		"sub/b.md":   "# beta\nnothing\n",
		"bin.dat":    "beta\x00beta",
		"long.txt":   strings.Repeat("é", 400) + " beta\n",
		"at.txt":     strings.Repeat("z", 99) + "\n",
		"over.txt":   strings.Repeat("z", 100) + "\n",
		"latin1.txt": "beta caf\xe9\n",
	})
	s := newSet(t, dir, filetools.Options{MaxReadBytes: 1000})
	longLine := "long.txt:1: " + strings.Repeat("é", 250) + "…"
	s.run(t, []step{
		{"every file", "grep", args{"pattern": "beta"}, want{text: "a.txt:3: beta gamma\nlatin1.txt:1: beta caf\uFFFD\n" + longLine + "\nsub/b.md:1: # beta\n[files not searched: 1 binary]"}},
		{"ignore case", "grep", args{"pattern": "^beta", "ignore_case": true, "path_glob": "*.txt"}, want{text: "a.txt:2: Beta\na.txt:3: beta gamma\nlatin1.txt:1: beta caf\uFFFD"}},
		{"path glob", "grep", args{"pattern": "beta", "path_glob": "sub/**"}, want{text: "sub/b.md:1: # beta"}},
		{"regexp", "grep", args{"pattern": `^z{99}$`}, want{contains: []string{"at.txt:1: " + strings.Repeat("z", 99)}}},
		{"no match", "grep", args{"pattern": "omega", "path_glob": "**/*.md"}, want{text: `[no lines match "omega" in the files matching "**/*.md"]`}},
		{"bad regexp", "grep", args{"pattern": "(beta"}, want{isError: true, contains: []string{`pattern "(beta" is not a valid regular expression`, "missing closing )"}}},
		{"bad glob", "grep", args{"pattern": "beta", "path_glob": "{a"}, want{isError: true, contains: []string{`path_glob "{a" is not a valid glob`}}},
		{"escaping glob", "grep", args{"pattern": "beta", "path_glob": "../**"}, want{isError: true, contains: []string{`path_glob "../**" has a ".." segment`}}},
		{"empty pattern", "grep", args{"pattern": "", "path_glob": "a.txt"}, want{text: "a.txt:1: alpha\na.txt:2: Beta\na.txt:3: beta gamma"}},
	})
}

func TestGrepReadLimit(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"at.txt": strings.Repeat("z", 9) + "\n", "over.txt": strings.Repeat("z", 10) + "\n"})
	s := newSet(t, dir, filetools.Options{MaxReadBytes: 10})
	want{text: "at.txt:1: zzzzzzzzz\n[files not searched: 1 over 10 bytes]"}.
		check(t, "grep", s.call(t, "grep", args{"pattern": "z"}))
}

func TestMatchLimit(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"at.txt": "m\nm\nm\n", "over.txt": "m\nm\nm\nm\n", "split/a.txt": "m\nm\n", "split/b.txt": "m\nm\n"})
	s := newSet(t, dir, filetools.Options{MaxMatches: 3})
	note := "[more matches left out: at most 3 lines are shown; narrow pattern or path_glob]"
	want{text: "at.txt:1: m\nat.txt:2: m\nat.txt:3: m"}.check(t, "at the limit", s.call(t, "grep", args{"pattern": "m", "path_glob": "at.txt"}))
	want{text: "over.txt:1: m\nover.txt:2: m\nover.txt:3: m\n" + note}.check(t, "over the limit", s.call(t, "grep", args{"pattern": "m", "path_glob": "over.txt"}))
	want{text: "split/a.txt:1: m\nsplit/a.txt:2: m\nsplit/b.txt:1: m\n" + note}.check(t, "across files", s.call(t, "grep", args{"pattern": "m", "path_glob": "split/*"}))

	big := t.TempDir()
	put(t, big, map[string]string{"at.txt": strings.Repeat("m\n", filetools.DefaultMaxMatches), "over.txt": strings.Repeat("m\n", filetools.DefaultMaxMatches+1)})
	s = newSet(t, big, filetools.Options{})
	if r := s.call(t, "grep", args{"pattern": "m", "path_glob": "at.txt"}); strings.Count(r.Text, "\n") != filetools.DefaultMaxMatches-1 || strings.Contains(r.Text, "left out") {
		t.Errorf("at the default limit: %d lines", strings.Count(r.Text, "\n")+1)
	}
	want{contains: []string{"over.txt:200: m\n[more matches left out: at most 200 lines"}, excludes: []string{"over.txt:201"}}.
		check(t, "over the default", s.call(t, "grep", args{"pattern": "m", "path_glob": "over.txt"}))
}

func TestInputsAlias(t *testing.T) {
	t.Run("no inputs entry", func(t *testing.T) {
		dir := t.TempDir()
		put(t, dir, map[string]string{"data.csv": "a,b\n", "inputsx/y.txt": "y\n"})
		s := newSet(t, dir, filetools.Options{})
		s.run(t, []step{
			{"", "read_file", args{"path": "inputs/data.csv"}, want{text: "a,b\n"}},
			{"", "read_file", args{"path": "./inputs/./data.csv"}, want{text: "a,b\n"}},
			{"", "read_file", args{"path": "inputsx/y.txt"}, want{text: "y\n"}},
			{"", "read_file", args{"path": "inputs/../data.csv"}, want{text: "a,b\n"}},
			{"", "read_file", args{"path": "inputs/../../data.csv"}, want{isError: true, contains: []string{"leads out of the folder"}}},
			{"", "list_files", args{"path": "inputs"}, want{text: "data.csv (4 bytes)\ninputsx/"}},
			{"", "list_files", args{"path": "inputs/"}, want{text: "data.csv (4 bytes)\ninputsx/"}},
			{"", "glob", args{"pattern": "inputs/*.csv"}, want{text: "data.csv"}},
			{"", "glob", args{"pattern": "./inputs/**/*.txt"}, want{text: "inputsx/y.txt"}},
			{"", "grep", args{"pattern": "a", "path_glob": "inputs/*.csv"}, want{text: "data.csv:1: a,b"}},
			{"", "write_file", args{"path": "inputs/new.txt", "content": "n"}, want{text: "wrote inputs/new.txt: 1 bytes"}},
		})
		if data, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(data) != "n" {
			t.Errorf("write_file inputs/new.txt: new.txt is %q, %v", data, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "inputs")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("write_file inputs/new.txt created a folder inputs: %v", err)
		}
	})
	t.Run("real inputs folder", func(t *testing.T) {
		dir := t.TempDir()
		put(t, dir, map[string]string{"data.csv": "top\n", "inputs/data.csv": "inner\n", "only-top.txt": "t\n"})
		s := newSet(t, dir, filetools.Options{})
		s.run(t, []step{
			{"", "read_file", args{"path": "inputs/data.csv"}, want{text: "inner\n"}},
			{"", "read_file", args{"path": "data.csv"}, want{text: "top\n"}},
			{"", "read_file", args{"path": "inputs/only-top.txt"}, want{isError: true, contains: []string{"does not exist"}}},
			{"", "list_files", args{"path": "inputs"}, want{text: "data.csv (6 bytes)"}},
			{"", "glob", args{"pattern": "inputs/*"}, want{text: "inputs/data.csv"}},
			{"", "grep", args{"pattern": ".", "path_glob": "inputs/*"}, want{text: "inputs/data.csv:1: inner"}},
		})
	})
	t.Run("inputs is a file", func(t *testing.T) {
		dir := t.TempDir()
		put(t, dir, map[string]string{"inputs": "a file\n", "x.txt": "x\n"})
		s := newSet(t, dir, filetools.Options{})
		want{text: "a file\n"}.check(t, "read inputs", s.call(t, "read_file", args{"path": "inputs"}))
		want{isError: true}.check(t, "read inputs/x.txt", s.call(t, "read_file", args{"path": "inputs/x.txt"}))
	})
}

func TestCancelled(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"a.txt": "a\n"})
	ts, err := filetools.New(&filetools.Options{BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := map[string]string{
		"read_file":  `{"path":"a.txt"}`,
		"write_file": `{"path":"b.txt","content":"b"}`,
		"list_files": `{}`,
		"glob":       `{"pattern":"**"}`,
		"grep":       `{"pattern":"a"}`,
	}
	for _, tl := range ts.Tools {
		if _, err := tl.Call(ctx, tools.Call{Args: json.RawMessage(calls[tl.Name])}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error %v, want context.Canceled", tl.Name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("write_file wrote with a cancelled context: %v", err)
	}
}

// Writers racing for one new path: exactly one wins, the others are told
// the file exists, and the file holds the winner's content whole.
func TestWriteRace(t *testing.T) {
	dir := t.TempDir()
	s := newSet(t, dir, filetools.Options{})
	const writers = 8
	type outcome struct {
		r   tools.Result
		err error
	}
	results := make(chan outcome, writers)
	for i := range writers {
		go func() {
			raw, _ := json.Marshal(args{"path": "race/one.txt", "content": strings.Repeat(string(rune('a'+i)), 4096)})
			r, err := s["write_file"].Call(context.Background(), tools.Call{Args: raw})
			results <- outcome{r, err}
		}()
	}
	won := 0
	for range writers {
		o := <-results
		switch r := o.r; {
		case o.err != nil:
			t.Errorf("a writer: Go error %v", o.err)
		case !r.IsError:
			won++
		case !strings.Contains(r.Text, "already exists"):
			t.Errorf("a losing writer: %q", r.Text)
		}
	}
	if won != 1 {
		t.Errorf("%d writers won, want 1", won)
	}
	data, err := os.ReadFile(filepath.Join(dir, "race", "one.txt"))
	if err != nil || len(data) != 4096 || strings.Count(string(data), string(data[:1])) != 4096 {
		t.Errorf("race/one.txt: %d bytes, %v; want 4096 bytes of one writer", len(data), err)
	}
	noTemp(t, dir)
}
