package filetools_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/tools/filetools"
)

// set is a tool set under test, its tools by their names inside the set.
type set map[string]tools.Tool

// newSet builds the set over dir with opts (BaseDir set to dir).
func newSet(t testing.TB, dir string, opts filetools.Options) set {
	t.Helper()
	opts.BaseDir = dir
	ts, err := filetools.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	s := set{}
	for _, tool := range ts.Tools {
		s[tool.Name] = tool
	}
	return s
}

// call runs a tool with args (marshalled to JSON) and fails the test on a
// Go error or when the call takes longer than a few seconds (a FIFO that
// blocked, say).
func (s set) call(t testing.TB, tool string, args any) tools.Result {
	t.Helper()
	tl, ok := s[tool]
	if !ok {
		t.Fatalf("no tool %q in the set", tool)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		r   tools.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := tl.Call(context.Background(), tools.Call{Args: raw})
		done <- outcome{r, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("%s(%s): Go error %v", tool, raw, o.err)
		}
		if o.r.IsError && !strings.HasPrefix(o.r.Text, "Error: ") {
			t.Fatalf("%s(%s): error result without \"Error: \": %q", tool, raw, o.r.Text)
		}
		return o.r
	case <-time.After(5 * time.Second):
		t.Fatalf("%s(%s): still running after 5s", tool, raw)
	}
	return tools.Result{}
}

// args is a tool's arguments.
type args = map[string]any

// put writes files (path → content, slashes) beneath dir, which may
// hold files already but none of these.
func put(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	fsys := fstest.MapFS{}
	for rel, data := range files {
		fsys[rel] = &fstest.MapFile{Data: []byte(data), Mode: 0o644}
	}
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
}

// symlink makes a symbolic link at dir/rel pointing to target.
func symlink(t testing.TB, target, dir, rel string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
}

// noTemp fails when write_file left a temporary file anywhere below dir.
func noTemp(t testing.TB, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".filetools-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// check compares a result with the wanted error flag and text: the
// exact text, or with contains every one of its parts.
type want struct {
	isError  bool
	text     string   // exact, when set
	contains []string // each must appear
	excludes []string // none may appear
}

func (w want) check(t testing.TB, what string, r tools.Result) {
	t.Helper()
	if r.IsError != w.isError {
		t.Errorf("%s: IsError = %v, want %v; text:\n%s", what, r.IsError, w.isError, r.Text)
	}
	if w.text != "" && r.Text != w.text {
		t.Errorf("%s: text\n%q\nwant\n%q", what, r.Text, w.text)
	}
	for _, c := range w.contains {
		if !strings.Contains(r.Text, c) {
			t.Errorf("%s: text does not contain %q:\n%s", what, c, r.Text)
		}
	}
	for _, c := range w.excludes {
		if strings.Contains(r.Text, c) {
			t.Errorf("%s: text contains %q:\n%s", what, c, r.Text)
		}
	}
}

// step is one row of a table of calls: a subtest name ("" for the tool's
// name), the tool, its arguments and the result wanted.
type step struct {
	name string
	tool string
	args args
	want want
}

// run runs the steps in order, each as a subtest.
func (s set) run(t *testing.T, steps []step) {
	t.Helper()
	for _, st := range steps {
		t.Run(cmp.Or(st.name, st.tool), func(t *testing.T) { st.want.check(t, st.tool, s.call(t, st.tool, st.args)) })
	}
}
