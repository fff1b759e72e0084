package workspace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestCheckInputDest(t *testing.T) {
	for _, tc := range []struct {
		dest, want string // want "" means refused, with why in the message
		why        string
	}{
		{dest: "data.csv", want: "data.csv"},
		{dest: "dir/data.csv", want: "dir/data.csv"},
		{dest: "./a//b", want: "a/b"},
		{dest: "a=b", want: "a=b"},
		{dest: "", why: "is empty"},
		{dest: "/etc/passwd", why: "is absolute"},
		{dest: "../x", why: `contains ".."`},
		{dest: "a/../b", why: `contains ".."`},
		{dest: "a/..", why: `contains ".."`},
		{dest: `a\b`, why: "backslash"},
		{dest: "a\x00b", why: "NUL"},
		{dest: "dir/", why: "ends with '/'"},
		{dest: ".", why: "names work/inputs itself"},
		{dest: "./", why: "ends with '/'"},
		{dest: strings.Repeat("a", 255), want: strings.Repeat("a", 255)},
		{dest: strings.Repeat("a/", 511) + "bb", want: strings.Repeat("a/", 511) + "bb"}, // 1024 bytes
		{dest: strings.Repeat("a", 256), why: "has a name of 256 bytes; file systems allow at most 255"},
		{dest: "d/" + strings.Repeat("a", 256) + "/x", why: "has a name of 256 bytes"},
		{dest: strings.Repeat("a/", 600) + "x", why: "is 1201 bytes; use at most 1024"},
	} {
		got, err := CheckInputDest(tc.dest)
		switch {
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("CheckInputDest(%q) = %q, %v; want %q", tc.dest, got, err, tc.want)
		case tc.want == "" && (!errors.Is(err, ErrEscape) && !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("CheckInputDest(%q) = %q, %v; want ErrEscape or ErrInvalidName saying %q", tc.dest, got, err, tc.why)
		case tc.want == "" && errors.Is(err, ErrEscape) != (strings.Contains(tc.why, "..") || strings.Contains(tc.why, "absolute")):
			t.Errorf("CheckInputDest(%q): %v; only absolute paths and '..' are escapes", tc.dest, err)
		}
	}
}

func TestInputDestConflict(t *testing.T) {
	for _, tc := range []struct {
		dests        []string
		outer, inner int
		ok           bool
	}{
		{nil, 0, 0, false},
		{[]string{"a", "b", "ab", "a.b", "c/a", "bb/a"}, 0, 0, false},
		{[]string{"a", "b", "a"}, 0, 2, true},
		{[]string{"x/y/z", "x"}, 1, 0, true},
		{[]string{"x/y", "x/y/z"}, 0, 1, true},
		{[]string{"x/y", "x/yz"}, 0, 0, false},
	} {
		outer, inner, ok := InputDestConflict(tc.dests)
		if ok != tc.ok || ok && (outer != tc.outer || inner != tc.inner) {
			t.Errorf("InputDestConflict(%q) = %d, %d, %v; want %d, %d, %v", tc.dests, outer, inner, ok, tc.outer, tc.inner, tc.ok)
		}
	}
}

// openInputFile opens p for CopyInputFiles, closed when the test ends.
func openInputFile(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// inputFile and inputDir describe entries as copyTree does.
func inputFile(mode os.FileMode, content string) string {
	return fmt.Sprintf("file %v %q", mode, content)
}

var inputDir = fmt.Sprintf("dir %v", os.FileMode(0o755))

func TestCopyInputFiles(t *testing.T) {
	host := t.TempDir()
	writeFile(t, host, "data.csv", "a,b\n")
	writeFile(t, host, "ten", "0123456789")
	writeFile(t, host, "eleven", "0123456789a")
	writeFile(t, host, "run.sh", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(host, "run.sh"), 0o700); err != nil {
		t.Fatal(err)
	}
	w := openTest(t, newTestManager(t, &Options{MaxInputBytes: 10}), "s")
	ctx := context.Background()
	in := func(name, dest string) InputFile {
		return InputFile{File: openInputFile(t, filepath.Join(host, name)), Dest: dest}
	}

	// A file read to its end before (offset 1) is copied whole.
	data := in("data.csv", "data.csv")
	if _, err := data.File.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	res, err := w.CopyInputFiles(ctx, []InputFile{data, in("ten", "sub/dir/ten"), in("run.sh", "run.sh")})
	if err != nil {
		t.Fatal(err)
	}
	want := []InputResult{
		{Path: "work/inputs/data.csv", Files: 1, Bytes: 4},
		{Path: "work/inputs/sub/dir/ten", Files: 1, Bytes: 10}, // exactly MaxInputBytes
		{Path: "work/inputs/run.sh", Files: 1, Bytes: 10},
	}
	if !slices.EqualFunc(res, want, func(a, b InputResult) bool { return a.Path == b.Path && a.Files == b.Files && a.Bytes == b.Bytes }) {
		t.Errorf("results = %+v, want %+v", res, want)
	}
	tree := map[string]string{"data.csv": inputFile(0o644, "a,b\n"), "sub": inputDir, "sub/dir": inputDir,
		"sub/dir/ten": inputFile(0o644, "0123456789"), "run.sh": inputFile(0o755, "#!/bin/sh\n")}
	if got := copyTree(t, w.InputsDir()); !maps.Equal(got, tree) {
		t.Errorf("work/inputs = %v, want %v", got, tree)
	}
	// A file and a folder at a Dest are replaced.
	if _, err := w.CopyInputFiles(ctx, []InputFile{in("ten", "data.csv"), in("data.csv", "sub")}); err != nil {
		t.Fatal(err)
	}
	tree = map[string]string{"data.csv": inputFile(0o644, "0123456789"), "sub": inputFile(0o644, "a,b\n"), "run.sh": inputFile(0o755, "#!/bin/sh\n")}
	if got := copyTree(t, w.InputsDir()); !maps.Equal(got, tree) {
		t.Errorf("after replacing: work/inputs = %v, want %v", got, tree)
	}

	// Refused calls leave work/inputs as it was: the first, valid file
	// of each is not placed either.
	dir := openInputFile(t, host)
	fifo := filepath.Join(host, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		files []InputFile
		want  string
		is    error
	}{
		{"one byte over the limit", ctx, []InputFile{in("data.csv", "new"), in("eleven", "eleven")}, "has 11 bytes, more than 10 (Options.MaxInputBytes)", ErrLimit},
		{"directory", ctx, []InputFile{in("data.csv", "new"), {File: dir, Dest: "d"}}, "is not a regular file", nil},
		{"FIFO", ctx, []InputFile{in("data.csv", "new"), {File: openInputFile(t, fifo), Dest: "f"}}, "is not a regular file", nil},
		{"escaping Dest", ctx, []InputFile{in("data.csv", "new"), in("ten", "../ten")}, `contains ".."`, ErrEscape},
		{"duplicate Dest", ctx, []InputFile{in("data.csv", "new"), in("ten", "./new")}, `"new" and "new" collide`, nil},
		{"Dest inside another", ctx, []InputFile{in("data.csv", "new"), in("ten", "new/ten")}, `"new" and "new/ten" collide`, nil},
		{"cancelled", cancelled, []InputFile{in("data.csv", "new")}, "context canceled", context.Canceled},
	} {
		_, err := w.CopyInputFiles(tc.ctx, tc.files)
		if err == nil || !strings.Contains(err.Error(), tc.want) || tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: error %v; want one saying %q (wrapping %v)", tc.name, err, tc.want, tc.is)
		}
		if got := copyTree(t, w.InputsDir()); !maps.Equal(got, tree) {
			t.Errorf("%s: work/inputs = %v, want it unchanged: %v", tc.name, got, tree)
		}
	}
}

// TestCopyInputFilesChanged copies a file whose size changes under the
// copy: a /proc file, listed with 0 bytes, that has content.
func TestCopyInputFilesChanged(t *testing.T) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skipf("needs /proc: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
		t.Skipf("needs /proc files listed with size 0: %v, %v", fi, err)
	}
	w := openTest(t, newTestManager(t, nil), "s")
	_, err = w.CopyInputFiles(context.Background(), []InputFile{{File: f, Dest: "status"}})
	if !errors.Is(err, ErrInputChanged) || !strings.Contains(err.Error(), "/proc/self/status had 0 bytes when it was opened") {
		t.Errorf("error %v, want ErrInputChanged naming the file", err)
	}
	if got := copyTree(t, w.InputsDir()); len(got) != 0 {
		t.Errorf("work/inputs = %v, want it empty", got)
	}
}

// TestCopyInputFilesPlantedLink copies to a Dest below a link a command
// planted in work/inputs that leads out of the workspace: the copy stays
// inside or fails, and nothing is written outside.
func TestCopyInputFilesPlantedLink(t *testing.T) {
	host, outside := t.TempDir(), t.TempDir()
	writeFile(t, host, "data.csv", "a,b\n")
	w := openTest(t, newTestManager(t, nil), "s")
	if err := os.Symlink(outside, filepath.Join(w.InputsDir(), "out")); err != nil {
		t.Fatal(err)
	}
	f := openInputFile(t, filepath.Join(host, "data.csv"))
	_, err := w.CopyInputFiles(context.Background(), []InputFile{{File: f, Dest: "out/data.csv"}})
	if err == nil {
		t.Error("copy through a link out of the workspace succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the workspace: %v", entries)
	}
}
