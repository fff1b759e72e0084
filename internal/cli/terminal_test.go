package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skillkit/skillkit/sandbox"
)

// hostileSkill writes a skill whose description, body and folder path
// carry terminal escapes and a bidi override, and returns its root.
func hostileSkill(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root\x1b]0;pwned\x07")
	writeSkill(t, root, "evil", "---\nname: evil\ndescription: \"Red \\e[31mtext and \\u202eright\"\n---\nBody \x1b[2J here\n")
	return root
}

// rawControls are the sequences hostileSkill and the commands below print.
var rawControls = []string{"\x1b", "\x07", "\u202e", "\u009b"}

// runTerm runs the command line with Stdout and Stderr reported as
// terminals or not.
func runTerm(t *testing.T, stdoutTTY, stderrTTY bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Cwd: t.TempDir(),
		IsTerminal: func(w io.Writer) bool { return w == io.Writer(&out) && stdoutTTY || w == io.Writer(&errb) && stderrTTY }}
	code = Run(context.Background(), args, env)
	return out.String(), errb.String(), code
}

// TestTerminalEscaping runs the commands that print skill- or
// command-controlled text: on a terminal no raw control sequence gets
// through and the escape is visible; elsewhere the bytes are exact.
func TestTerminalEscaping(t *testing.T) {
	root := hostileSkill(t)
	store := filepath.Join(t.TempDir(), "s.db")
	id, errOut, code := run(t, "session", "new", "--store", store, root)
	if code != 0 {
		t.Fatalf("session new: exit %d, %s", code, errOut)
	}
	id = strings.TrimSpace(id)
	if _, errOut, code := run(t, "session", "user", "--store", store, id, "hi \x1b[8mhidden\u202e"); code != 0 {
		t.Fatalf("session user: exit %d, %s", code, errOut)
	}
	tests := []struct {
		name    string
		args    []string
		stdout  string // escaped text expected on a terminal
		raw     string // the same text as the command prints it elsewhere
		wantErr bool
	}{
		{"list", []string{"list", root}, `root\x1b]0;pwned\x07/evil`, "root\x1b]0;pwned\x07/evil", false},
		{"catalog", []string{"catalog", root}, `Red \x1b[31mtext and \u202eright`, "Red \x1b[31mtext and \u202eright", false},
		{"show", []string{"show", "evil", root}, `Body \x1b[2J here`, "Body \x1b[2J here", false},
		{"session show", []string{"session", "show", "--store", store, id}, `hi \x1b[8mhidden\u202e`, "hi \x1b[8mhidden\u202e", false},
		{"session call", []string{"session", "call", "--store", store, id, "skill", `{"name":"evil"}`}, `Body \x1b[2J here`, "Body \x1b[2J here", false},
		{"exec", []string{"exec", "--local", "--", "printf", `a\033[31mb\302\233c\342\200\256d`}, `a\x1b[31mb\u009bc\u202ed`, "a\x1b[31mb\u009bc\u202ed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runTerm(t, true, false, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("terminal stdout lacks %q:\n%s", tt.stdout, out)
			}
			for _, c := range rawControls {
				if strings.Contains(out, c) {
					t.Errorf("terminal stdout holds a raw %q:\n%q", c, out)
				}
			}
			plain, _, code := runTerm(t, false, false, tt.args...)
			if code != 0 || !strings.Contains(plain, tt.raw) {
				t.Errorf("redirected stdout (exit %d) lacks the exact bytes %q:\n%q", code, tt.raw, plain)
			}
		})
	}
}

// TestTerminalEscapingStderr checks stderr on its own: the command's
// stderr and skillkit's messages are escaped when stderr is a terminal,
// whatever stdout is.
func TestTerminalEscapingStderr(t *testing.T) {
	args := []string{"exec", "--local", "--", "sh", "-c", `printf 'out\033[1m'; printf 'err\033[1m\342\200\256' >&2`}
	out, errOut, code := runTerm(t, false, true, args...)
	if code != 0 || out != "out\x1b[1m" {
		t.Errorf("exit %d, stdout %q; want exact bytes", code, out)
	}
	if !strings.Contains(errOut, `err\x1b[1m\u202e`) || strings.ContainsAny(errOut, "\x1b\u202e") {
		t.Errorf("stderr %q, want escapes", errOut)
	}
	_, errOut, code = runTerm(t, false, true, "list", filepath.Join(t.TempDir(), "missing\x1b[31m"))
	if code != 2 || !strings.Contains(errOut, `missing\x1b[31m`) || strings.Contains(errOut, "\x1b") {
		t.Errorf("exit %d, stderr %q; want the path escaped", code, errOut)
	}
}

// TestExecTimeoutCeiling checks --timeout against the maximum (at and
// past it) and that the runner's ceiling is lowered to the flag, never
// raised.
func TestExecTimeoutCeiling(t *testing.T) {
	for _, tc := range []struct {
		timeout string
		code    int
		want    string
	}{
		{"10m", 0, ""},
		{"10m0.000000001s", 2, "exec: --timeout 10m0.000000001s is longer than the maximum 10m0s; pass at most 10m0s"},
		{"100h", 2, "exec: --timeout 100h0m0s is longer than the maximum 10m0s; pass at most 10m0s"},
	} {
		_, errOut, code := run(t, "exec", "--local", "--timeout", tc.timeout, "--", "true")
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("--timeout %s: exit %d, stderr %q; want %d and %q", tc.timeout, code, errOut, tc.code, tc.want)
		}
	}
	var sink bytes.Buffer
	for _, local := range []bool{true, false} {
		for _, d := range []time.Duration{time.Second, execMaxTimeout} {
			if !local {
				needIsolation(t)
			}
			r, err := execRunner(&Env{Stderr: &sink}, execFlags{timeout: d, local: local}, "exec", "the command")
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := r.(interface{ MaxTimeout() time.Duration }); ok {
				if got := c.MaxTimeout(); got != d {
					t.Errorf("local %v, --timeout %v: runner ceiling %v", local, d, got)
				}
				continue
			}
			// A runner that does not report its ceiling refuses a longer
			// Spec.Timeout before running anything.
			_, err = r.Run(context.Background(), sandbox.Spec{Args: []string{"true"}, Workspace: t.TempDir(), Timeout: d + time.Nanosecond})
			if !errors.Is(err, sandbox.ErrInvalidSpec) || !strings.Contains(err.Error(), "MaxTimeout "+d.String()) {
				t.Errorf("local %v, --timeout %v: Run with a longer timeout: %v; want ErrInvalidSpec naming MaxTimeout %v", local, d, err, d)
			}
		}
	}
}
