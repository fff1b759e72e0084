package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/tools"
	"github.com/skillkit/skillkit/workspace"
)

// needIsolation skips the test when the kernel cannot run the isolated
// sandbox, naming the missing feature.
func needIsolation(t *testing.T) {
	t.Helper()
	_, err := sandbox.NewIsolated(&sandbox.IsolatedOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var fe *sandbox.FeatureError
	if errors.As(err, &fe) {
		t.Skipf("isolated sandbox unavailable: kernel feature %q missing: %v", fe.Feature, fe.Err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// execJSON runs `skillkit exec --json ARGS` and decodes the result.
func execJSON(t *testing.T, args ...string) (tools.ExecResult, map[string]any, int) {
	t.Helper()
	out, errOut, code := run(t, append([]string{"exec", "--json"}, args...)...)
	var res tools.ExecResult
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("stdout is not JSON (exit %d, stderr %q): %v\n%s", code, errOut, err, out)
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	return res, m, code
}

func TestExecSkillScriptJSON(t *testing.T) {
	needIsolation(t)
	// With one --skill, the command runs in skills/csv-stats.
	res, m, code := execJSON(t, "--skill", "csv-stats", examples, "--",
		"python3", "scripts/stats.py", "scripts/sample.csv")
	if code != 0 {
		t.Fatalf("exit %d; result %+v", code, res)
	}
	var stats struct {
		Rows int `json:"rows"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &stats); err != nil || stats.Rows != 3 {
		t.Errorf("stdout %q: rows %d (err %v), want 3", res.Stdout, stats.Rows, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"duration_ms", "exit_code", "output_files", "stderr", "stderr_truncated", "stdout", "stdout_truncated", "timed_out"}
	if !slices.Equal(keys, want) {
		t.Errorf("JSON keys = %v, want %v", keys, want)
	}
}

func TestExecExitStatus(t *testing.T) {
	needIsolation(t)
	for _, tc := range []struct {
		name     string
		args     []string
		want     int
		timedOut bool
	}{
		{"success", []string{"--", "true"}, 0, false},
		{"exit 3", []string{"--", "sh", "-c", "exit 3"}, 3, false},
		{"killed by SIGKILL", []string{"--", "sh", "-c", "kill -9 $$"}, 128 + 9, false},
		{"killed by SIGTERM", []string{"--", "sh", "-c", "kill -TERM $$"}, 128 + 15, false},
		// sleep dies of the SIGTERM sent at the deadline.
		{"timeout", []string{"--timeout", "200ms", "--", "sleep", "10"}, 128 + 15, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The exit status equals the JSON exit_code, with and without --json.
			res, _, code := execJSON(t, tc.args...)
			if code != tc.want || res.ExitCode != tc.want || res.TimedOut != tc.timedOut {
				t.Errorf("--json: exit %d, exit_code %d, timed_out %v; want %d, %d, %v", code, res.ExitCode, res.TimedOut, tc.want, tc.want, tc.timedOut)
			}
			_, errOut, code := run(t, append([]string{"exec"}, tc.args...)...)
			if code != tc.want {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.want, errOut)
			}
		})
	}
}

func TestExecCommandNotFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not on PATH", []string{"--", "no-such-command-xyz"}, "skillkit exec: no-such-command-xyz: command not found (searched " + sandbox.DefaultPath + ")"},
		{"missing path", []string{"--", "./no-such-script.sh"}, "skillkit exec: cannot start: ./no-such-script.sh: no such file or directory"},
		{"not executable", []string{"--", "./out"}, "skillkit exec: cannot start: ./out: permission denied"},
		{"missing path, unconfined", []string{"--local", "--", "./no-such-script.sh"}, "skillkit exec: cannot start: ./no-such-script.sh: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !slices.Contains(tc.args, "--local") {
				needIsolation(t)
			}
			out, errOut, code := run(t, append([]string{"exec", "--json"}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			last := lines[len(lines)-1]
			if code != execNotFoundStatus || out != "" || !strings.HasPrefix(last, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and a line starting %q", code, out, errOut, execNotFoundStatus, tc.want)
			}
			for _, bad := range []string{"Spec.", "sandbox: sandbox", "sandbox: run"} {
				if strings.Contains(errOut, bad) {
					t.Errorf("stderr %q mentions %q", errOut, bad)
				}
			}
		})
	}
}

func TestExecCwdAndSkillName(t *testing.T) {
	needIsolation(t)
	show := []string{"--", "sh", "-c", `printf '%s|%s' "$(pwd)" "${SKILL_NAME-unset}"`}
	for _, tc := range []struct {
		name  string
		flags []string
		dir   string // relative to WORKSPACE_DIR
		skill string
	}{
		{"no skill", nil, "", "unset"},
		{"one skill", []string{"--skill", "csv-stats", examples}, "/skills/csv-stats", "csv-stats"},
		{"one skill, --cwd", []string{"--skill", "csv-stats", "--cwd", "out", examples}, "/out", "unset"},
		{"one skill, --cwd in it", []string{"--skill", "csv-stats", "--cwd", "skills/csv-stats/scripts", examples}, "/skills/csv-stats/scripts", "csv-stats"},
		{"two skills", []string{"--skill", "csv-stats", "--skill", "release-notes", examples}, "", "unset"},
		{"two skills, --cwd", []string{"--skill", "csv-stats", "--skill", "release-notes", "--cwd", "skills/release-notes", examples}, "/skills/release-notes", "release-notes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			unmountAfter(t, ws)
			args := append(append([]string{"--workspace", ws}, tc.flags...), show...)
			res, _, code := execJSON(t, args...)
			// The sandbox shows the workspace at sandbox.WorkspaceDir.
			want := sandbox.WorkspaceDir + tc.dir + "|" + tc.skill
			if code != 0 || res.Stdout != want {
				t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, res.Stdout, res.Stderr, want)
			}
		})
	}
}

func TestExecOutputGlob(t *testing.T) {
	needIsolation(t)
	res, _, code := execJSON(t, "--output", "out/*.txt", "--", "sh", "-c", "echo hi > out/a.txt; echo 1,2 > out/b.csv")
	want := []workspace.OutputFile{{Path: "out/a.txt", Size: 3, MIME: "text/plain; charset=utf-8", Content: "hi\n"}}
	if code != 0 || !slices.Equal(res.OutputFiles, want) {
		t.Errorf("exit %d, output_files %+v; want 0, %+v", code, res.OutputFiles, want)
	}
}

func TestExecPlainOutput(t *testing.T) {
	needIsolation(t)
	out, errOut, code := run(t, "exec", "--output", "out/**", "--", "sh", "-c", "echo to-stdout; echo to-stderr >&2; echo x > out/f.txt")
	if code != 0 || out != "to-stdout\n" {
		t.Errorf("exit %d, stdout %q; want 0, %q", code, out, "to-stdout\n")
	}
	wantErr := "to-stderr\n" +
		"skillkit exec: output out/f.txt (2 bytes, text/plain; charset=utf-8)\n" +
		"skillkit exec: the temporary workspace is removed; use --workspace DIR to keep the files or --json for their text\n"
	if errOut != wantErr {
		t.Errorf("stderr %q, want %q", errOut, wantErr)
	}

	_, errOut, code = run(t, "exec", "--timeout", "100ms", "--", "sleep", "5")
	if code != 128+15 || errOut != "skillkit exec: timed out after 100ms (--timeout); the command was killed\n" {
		t.Errorf("timeout: exit %d, stderr %q", code, errOut)
	}
}

func TestExecWorkspaceKeptOrRemoved(t *testing.T) {
	needIsolation(t)
	// A fresh workspace is gone afterwards: nothing is left of the
	// temporary root this process made.
	res, _, code := execJSON(t, "--", "sh", "-c", `echo x > out/x.txt && printf %s "$WORKSPACE_DIR"`)
	if code != 0 || res.Stdout != sandbox.WorkspaceDir {
		t.Fatalf("exit %d, stdout %q", code, res.Stdout)
	}
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "skillkit-workspaces-"+strconv.Itoa(os.Getpid())+"-*")); len(left) != 0 {
		t.Errorf("temporary workspace roots left: %v", left)
	}
	// A given one is kept, with what the command wrote.
	dir := filepath.Join(t.TempDir(), "ws")
	unmountAfter(t, dir)
	if _, errOut, code := run(t, "exec", "--workspace", dir, "--skill", "csv-stats", examples, "--", "sh", "-c", "echo kept > $OUTPUT_DIR/k.txt"); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, p := range []string{"out/k.txt", "skills/csv-stats/scripts/stats.py"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("--workspace %s: %v", dir, err)
		}
	}
}

// runCache runs skillkit with XDG_CACHE_HOME set to cache.
func runCache(t *testing.T, cache string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string {
		if k == "XDG_CACHE_HOME" {
			return cache
		}
		return ""
	}
	code = Run(context.Background(), args, Env{Stdout: &out, Stderr: &errb, Getenv: getenv, Cwd: t.TempDir()})
	return out.String(), errb.String(), code
}

// TestExecWorkspaceLeavesNeighboursAlone checks that --workspace DIR writes
// nothing next to DIR, never removes DIR's idle siblings and never adopts a
// folder of the user's.
func TestExecWorkspaceLeavesNeighboursAlone(t *testing.T) {
	parent, cache := t.TempDir(), t.TempDir()
	unmountAfter(t, filepath.Join(parent, "old"), filepath.Join(parent, "ws"), filepath.Join(parent, "empty"))
	// An earlier --workspace, idle for two days, and a user folder.
	writeTestFile(t, filepath.Join(parent, "mine", "notes.txt"), "mine")
	if _, errOut, code := runCache(t, cache, "exec", "--local", "--workspace", filepath.Join(parent, "old"), "--", "true"); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	old := time.Now().Add(-48 * time.Hour)
	err := filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(parent, "ws")
	for range 2 { // created, then reopened
		if _, errOut, code := runCache(t, cache, "exec", "--local", "--workspace", ws, "--", "sh", "-c", "echo x > out/x.txt"); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	}
	entries, _ := os.ReadDir(parent)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"mine", "old", "ws"}; !slices.Equal(names, want) {
		t.Errorf("entries next to --workspace = %v, want %v (nothing written beside it, no sibling removed)", names, want)
	}
	sum := sha256.Sum256([]byte(parent))
	record := filepath.Join(cache, "skillkit", "workspace-meta", hex.EncodeToString(sum[:]), "ws")
	if info, err := os.Stat(record); err != nil || !info.IsDir() {
		t.Errorf("no workspace record at %s: %v", record, err)
	}
	// A non-empty folder that no --workspace run created is refused.
	_, errOut, code := runCache(t, cache, "exec", "--local", "--workspace", filepath.Join(parent, "mine"), "--", "sh", "-c", "rm -f notes.txt")
	if code != 2 || !strings.Contains(errOut, "--workspace") || !strings.Contains(errOut, "is not empty and was not created by skillkit exec --workspace; pass a new or empty directory") {
		t.Errorf("foreign folder: exit %d, stderr %q", code, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(parent, "mine", "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("user file changed: %q, %v", b, err)
	}
	// An empty folder is adopted.
	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCache(t, cache, "exec", "--local", "--workspace", empty, "--", "true"); code != 0 {
		t.Errorf("empty folder: exit %d, stderr %q", code, errOut)
	}
}

// unmountAfter unmounts, when the test ends, the volume that skillkit run
// as root leaves mounted at each --workspace dir.
func unmountAfter(t *testing.T, dirs ...string) {
	t.Cleanup(func() {
		for _, d := range dirs {
			_ = unix.Unmount(d, unix.MNT_DETACH)
		}
	})
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestExecNetworkFlag(t *testing.T) {
	needIsolation(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf("import socket; socket.create_connection(('127.0.0.1', %d), timeout=2); print('connected')", port)
	for _, tc := range []struct {
		flags []string
		want  int
	}{{nil, 1}, {[]string{"--network"}, 0}} {
		args := append(append([]string{"exec"}, tc.flags...), "--", "python3", "-c", script)
		out, errOut, code := run(t, args...)
		if code != tc.want {
			t.Errorf("%v: exit %d, want %d; stdout %q stderr %q", tc.flags, code, tc.want, out, errOut)
		}
	}
}

func TestExecLocalWarns(t *testing.T) {
	out, errOut, code := run(t, "exec", "--local", "--", "sh", "-c", "echo hi")
	if code != 0 || out != "hi\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errOut, "WARNING: --local runs the command UNCONFINED") || !strings.Contains(errOut, "level=WARN") {
		t.Errorf("stderr %q lacks the unconfined warnings", errOut)
	}
}

func TestExecBadArguments(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown skill", []string{"exec", "--skill", "nope", examples, "--", "true"}, `--skill "nope": no such skill`},
		{"skill twice", []string{"exec", "--skill", "csv-stats", "--skill", "csv-stats", examples, "--", "true"}, `--skill "csv-stats" is given twice`},
		{"no dash", []string{"exec", "true"}, "no COMMAND; put it after --"},
		{"nothing after dash", []string{"exec", "--"}, "no COMMAND"},
		{"roots without skill", []string{"exec", examples, "--", "true"}, "without --skill"},
		{"zero timeout", []string{"exec", "--timeout", "0s", "--", "true"}, "--timeout is 0s"},
		{"bad output glob", []string{"exec", "--local", "--output", "out/**", "--output", "../x", "--", "true"}, `--output: workspace: invalid glob: "../x" contains '..'`},
		{"absolute output glob", []string{"exec", "--local", "--output", "/etc/*", "--", "true"}, `--output: workspace: invalid glob: "/etc/*" is absolute`},
		{"invalid output glob", []string{"exec", "--local", "--output", "out/[", "--", "true"}, `--output: workspace: invalid glob: "out/[" is not a valid pattern`},
		{"cwd with dots", []string{"exec", "--local", "--cwd", "out/../..", "--", "true"}, `--cwd "out/../.." contains ".."`},
		{"absolute cwd", []string{"exec", "--local", "--cwd", "/tmp", "--", "true"}, `--cwd "/tmp" is absolute`},
		{"local with network", []string{"exec", "--local", "--network", "--", "true"}, "--network only applies to the sandbox"},
		{"bad workspace name", []string{"exec", "--local", "--workspace", "/tmp/has space", "--", "true"}, `--workspace "/tmp/has space"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}
