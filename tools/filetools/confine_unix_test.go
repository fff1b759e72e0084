//go:build unix

package filetools_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/tools/filetools"
)

// secret is the content of the file outside the base folder; no result
// may ever contain it.
const secret = "OUTSIDE-SECRET-CONTENT"

// confined makes a base folder next to an outside folder holding a
// secret, with links of every kind: inside to inside, inside to outside,
// chains of both, an absolute link and an inputs link leading out.
//
//	base/
//	  notes.txt           text
//	  sub/inner.txt       text
//	  in-link  -> notes.txt
//	  in-dir   -> sub
//	  chain1   -> chain2 -> in-link -> notes.txt
//	  out-file -> ../outside/secret.txt
//	  out-dir  -> ../outside
//	  out-chain1 -> out-chain2 -> out-file
//	  abs-link -> <base>/notes.txt (absolute: refused even though inside)
//	  sub/up   -> ../../outside/secret.txt
//	  loop     -> .
//	outside/secret.txt    the secret
func confined(t testing.TB) (base, outside string) {
	t.Helper()
	top := t.TempDir()
	base, outside = filepath.Join(top, "base"), filepath.Join(top, "outside")
	put(t, base, map[string]string{"notes.txt": "notes\n", "sub/inner.txt": "inner\n"})
	put(t, outside, map[string]string{"secret.txt": secret + "\n"})
	for link, target := range links(base) {
		symlink(t, target, base, link)
	}
	return base, outside
}

// links are the links of confined's base folder, by path, with their
// targets.
func links(base string) map[string]string {
	return map[string]string{
		"in-link":    "notes.txt",
		"in-dir":     "sub",
		"chain1":     "chain2",
		"chain2":     "in-link",
		"out-file":   "../outside/secret.txt",
		"out-dir":    "../outside",
		"out-chain1": "out-chain2",
		"out-chain2": "out-file",
		"abs-link":   filepath.Join(base, "notes.txt"),
		"sub/up":     "../../outside/secret.txt",
		"loop":       ".",
	}
}

func TestConfinement(t *testing.T) {
	base, outside := confined(t)
	s := newSet(t, base, filetools.Options{})
	refused := func(contains ...string) want {
		return want{isError: true, contains: contains, excludes: []string{secret}}
	}
	s.run(t, []step{
		{"dotdot", "read_file", args{"path": "../outside/secret.txt"}, refused(`path "../outside/secret.txt" leads out of the folder`)},
		{"dotdot inside", "read_file", args{"path": "sub/../../outside/secret.txt"}, refused("leads out of the folder")},
		{"absolute", "read_file", args{"path": "/etc/passwd"}, refused(`path "/etc/passwd" is absolute`)},
		{"absolute outside", "read_file", args{"path": filepath.Join(outside, "secret.txt")}, refused("is absolute")},
		{"link out", "read_file", args{"path": "out-file"}, refused(`path "out-file" cannot be used`)},
		{"folder link out", "read_file", args{"path": "out-dir/secret.txt"}, refused(`path "out-dir/secret.txt" cannot be used`)},
		{"chain out", "read_file", args{"path": "out-chain1"}, refused(`path "out-chain1" cannot be used`)},
		{"nested link out", "read_file", args{"path": "sub/up"}, refused(`path "sub/up" cannot be used`)},
		{"absolute link", "read_file", args{"path": "abs-link"}, refused(`path "abs-link" cannot be used`)},
		{"link in", "read_file", args{"path": "in-link"}, want{text: "notes\n"}},
		{"chain in", "read_file", args{"path": "chain1"}, want{text: "notes\n"}},
		{"folder link in", "read_file", args{"path": "in-dir/inner.txt"}, want{text: "inner\n"}},
		{"loop", "read_file", args{"path": "loop/loop/notes.txt"}, want{text: "notes\n"}},
		{"list folder link out", "list_files", args{"path": "out-dir"}, refused(`path "out-dir" cannot be used`)},
		{"list dotdot", "list_files", args{"path": "../outside"}, refused("leads out of the folder")},
		{"list folder link in", "list_files", args{"path": "in-dir"}, want{text: "inner.txt (6 bytes)\nup (link that leads nowhere inside the folder)"}},
		{"list top", "list_files", args{}, want{text: strings.Join([]string{
			"abs-link (link that leads nowhere inside the folder)",
			"chain1 (6 bytes, link)",
			"chain2 (6 bytes, link)",
			"in-dir/ (link)",
			"in-link (6 bytes, link)",
			"loop/ (link)",
			"notes.txt (6 bytes)",
			"out-chain1 (link that leads nowhere inside the folder)",
			"out-chain2 (link that leads nowhere inside the folder)",
			"out-dir (link that leads nowhere inside the folder)",
			"out-file (link that leads nowhere inside the folder)",
			"sub/",
		}, "\n")}},
		{"glob through link out", "glob", args{"pattern": "out-dir/*"}, want{text: `[no paths match "out-dir/*"]`}},
		{"glob everything", "glob", args{"pattern": "**"}, want{excludes: []string{"secret.txt"}, contains: []string{"loop\n", "notes.txt", "sub/inner.txt"}}},
		{"grep everything", "grep", args{"pattern": "."}, want{excludes: []string{secret}, contains: []string{"notes.txt:1: notes", "in-link:1: notes", "sub/inner.txt:1: inner", "[files not searched: 6 that could not be opened]"}}},
		{"grep through link out", "grep", args{"pattern": ".", "path_glob": "out-dir/**"}, want{excludes: []string{secret}}},
		{"write through folder link out", "write_file", args{"path": "out-dir/new.txt", "content": "x"}, refused(`path "out-dir/new.txt" cannot be used`)},
		{"write over link out", "write_file", args{"path": "out-file", "content": "x"}, refused("already exists")},
		{"write dotdot", "write_file", args{"path": "../outside/secret.txt", "content": "x", "overwrite": true}, refused("leads out of the folder")},
	})

	// Overwriting a link replaces the link, never the file it points to.
	want{text: "replaced out-file: 1 bytes"}.check(t, "overwrite link out", s.call(t, "write_file", args{"path": "out-file", "content": "x", "overwrite": true}))
	if fi, err := os.Lstat(filepath.Join(base, "out-file")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("out-file after overwrite: %v, %v; want a regular file", fi.Mode(), err)
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(outside, "secret.txt")); len(entries) != 1 || err != nil || string(data) != secret+"\n" {
		t.Errorf("outside folder changed: %d entries, secret.txt %q, %v", len(entries), data, err)
	}
	noTemp(t, base)
}

