package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	res, m, code := execJSON(t, "--skill", "csv-stats", examples, "--",
		"python3", "skills/csv-stats/scripts/stats.py", "skills/csv-stats/scripts/sample.csv")
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
		name string
		args []string
		want int
	}{
		{"success", []string{"--", "true"}, 0},
		{"exit 3", []string{"--", "sh", "-c", "exit 3"}, 3},
		{"exit 3 with --json", []string{"--json", "--", "sh", "-c", "exit 3"}, 3},
		{"killed by SIGKILL", []string{"--", "sh", "-c", "kill -9 $$"}, 128 + 9},
		{"timeout", []string{"--timeout", "200ms", "--", "sleep", "10"}, execTimeoutStatus},
		{"command not found", []string{"--", "no-such-command-xyz"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, append([]string{"exec"}, tc.args...)...)
			if code != tc.want {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.want, errOut)
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
	if code != execTimeoutStatus || errOut != "skillkit exec: timed out after 100ms (--timeout); the command was killed\n" {
		t.Errorf("timeout: exit %d, stderr %q", code, errOut)
	}
}

func TestExecWorkspaceKeptOrRemoved(t *testing.T) {
	needIsolation(t)
	// A fresh workspace is gone afterwards.
	res, _, code := execJSON(t, "--", "sh", "-c", `printf %s "$WORKSPACE_DIR"`)
	if code != 0 || res.Stdout == "" {
		t.Fatalf("exit %d, stdout %q", code, res.Stdout)
	}
	if _, err := os.Stat(res.Stdout); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary workspace %s still exists (stat error %v)", res.Stdout, err)
	}
	// A given one is kept, with what the command wrote.
	dir := filepath.Join(t.TempDir(), "ws")
	if _, errOut, code := run(t, "exec", "--workspace", dir, "--skill", "csv-stats", examples, "--", "sh", "-c", "echo kept > out/k.txt"); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, p := range []string{"out/k.txt", "skills/csv-stats/scripts/stats.py"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("--workspace %s: %v", dir, err)
		}
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
		{"bad output glob", []string{"exec", "--local", "--output", "../x", "--", "true"}, `output_files[0] "../x": contains ".."`},
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
