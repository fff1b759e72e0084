//go:build unix

package filetools_test

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skillkit/skillkit/tools/filetools"
)

// FuzzPath gives any string as the path (or pattern) argument of every
// tool over the confined fixture (links out of the folder, chains, an
// absolute link, a loop, a FIFO) and checks what must always hold: no Go
// error, no hang, an error result that says "Error: ", no content from
// outside the folder in any result, a path that climbs out or is
// absolute always refused, and nothing outside the folder changed by
// write_file.
func FuzzPath(f *testing.F) {
	base, outside := confined(f)
	for link, target := range links(base) {
		for _, p := range []string{link, link + "/secret.txt", link + "/../" + link, "inputs/" + link, "./" + target, "loop/" + link} {
			f.Add(p)
		}
	}
	for _, p := range strings.Split("notes.txt|/etc/passwd|..|.||a\x00b|fifo|fifo/x|**|**/*|{out-dir,sub}/*|[|\\|//|inputs", "|") {
		f.Add(p)
	}
	if err := syscall.Mkfifo(filepath.Join(base, "fifo"), 0o644); err != nil {
		f.Skipf("FIFOs: %v", err)
	}
	s := newSet(f, base, filetools.Options{MaxEntries: 50, MaxMatches: 50})
	f.Fuzz(func(t *testing.T, p string) {
		escapes := strings.HasPrefix(p, "/") || func() bool {
			c := path.Clean(p)
			return c == ".." || strings.HasPrefix(c, "../")
		}()
		for _, c := range []struct {
			tool string
			args args
		}{
			{"read_file", args{"path": p}},
			{"read_file", args{"path": p, "offset_line": 1, "max_lines": 1}},
			{"list_files", args{"path": p}},
			{"glob", args{"pattern": p}},
			{"grep", args{"pattern": ".", "path_glob": p}},
			{"write_file", args{"path": p, "content": "fuzz"}}, // not overwrite: the fixture's links stay
		} {
			r := s.call(t, c.tool, c.args)
			if strings.Contains(r.Text, secret) {
				t.Fatalf("%s(%q) returned content from outside the folder:\n%s", c.tool, p, r.Text)
			}
			if escapes && !r.IsError {
				t.Fatalf("%s(%q) was not refused: %s", c.tool, p, r.Text)
			}
		}
		entries, err := os.ReadDir(outside)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(outside, "secret.txt"))
		if len(entries) != 1 || err != nil || string(data) != secret+"\n" {
			t.Fatalf("write_file(%q) changed the outside folder: %d entries, secret.txt %q, %v", p, len(entries), data, err)
		}
		noTemp(t, base)
	})
}
