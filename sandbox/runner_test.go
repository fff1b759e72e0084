package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSpecValidation(t *testing.T) {
	ws := t.TempDir()
	ok := Spec{Args: []string{"/bin/true"}, Workspace: ws}
	cases := []struct {
		name  string
		mod   func(s *Spec)
		field string
	}{
		{"no args", func(s *Spec) { s.Args = nil }, "Spec.Args"},
		{"no workspace", func(s *Spec) { s.Workspace = "" }, "Spec.Workspace"},
		{"missing workspace", func(s *Spec) { s.Workspace = filepath.Join(ws, "nope") }, "Spec.Workspace"},
		{"negative timeout", func(s *Spec) { s.Timeout = -time.Second }, "Spec.Timeout"},
		{"timeout above max", func(s *Spec) { s.Timeout = DefaultMaxTimeout + time.Second }, "MaxTimeout"},
		{"negative cpu", func(s *Spec) { s.Limits.CPUSeconds = -1 }, "Limits.CPUSeconds"},
		{"negative address space", func(s *Spec) { s.Limits.AddressSpace = -1 }, "Limits.AddressSpace"},
		{"negative processes", func(s *Spec) { s.Limits.Processes = -1 }, "Limits.Processes"},
		{"negative file size", func(s *Spec) { s.Limits.FileSize = -1 }, "Limits.FileSize"},
		{"negative open files", func(s *Spec) { s.Limits.OpenFiles = -1 }, "Limits.OpenFiles"},
		{"negative output", func(s *Spec) { s.Limits.OutputBytes = -1 }, "Limits.OutputBytes"},
		{"relative read-only", func(s *Spec) { s.ReadOnly = []string{"rel"} }, "Spec.ReadOnly[0]"},
		{"bad env key", func(s *Spec) { s.Env = map[string]string{"A=B": "x"} }, "Spec.Env"},
		{"HOME in tool env", func(s *Spec) { s.ToolEnv = map[string]string{"HOME": "/"} }, `"HOME"`},
		{"BASH_ENV in tool env", func(s *Spec) { s.ToolEnv = map[string]string{"BASH_ENV": "/x"} }, `"BASH_ENV"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := ok
			tc.mod(&s)
			_, err := prepare(s, DefaultMaxTimeout, view{})
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want one naming %s", err, tc.field)
			}
		})
	}
	p, err := prepare(ok, DefaultMaxTimeout, view{})
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{CPUSeconds: DefaultCPUSeconds, AddressSpace: DefaultAddressSpace, Memory: DefaultMemory, Processes: DefaultProcesses,
		FileSize: DefaultFileSize, OpenFiles: DefaultOpenFiles, OutputBytes: DefaultOutputBytes, DiskBytes: DefaultDiskBytes, DiskInodes: DefaultDiskInodes}
	if p.limits != want || p.timeout != DefaultTimeout {
		t.Errorf("defaults: %+v %v", p.limits, p.timeout)
	}
	if _, err := prepare(Spec{Args: []string{"/bin/true"}, Workspace: ws, Timeout: DefaultMaxTimeout}, DefaultMaxTimeout, view{}); err != nil {
		t.Errorf("timeout exactly at MaxTimeout rejected: %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	if _, err := NewUnconfinedLocal(&LocalOptions{KillGrace: -1}); err == nil || !strings.Contains(err.Error(), "KillGrace") {
		t.Errorf("local negative KillGrace: %v", err)
	}
	if _, err := NewIsolated(&IsolatedOptions{MaxTimeout: -1}); err == nil || !strings.Contains(err.Error(), "MaxTimeout") {
		t.Errorf("isolated negative MaxTimeout: %v", err)
	}
}

func TestIsolatedMissingCgroups(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the pids cgroup is only required when running as root")
	}
	_, err := NewIsolated(&IsolatedOptions{PidsCgroup: t.TempDir()})
	var fe *FeatureError
	if !errors.As(err, &fe) || fe.Feature != FeatureCgroups {
		t.Fatalf("err = %v, want *FeatureError for %q", err, FeatureCgroups)
	}
	r, err := NewIsolated(&IsolatedOptions{PidsCgroup: t.TempDir(), AllowDowngrade: true, Logger: discardLogger()})
	if err != nil || r == nil {
		t.Fatalf("downgrade: %v", err)
	}
}

// run is a shell one-liner in a fresh workspace.
func run(t *testing.T, r Runner, script string, spec Spec) *Result {
	t.Helper()
	if spec.Workspace == "" {
		spec.Workspace = testWorkspace(t)
	}
	spec.Args = []string{"/bin/sh", "-c", script}
	res, err := r.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run(%q): %v", script, err)
	}
	return res
}

func TestRunBehaviour(t *testing.T) {
	for _, mode := range []string{modeIsolated, modeLocal} {
		t.Run(mode, func(t *testing.T) {
			r := newTestRunner(t, mode, 300*time.Millisecond)
			t.Run("exit code and stdin", func(t *testing.T) {
				res := run(t, r, "cat; echo err >&2; exit 3", Spec{Stdin: []byte("in\n")})
				if res.ExitCode != 3 || string(res.Stdout) != "in\n" || string(res.Stderr) != "err\n" || res.TimedOut {
					t.Errorf("%+v", res)
				}
			})
			t.Run("killed by signal", func(t *testing.T) {
				res := run(t, r, "kill -KILL $$", Spec{})
				if res.Signal != int(syscall.SIGKILL) || res.ExitCode != 128+9 {
					t.Errorf("signal %d exit %d", res.Signal, res.ExitCode)
				}
			})
			t.Run("output exactly at limit", func(t *testing.T) {
				res := run(t, r, "head -c 100 /dev/zero; head -c 101 /dev/zero >&2", Spec{Limits: Limits{OutputBytes: 100}})
				if len(res.Stdout) != 100 || res.StdoutTruncated || len(res.Stderr) != 100 || !res.StderrTruncated {
					t.Errorf("stdout %d %v stderr %d %v", len(res.Stdout), res.StdoutTruncated, len(res.Stderr), res.StderrTruncated)
				}
			})
			t.Run("timeout then SIGTERM handled", func(t *testing.T) {
				// A generous grace: on a loaded machine the shell may need
				// a while to run its trap before SIGKILL would follow.
				r := newTestRunner(t, mode, 3*time.Second)
				start := time.Now()
				res := run(t, r, "trap 'echo term; exit 7' TERM; while :; do sleep 0.05; done", Spec{Timeout: 300 * time.Millisecond})
				if !res.TimedOut || !bytes.Contains(res.Stdout, []byte("term")) || time.Since(start) > 4*time.Second {
					t.Errorf("timedOut %v stdout %q after %v", res.TimedOut, res.Stdout, time.Since(start))
				}
			})
			t.Run("SIGTERM ignored then SIGKILL after grace", func(t *testing.T) {
				start := time.Now()
				res := run(t, r, "trap '' TERM; while :; do sleep 0.05; done", Spec{Timeout: 300 * time.Millisecond})
				el := time.Since(start)
				if !res.TimedOut || el < 550*time.Millisecond || el > 3*time.Second {
					t.Errorf("timedOut %v after %v, want about timeout+grace", res.TimedOut, el)
				}
			})
			t.Run("missing program", func(t *testing.T) {
				_, err := r.Run(context.Background(), Spec{Args: []string{"/nonexistent/prog"}, Workspace: testWorkspace(t)})
				if err == nil || !strings.Contains(err.Error(), "/nonexistent/prog") {
					t.Errorf("err = %v", err)
				}
			})
			t.Run("caller cancel", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(100*time.Millisecond, cancel)
				res, err := r.Run(ctx, Spec{Args: []string{"/bin/sleep", "10"}, Workspace: testWorkspace(t)})
				if !errors.Is(err, context.Canceled) || res == nil || !res.TimedOut {
					t.Errorf("res %+v err %v", res, err)
				}
			})
		})
	}
}

func TestIsolatedLimits(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 200*time.Millisecond)
	t.Run("rlimits set", func(t *testing.T) {
		res := run(t, r, "cat /proc/self/limits", Spec{Limits: Limits{CPUSeconds: 7, AddressSpace: 1 << 30, FileSize: 4096, OpenFiles: 33}})
		for _, want := range []string{
			"Max cpu time              7                    8",
			"Max file size             4096                 4096",
			"Max open files            33                   33",
			"Max address space         1073741824           1073741824",
		} {
			if !bytes.Contains(res.Stdout, []byte(want)) {
				t.Errorf("missing %q in\n%s", want, res.Stdout)
			}
		}
	})
	t.Run("open files at the limit", func(t *testing.T) {
		// fds 0-2 are open; with a limit of 6, fds 3..5 open and 6 fails.
		res := run(t, r, "exec 3</dev/null 4</dev/null 5</dev/null && echo ok5; exec 6</dev/null && echo ok6", Spec{Limits: Limits{OpenFiles: 6}})
		if !bytes.Contains(res.Stdout, []byte("ok5")) || bytes.Contains(res.Stdout, []byte("ok6")) {
			t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
		}
	})
	t.Run("cpu seconds", func(t *testing.T) {
		// The wall-clock deadline is far above the CPU limit so that a
		// loaded machine (CPU time accrues slower than wall time) still
		// reaches the CPU limit first.
		res := run(t, r, "while :; do :; done", Spec{Limits: Limits{CPUSeconds: 1}, Timeout: 60 * time.Second})
		if res.TimedOut || (res.Signal != int(syscall.SIGXCPU) && res.Signal != int(syscall.SIGKILL)) {
			t.Errorf("timedOut %v signal %d, want SIGXCPU or SIGKILL", res.TimedOut, res.Signal)
		}
	})
	t.Run("no capabilities", func(t *testing.T) {
		res := run(t, r, "grep Cap /proc/self/status", Spec{})
		for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
			if !strings.HasSuffix(line, "0000000000000000") {
				t.Errorf("capability set not empty: %q", line)
			}
		}
	})
	t.Run("read-only path", func(t *testing.T) {
		ro := t.TempDir()
		if err := os.WriteFile(filepath.Join(ro, "doc.md"), []byte("readme"), 0o644); err != nil {
			t.Fatal(err)
		}
		res := run(t, r, "cat "+ro+"/doc.md; echo x > "+ro+"/new && echo wrote", Spec{ReadOnly: []string{ro}})
		if string(res.Stdout) != "readme" {
			t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
		}
		if _, err := os.Stat(filepath.Join(ro, "new")); err == nil {
			t.Error("wrote into a read-only path")
		}
	})
	t.Run("network when allowed", func(t *testing.T) {
		res := run(t, r, "cat /proc/net/dev | wc -l", Spec{Network: true})
		n, _ := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
		if n <= 3 { // header (2 lines) + lo only means an empty namespace
			t.Errorf("Network: true still sees an empty network namespace: %q", res.Stdout)
		}
	})
}

// Both runners say their ceiling, also through a wrapper, so a caller can
// check its own maximum against it when it is configured.
func TestTimeoutCeiling(t *testing.T) {
	local, err := NewUnconfinedLocal(&LocalOptions{MaxTimeout: 42 * time.Second, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Runner{local, WithEnv(local, nil)} {
		if got, ok := MaxTimeout(r); !ok || got != 42*time.Second {
			t.Errorf("MaxTimeout(%T) = %v, %v; want 42s", r, got, ok)
		}
	}
	if _, ok := MaxTimeout(noCeiling{}); ok {
		t.Error("a runner without a ceiling reported one")
	}
}

type noCeiling struct{}

func (noCeiling) Run(context.Context, Spec) (*Result, error) { return nil, errors.New("not run") }

// A runner's name is found through wrappers; a runner without one is
// named by its Go type.
func TestRunnerName(t *testing.T) {
	local, err := NewUnconfinedLocal(&LocalOptions{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	env := func(context.Context) map[string]string { return map[string]string{"A": "1"} }
	for _, tc := range []struct {
		r    Runner
		want string
	}{
		{local, "unconfined-local"},
		{WithEnv(local, env), "unconfined-local"},
		{WithEnv(noCeiling{}, env), "sandbox.noCeiling"},
		{noCeiling{}, "sandbox.noCeiling"},
	} {
		if got := RunnerName(tc.r); got != tc.want {
			t.Errorf("RunnerName(%T) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
