package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCopyInput(t *testing.T) {
	allowed := t.TempDir()
	other := t.TempDir()
	writeFile(t, allowed, "data.csv", "a,b\n")
	writeFile(t, allowed, "set/one.txt", "1")
	writeFile(t, allowed, "set/sub/two.txt", "22")
	writeFile(t, other, "secret.txt", "secret")
	os.Symlink(filepath.Join(other, "secret.txt"), filepath.Join(allowed, "set", "leak.txt"))
	os.Symlink("one.txt", filepath.Join(allowed, "set", "alias.txt"))
	os.Symlink("sub", filepath.Join(allowed, "set", "subalias"))
	os.Symlink(other, filepath.Join(allowed, "otherlink"))

	w := openTest(t, newTestManager(t, &Options{InputRoots: []string{allowed}}), "s")
	ctx := context.Background()

	res, err := w.CopyInput(ctx, filepath.Join(allowed, "data.csv"), "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != "work/inputs/data.csv" || res.Files != 1 || res.Bytes != 4 {
		t.Errorf("file input = %+v", res)
	}
	if got := readFile(t, filepath.Join(w.InputsDir(), "data.csv")); got != "a,b\n" {
		t.Errorf("copied = %q", got)
	}

	res, err = w.CopyInput(ctx, filepath.Join(allowed, "set"), "batch/set")
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 3 || res.Bytes != 4 || len(res.Skipped) != 2 {
		t.Errorf("dir input = %+v", res)
	}
	dst := filepath.Join(w.InputsDir(), "batch", "set")
	for rel, want := range map[string]string{"one.txt": "1", "sub/two.txt": "22", "alias.txt": "1"} {
		if got := readFile(t, filepath.Join(dst, rel)); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(dst, "leak.txt")); !os.IsNotExist(err) {
		t.Error("link out of the allowed root was copied")
	}
	// The skill-relative alias inputs/<path> reaches the copy.
	src := t.TempDir()
	writeFile(t, src, "SKILL.md", "s")
	stage(t, w, "k", os.DirFS(src))
	if got := readFile(t, filepath.Join(w.SkillsDir(), "k", "inputs", "data.csv")); got != "a,b\n" {
		t.Errorf("inputs link: %q", got)
	}

	// The allowed root itself may be copied.
	if res, err := w.CopyInput(ctx, allowed, "all"); err != nil || res.Files != 4 {
		t.Errorf("copy of the allowed root = %+v, %v", res, err)
	}

	denied := []struct{ name, host, dest string }{
		{"outside roots", filepath.Join(other, "secret.txt"), ""},
		{"dot-dot out of root", filepath.Join(allowed, "..", filepath.Base(other), "secret.txt"), ""},
		{"link out of root", filepath.Join(allowed, "otherlink", "secret.txt"), ""},
		{"root's parent", filepath.Dir(allowed), ""},
	}
	for _, tt := range denied {
		_, err := w.CopyInput(ctx, tt.host, tt.dest)
		if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), tt.host) {
			t.Errorf("%s: err = %v, want ErrNotAllowed naming %s", tt.name, err, tt.host)
		}
	}
	for _, dest := range []string{"../escape", "/abs", "a/../../b"} {
		if _, err := w.CopyInput(ctx, filepath.Join(allowed, "data.csv"), dest); !errors.Is(err, ErrEscape) {
			t.Errorf("dest %q: err = %v, want ErrEscape", dest, err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.WorkDir(), "escape")); !os.IsNotExist(err) {
		t.Error("escaping destination was written")
	}

	none := openTest(t, newTestManager(t, nil), "s")
	if _, err := none.CopyInput(ctx, filepath.Join(allowed, "data.csv"), ""); !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), "InputRoots") {
		t.Errorf("no roots: err = %v", err)
	}
}

func TestCopyInputLimits(t *testing.T) {
	allowed := t.TempDir()
	writeFile(t, allowed, "set/a", "12345")
	writeFile(t, allowed, "set/b", "67890")
	tests := []struct {
		name  string
		opts  Options
		field string
	}{
		{"files at limit", Options{MaxInputFiles: 2}, ""},
		{"files past limit", Options{MaxInputFiles: 1}, "MaxInputFiles"},
		{"bytes at limit", Options{MaxInputBytes: 10}, ""},
		{"bytes past limit", Options{MaxInputBytes: 9}, "MaxInputBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.InputRoots = []string{allowed}
			w := openTest(t, newTestManager(t, &tt.opts), "s")
			_, err := w.CopyInput(context.Background(), filepath.Join(allowed, "set"), "")
			if tt.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("err = %v, want ErrLimit naming %s", err, tt.field)
			}
			if _, err := os.Stat(filepath.Join(w.InputsDir(), "set")); !os.IsNotExist(err) {
				t.Error("partial input left behind")
			}
		})
	}
}