func TestInputsLink(t *testing.T) {
	base, outside := confined(t)
	symlink(t, "../outside", base, "inputs")
	s := newSet(t, base, filetools.Options{})
	// A real inputs entry (here a link out) means paths are literal: the
	// alias does not apply, and the link is refused.
	for _, tt := range []struct {
		tool string
		args args
	}{
		{"read_file", args{"path": "inputs/secret.txt"}},
		{"read_file", args{"path": "inputs/notes.txt"}},
		{"list_files", args{"path": "inputs"}},
		{"write_file", args{"path": "inputs/new.txt", "content": "x"}},
	} {
		want{isError: true, excludes: []string{secret}}.check(t, tt.tool, s.call(t, tt.tool, tt.args))
	}
	want{text: `[no paths match "inputs/*"]`}.check(t, "glob", s.call(t, "glob", args{"pattern": "inputs/*"}))
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write_file wrote through the inputs link: %v", err)
	}

	// An inputs link to a folder inside is followed like any other.
	inner := t.TempDir()
	put(t, inner, map[string]string{"real/data.csv": "x\n"})
	symlink(t, "real", inner, "inputs")
	s = newSet(t, inner, filetools.Options{})
	want{text: "x\n"}.check(t, "inputs link inside", s.call(t, "read_file", args{"path": "inputs/data.csv"}))
}

func TestSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"ok.txt": "fine\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("FIFOs: %v", err)
	}
	symlink(t, "fifo", dir, "fifo-link")
	devNull := false
	if err := unix.Mknod(filepath.Join(dir, "null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err == nil {
		devNull = true
	} else {
		t.Logf("no character device in the test (mknod: %v); FIFOs only", err)
	}
	s := newSet(t, dir, filetools.Options{})
	steps := []step{
		{"read FIFO", "read_file", args{"path": "fifo"}, want{isError: true, contains: []string{`path "fifo" is not a regular file (a FIFO)`}}},
		{"read FIFO link", "read_file", args{"path": "fifo-link"}, want{isError: true, contains: []string{"(a FIFO)"}}},
		{"list FIFO", "list_files", args{"path": "fifo"}, want{isError: true, contains: []string{"is not a folder"}}},
		{"list with FIFO", "list_files", args{}, want{contains: []string{"fifo (a FIFO)", "fifo-link (link to a FIFO)", "ok.txt (5 bytes)"}}},
		{"glob into FIFO", "glob", args{"pattern": "fifo/*"}, want{text: `[no paths match "fifo/*"]`}},
		{"glob into FIFO link", "glob", args{"pattern": "fifo-link/**"}, want{text: `[no paths match "fifo-link/**"]`}},
		{"glob all", "glob", args{"pattern": "*"}, want{contains: []string{"fifo\n", "ok.txt"}}},
		{"grep all", "grep", args{"pattern": "."}, want{contains: []string{"ok.txt:1: fine"}}},
		{"grep FIFO", "grep", args{"pattern": ".", "path_glob": "fifo"}, want{contains: []string{"[no lines match"}}},
		{"write over FIFO", "write_file", args{"path": "fifo", "content": "x"}, want{isError: true, contains: []string{"already exists"}}},
	}
	if devNull {
		steps = append(steps, step{"read device", "read_file", args{"path": "null"}, want{isError: true, contains: []string{`path "null" is not a regular file (a character device)`}}})
	}
	s.run(t, steps)
}

func TestWriteFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"ro/keep.txt": "k", "exists.txt": "old", "d/f": "f"})
	roDir := filepath.Join(dir, "ro")
	if err := os.Chmod(roDir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(roDir, 0o755) })
	s := newSet(t, dir, filetools.Options{})
	for _, a := range []args{
		{"path": "exists.txt", "content": "new"},
		{"path": "d", "content": "new", "overwrite": true},
		{"path": "d/f/x", "content": "new"},
		{"path": "ro/new.txt", "content": "new"}, // refused unless the test runs as root
	} {
		r := s.call(t, "write_file", a)
		if a["path"] != "ro/new.txt" && !r.IsError {
			t.Errorf("write_file %v: %q, want an error", a, r.Text)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "exists.txt")); string(data) != "old" {
		t.Errorf("exists.txt is %q after a refused write", data)
	}
	noTemp(t, dir)
}
