package workspace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

// TestCopyInputLinks checks the link policy: a link is resolved once,
// beneath the allowed root, and the link-free path it leads to is copied
// when it is a regular file inside the root; links to folders are not
// followed inside a copy, links that leave the root or lead nowhere are
// skipped, and the input named may itself be a link inside the root.
func TestCopyInputLinks(t *testing.T) {
	allowed := t.TempDir()
	other := t.TempDir()
	writeFile(t, allowed, "data.csv", "a,b\n")
	writeFile(t, allowed, "set/one.txt", "1")
	writeFile(t, allowed, "set/sub/two.txt", "22")
	writeFile(t, other, "secret.txt", "secret")
	for link, target := range map[string]string{
		"alias.csv":        "data.csv",
		"setlink":          "set",
		"set/chain.txt":    "hop.txt",
		"set/hop.txt":      "sub/two.txt",
		"set/up.csv":       "../data.csv",
		"set/sub/back.txt": "../one.txt",
		"set/loop":         "loop",
		"set/out.txt":      "../../" + filepath.Base(other) + "/secret.txt",
		"set/abs.txt":      filepath.Join(allowed, "data.csv"),
		"set/nowhere":      "missing.txt",
		"set/subalias":     "sub",
		"set/sub/up":       "..",
	} {
		if err := os.Symlink(target, filepath.Join(allowed, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	w := openTest(t, newTestManager(t, &Options{InputRoots: []string{allowed}}), "s")
	tests := []struct {
		name    string
		input   string
		files   map[string]string // copied, relative to work/inputs
		skipped map[string]string // path below the root: reason
	}{
		{"input is a link to a file", "alias.csv", map[string]string{"alias.csv": "a,b\n"}, nil},
		{"input is a link to a folder", "setlink", map[string]string{
			"setlink/one.txt": "1", "setlink/sub/two.txt": "22", "setlink/chain.txt": "22",
			"setlink/hop.txt": "22", "setlink/up.csv": "a,b\n", "setlink/sub/back.txt": "1",
		}, map[string]string{
			"setlink/loop":     "symbolic link leaves the allowed input root or leads nowhere",
			"setlink/out.txt":  "symbolic link leaves the allowed input root or leads nowhere",
			"setlink/abs.txt":  "symbolic link leaves the allowed input root or leads nowhere",
			"setlink/nowhere":  "symbolic link leaves the allowed input root or leads nowhere",
			"setlink/subalias": "symbolic link to a directory is not followed",
			"setlink/sub/up":   "symbolic link to a directory is not followed",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := w.CopyInput(context.Background(), filepath.Join(allowed, tt.input), "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Files != len(tt.files) {
				t.Errorf("copied %d files, want %d: %+v", res.Files, len(tt.files), res)
			}
			for rel, want := range tt.files {
				if got := readFile(t, filepath.Join(w.InputsDir(), filepath.FromSlash(rel))); got != want {
					t.Errorf("%s = %q, want %q", rel, got, want)
				}
			}
			got := map[string]string{}
			for _, s := range res.Skipped {
				got[s.Path] = s.Reason
			}
			if len(got) != len(tt.skipped) {
				t.Errorf("skipped %v, want %v", got, tt.skipped)
			}
			for p, why := range tt.skipped {
				if got[p] != why {
					t.Errorf("skipped %s: %q, want %q", p, got[p], why)
				}
			}
		})
	}
}

// TestCopyInputSpecialFiles checks that FIFOs, whether met in a folder,
// reached through a link or named as the input, are skipped without being
// opened, so that none can block the copy.
func TestCopyInputSpecialFiles(t *testing.T) {
	allowed := t.TempDir()
	writeFile(t, allowed, "set/one.txt", "1")
	if err := syscall.Mkfifo(filepath.Join(allowed, "set", "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Symlink("pipe", filepath.Join(allowed, "set", "pipelink")); err != nil {
		t.Fatal(err)
	}
	w := openTest(t, newTestManager(t, &Options{InputRoots: []string{allowed}}), "s")
	for _, tt := range []struct {
		input   string
		files   int
		skipped []Skipped
	}{
		{"set", 1, []Skipped{{"set/pipe", "not a regular file or directory"}, {"set/pipelink", "not a regular file or directory"}}},
		{"set/pipe", 0, []Skipped{{"set/pipe", "not a regular file or directory"}}},
		{"set/pipelink", 0, []Skipped{{"set/pipelink", "not a regular file or directory"}}},
	} {
		t.Run(tt.input, func(t *testing.T) {
			res := copyWithin(t, w, filepath.Join(allowed, tt.input))
			if res.Files != tt.files || !slices.Equal(res.Skipped, tt.skipped) {
				t.Errorf("got %d files, skipped %v; want %d, %v", res.Files, res.Skipped, tt.files, tt.skipped)
			}
		})
	}
}

// TestCopyInputChecksOpenedFile lists a file, then puts something else in
// its place before it is copied: the descriptor opened is checked with
// fstat against the listing, so a FIFO is refused without blocking, a link
// is not followed, and another file or size is refused, each with an
// error wrapping ErrInputChanged that names the file.
func TestCopyInputChecksOpenedFile(t *testing.T) {
	tests := []struct {
		name    string
		replace func(t *testing.T, p string) // replaces the listed file p
		want    string
	}{
		{"FIFO", func(t *testing.T, p string) {
			mustDo(t, os.Remove(p))
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, "is not a regular file any more (p---------)"},
		{"link", func(t *testing.T, p string) {
			mustDo(t, os.Remove(p))
			mustDo(t, os.Symlink("other.txt", p))
		}, "was replaced by a symbolic link"},
		{"another file", func(t *testing.T, p string) {
			mustDo(t, os.Rename(filepath.Join(filepath.Dir(p), "other.txt"), p)) // same size
		}, "is another file than the one listed"},
		{"another size", func(t *testing.T, p string) {
			mustDo(t, os.WriteFile(p, []byte("longer than listed"), 0o644))
		}, "was listed with 6 bytes and has 18"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allowed := t.TempDir()
			writeFile(t, allowed, "listed.txt", "listed")
			writeFile(t, allowed, "other.txt", "SECRET")
			w := openTest(t, newTestManager(t, &Options{InputRoots: []string{allowed}}), "s")
			c, done := newTestInputCopy(t, w, allowed)
			defer done()
			var st unix.Stat_t
			mustDo(t, c.lstat("listed.txt", &st))
			tt.replace(t, filepath.Join(allowed, "listed.txt"))
			errc := make(chan error, 1)
			go func() { errc <- c.file(c.rfd, "listed.txt", "listed.txt", "copy.txt", &st) }()
			var err error
			select {
			case err = <-errc:
			case <-time.After(10 * time.Second):
				t.Fatal("copying the replaced file hung")
			}
			host := filepath.Join(allowed, "listed.txt")
			if !errors.Is(err, ErrInputChanged) || !strings.Contains(err.Error(), host) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v; want ErrInputChanged naming %s and saying %q", err, host, tt.want)
			}
			if _, err := os.Lstat(filepath.Join(w.InputsDir(), "copy.txt")); !os.IsNotExist(err) {
				t.Errorf("a copy was made: %v", err)
			}
		})
	}
}

// copyWithin runs CopyInput and fails the test if it errs or takes more
// than 10 seconds (it would block on a FIFO it opened).
func copyWithin(t *testing.T, w *Workspace, input string) *InputResult {
	t.Helper()
	type result struct {
		res *InputResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := w.CopyInput(context.Background(), input, "")
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.res
	case <-time.After(10 * time.Second):
		t.Fatalf("CopyInput %s hung", input)
	}
	return nil
}

// newTestInputCopy sets up what CopyInput sets up before it copies: the
// allowed root opened and work/inputs.
func newTestInputCopy(t *testing.T, w *Workspace, allowed string) (*inputCopy, func()) {
	t.Helper()
	rfd, err := unix.Open(allowed, inputRootFlags, 0)
	mustDo(t, err)
	mustDo(t, os.MkdirAll(w.InputsDir(), 0o755))
	ir, err := os.OpenRoot(w.InputsDir())
	mustDo(t, err)
	c := &inputCopy{w: w, root: allowed, rfd: rfd, ir: ir, res: &InputResult{}, buf: make([]byte, 4096)}
	return c, func() { ir.Close(); unix.Close(rfd) }
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
