package sandbox

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillkit/skillkit/internal/proctest"
)

const (
	modeIsolated = "isolated"
	modeLocal    = "local"
)

// newTestRunner returns the runner for mode, skipping when the kernel
// lacks a feature the isolated runner needs.
func newTestRunner(t *testing.T, mode string, grace time.Duration) Runner {
	t.Helper()
	var (
		r   Runner
		err error
	)
	switch mode {
	case modeIsolated:
		r, err = NewIsolated(testIsolatedOptions(grace))
		var fe *FeatureError
		if errors.As(err, &fe) {
			t.Skipf("isolated runner needs host feature %q: %v", fe.Feature, fe.Err)
		}
	case modeLocal:
		r, err = NewUnconfinedLocal(&LocalOptions{KillGrace: grace, Logger: discardLogger()})
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// hostileRun copies testdata/hostile/<script> into a fresh workspace and
// runs it with args.
func hostileRun(t *testing.T, r Runner, script string, args []string, spec Spec) (*Result, error, string) {
	t.Helper()
	ws := spec.Workspace
	if ws == "" {
		ws = testWorkspace(t)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "hostile", script))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, script), src, 0o644); err != nil {
		t.Fatal(err)
	}
	interp := "/bin/sh"
	if strings.HasSuffix(script, ".py") {
		interp = "/usr/bin/python3"
		if _, err := os.Stat(interp); err != nil {
			t.Skipf("needs %s: %v", interp, err)
		}
	}
	spec.Args = append([]string{interp, script}, args...)
	spec.Workspace = ws
	if spec.Timeout == 0 {
		spec.Timeout = 20 * time.Second
	}
	res, err := r.Run(context.Background(), spec)
	return res, err, ws
}

// startVictim starts a host process that must survive the sandbox; env is
// added to its environment.
func startVictim(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sleep", "1000")
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	return cmd
}

func TestHostile(t *testing.T) {
	const secret = "s3cr3t-9f1c2e"
	type check func(t *testing.T, mode string, res *Result, err error, ws string)
	cases := []struct {
		name   string
		script string
		// setup prepares fixtures and returns args, spec and the check.
		setup func(t *testing.T) ([]string, Spec, check)
	}{
		{"read secret outside workspace", "read_secret.sh", func(t *testing.T) ([]string, Spec, check) {
			f := filepath.Join(t.TempDir(), "secret.txt")
			if err := os.WriteFile(f, []byte(secret), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{f}, Spec{}, func(t *testing.T, mode string, res *Result, err error, _ string) {
				leaked := mustOK(t, res, err) && bytes.Contains(res.Stdout, []byte(secret))
				wantLeak(t, mode, leaked, res)
			}
		}},
		{"write outside workspace", "write_outside.sh", func(t *testing.T) ([]string, Spec, check) {
			dir := t.TempDir()
			return []string{dir}, Spec{}, func(t *testing.T, mode string, res *Result, err error, _ string) {
				mustOK(t, res, err)
				_, statErr := os.Stat(filepath.Join(dir, "pwned.txt"))
				wantLeak(t, mode, statErr == nil, res)
			}
		}},
		{"parent environment not inherited", "env_leak.sh", func(t *testing.T) ([]string, Spec, check) {
			t.Setenv("SKILLKIT_TEST_SECRET", secret)
			return nil, Spec{}, func(t *testing.T, mode string, res *Result, err error, ws string) {
				mustOK(t, res, err)
				if bytes.Contains(res.Stdout, []byte(secret)) {
					t.Errorf("%s: host environment leaked:\n%s", mode, res.Stdout)
				}
				home := ws
				if mode == modeIsolated {
					home = WorkspaceDir
				}
				if !bytes.Contains(res.Stdout, []byte("HOME="+home+"\n")) {
					t.Errorf("%s: HOME is not the workspace %s:\n%s", mode, home, res.Stdout)
				}
			}
		}},
		{"other processes' environ via /proc", "proc_environ.sh", func(t *testing.T) ([]string, Spec, check) {
			v := startVictim(t, "VICTIM_TOKEN="+secret)
			return []string{strconv.Itoa(v.Process.Pid)}, Spec{}, func(t *testing.T, mode string, res *Result, err error, _ string) {
				leaked := mustOK(t, res, err) && bytes.Contains(res.Stdout, []byte(secret))
				wantLeak(t, mode, leaked, res)
			}
		}},
		{"tcp connect to host loopback", "tcp_connect.py", func(t *testing.T) ([]string, Spec, check) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ln.Close() })
			got := make(chan []byte, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				b := make([]byte, 16)
				n, _ := c.Read(b)
				got <- b[:n]
			}()
			port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
			return []string{port}, Spec{}, func(t *testing.T, mode string, res *Result, err error, _ string) {
				mustOK(t, res, err)
				wantLeak(t, mode, received(mode, got), res)
			}
		}},
		{"udp to host loopback and dns", "udp_dns.py", func(t *testing.T) ([]string, Spec, check) {
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = pc.Close() })
			got := make(chan []byte, 1)
			go func() {
				b := make([]byte, 16)
				n, _, err := pc.ReadFrom(b)
				if err == nil {
					got <- b[:n]
				}
			}()
			port := strconv.Itoa(pc.LocalAddr().(*net.UDPAddr).Port)
			return []string{port}, Spec{}, func(t *testing.T, mode string, res *Result, err error, _ string) {
				mustOK(t, res, err)
				wantLeak(t, mode, received(mode, got), res)
				if mode == modeIsolated && !bytes.Contains(res.Stdout, []byte("dns failed")) {
					t.Errorf("isolated: DNS resolution did not fail:\n%s", res.Stdout)
				}
			}
		}},
		{"signal a host process", "kill_host.sh", func(t *testing.T) ([]string, Spec, check) {
			v := startVictim(t)
			return []string{strconv.Itoa(v.Process.Pid)}, Spec{}, func(t *testing.T, mode string, res *Result, err error, _ string) {
				mustOK(t, res, err)
				deadline := time.Now().Add(time.Second)
				for proctest.Alive(v.Process.Pid) && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				wantLeak(t, mode, !proctest.Alive(v.Process.Pid), res)
			}
		}},
		{"process count bounded", "fork_count.py", func(t *testing.T) ([]string, Spec, check) {
			return []string{"100"}, Spec{Limits: Limits{Processes: 20}}, func(t *testing.T, mode string, res *Result, err error, _ string) {
				mustOK(t, res, err)
				var n int
				if _, err := fmtSscan(string(res.Stdout), &n); err != nil {
					t.Fatalf("%s: no count in output: %q %q", mode, res.Stdout, res.Stderr)
				}
				// The python process itself takes one of the 20 tasks.
				wantLeak(t, mode, n >= 20, res)
			}
		}},
		{"memory hog", "memory_hog.py", func(t *testing.T) ([]string, Spec, check) {
			return []string{"512"}, Spec{Limits: Limits{AddressSpace: 256 << 20}}, func(t *testing.T, mode string, res *Result, err error, _ string) {
				mustOK(t, res, err)
				allocated := bytes.Contains(res.Stdout, []byte("allocated"))
				wantLeak(t, mode, allocated, res)
				if mode == modeIsolated && !bytes.Contains(res.Stderr, []byte("MemoryError")) {
					t.Errorf("isolated: want MemoryError, stderr %q", res.Stderr)
				}
			}
		}},
		{"disk fill past file size limit", "disk_fill.sh", func(t *testing.T) ([]string, Spec, check) {
			const limit = 1 << 20
			return []string{strconv.Itoa(10 * limit)}, Spec{Limits: Limits{FileSize: limit}}, func(t *testing.T, mode string, res *Result, err error, ws string) {
				mustOK(t, res, err)
				fi, statErr := os.Stat(filepath.Join(ws, "big.bin"))
				if statErr != nil {
					t.Fatalf("%s: %v", mode, statErr)
				}
				wantLeak(t, mode, fi.Size() > limit, res)
				if mode == modeIsolated && (fi.Size() != limit || res.ExitCode == 0) {
					t.Errorf("isolated: size %d exit %d, want exactly %d and a failure (SIGXFSZ)", fi.Size(), res.ExitCode, limit)
				}
			}
		}},
	}
	for _, tc := range cases {
		for _, mode := range []string{modeIsolated, modeLocal} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				r := newTestRunner(t, mode, 500*time.Millisecond)
				args, spec, chk := tc.setup(t)
				res, err, ws := hostileRun(t, r, tc.script, args, spec)
				chk(t, mode, res, err, ws)
			})
		}
	}
}

// mustOK fails the test unless the run produced a result.
func mustOK(t *testing.T, res *Result, err error) bool {
	t.Helper()
	if err != nil || res == nil {
		t.Fatalf("Run: %v", err)
	}
	return true
}

// received reports whether the listener got the payload. Where a leak is
// expected (local) it waits up to 5 s, so a slow machine cannot hide it;
// where none is (isolated) the command has already ended, so anything it
// sent is in the socket and a short wait suffices.
func received(mode string, got <-chan []byte) bool {
	wait := 5 * time.Second
	if mode == modeIsolated {
		wait = 300 * time.Millisecond
	}
	select {
	case b := <-got:
		return string(b) == "pwned"
	case <-time.After(wait):
		return false
	}
}

// wantLeak asserts that the attack succeeded under the unconfined local
// runner (what it does NOT protect) and failed under the isolated one.
func wantLeak(t *testing.T, mode string, leaked bool, res *Result) {
	t.Helper()
	want := mode == modeLocal
	if leaked != want {
		t.Errorf("%s: attack succeeded = %v, want %v\nexit %d signal %d\nstdout %q\nstderr %q",
			mode, leaked, want, res.ExitCode, res.Signal, res.Stdout, res.Stderr)
	}
}

func TestHostileForkBombIsolated(t *testing.T) {
	r := newTestRunner(t, modeIsolated, 200*time.Millisecond)
	// Not run under the local runner: there it would exhaust the host.
	start := time.Now()
	res, err, _ := hostileRun(t, r, "fork_bomb.sh", nil, Spec{Timeout: 2 * time.Second, Limits: Limits{Processes: 64}})
	mustOK(t, res, err)
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("fork bomb call took %v, want about the 2s timeout", el)
	}
	// The bomb either hits the task bound (the shell reports it) or runs
	// into the deadline; both end the call on time.
	if !res.TimedOut && !bytes.Contains(res.Stderr, []byte("Cannot fork")) {
		t.Errorf("want TimedOut or a fork failure; exit %d stderr %q", res.ExitCode, res.Stderr)
	}
	if n := len(proctest.WithArg("fork_bomb.sh")); n != 0 {
		t.Errorf("%d fork bomb processes survive on the host", n)
	}
}

func TestHostileEndlessStdout(t *testing.T) {
	for _, mode := range []string{modeIsolated, modeLocal} {
		t.Run(mode, func(t *testing.T) {
			r := newTestRunner(t, mode, 200*time.Millisecond)
			res, err, _ := hostileRun(t, r, "endless_stdout.sh", nil, Spec{Timeout: 500 * time.Millisecond, Limits: Limits{OutputBytes: 4096}})
			mustOK(t, res, err)
			if !res.TimedOut || !res.StdoutTruncated || len(res.Stdout) != 4096 {
				t.Errorf("timedOut %v truncated %v len %d; want true true 4096", res.TimedOut, res.StdoutTruncated, len(res.Stdout))
			}
			if !bytes.HasPrefix(res.Stdout, []byte("pwned\n")) || !bytes.Contains(res.Stdout[2048:], []byte("pwned\n")) {
				t.Errorf("head/tail content wrong: %q...", res.Stdout[:32])
			}
		})
	}
}

func TestHostileGrandchild(t *testing.T) {
	for i, mode := range []string{modeIsolated, modeLocal} {
		for j, how := range []string{"exit", "hang"} {
			t.Run(mode+"/"+how, func(t *testing.T) {
				r := newTestRunner(t, mode, 200*time.Millisecond)
				marker := "31.41" + strconv.Itoa(10*i+j) + strconv.Itoa(os.Getpid())
				t.Cleanup(func() {
					for _, pid := range proctest.WithArg(marker) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				})
				// "exit" must return as soon as the script ends, long
				// before its generous deadline; "hang" at its 1s deadline.
				timeout := 15 * time.Second
				if how == "hang" {
					timeout = time.Second
				}
				start := time.Now()
				res, err, _ := hostileRun(t, r, "grandchild.sh", []string{marker, how}, Spec{Timeout: timeout})
				mustOK(t, res, err)
				if el := time.Since(start); el > 4*time.Second {
					t.Errorf("call returned after %v; a grandchild kept it waiting", el)
				}
				if res.TimedOut != (how == "hang") {
					t.Errorf("TimedOut = %v", res.TimedOut)
				}
				// Isolated: checked at once — the PID namespace is gone by
				// the time Run returns. Local: SIGKILL is asynchronous, so
				// wait (bounded) for the killed ones to disappear.
				left := proctest.WithArg(marker)
				for deadline := time.Now().Add(2 * time.Second); mode == modeLocal && len(left) > 1 && time.Now().Before(deadline); {
					time.Sleep(5 * time.Millisecond)
					left = proctest.WithArg(marker)
				}
				switch mode {
				case modeIsolated:
					if len(left) != 0 {
						t.Errorf("isolated: grandchildren %v outlived the call", left)
					}
				case modeLocal:
					// The grandchild that stayed in the process group is
					// killed; the one that called setsid escapes: local
					// does not protect against that.
					if len(left) != 1 {
						t.Errorf("local: %d grandchildren survive, want exactly the setsid one", len(left))
					}
				}
			})
		}
	}
}

func TestHostileSpecRejected(t *testing.T) {
	outside := t.TempDir()
	cases := []struct {
		name string
		mod  func(ws string, s *Spec)
		want error
	}{
		{"dotdot in dir", func(ws string, s *Spec) { s.Dir = ".." }, ErrOutsideWorkspace},
		{"dotdot after subdir", func(ws string, s *Spec) { s.Dir = "sub/../../" + filepath.Base(ws) + "x" }, ErrOutsideWorkspace},
		{"absolute dir outside", func(ws string, s *Spec) { s.Dir = outside }, ErrOutsideWorkspace},
		{"symlinked dir outside", func(ws string, s *Spec) {
			_ = os.Symlink(outside, filepath.Join(ws, "link"))
			s.Dir = "link"
		}, ErrOutsideWorkspace},
		{"PATH override in ToolEnv", func(ws string, s *Spec) { s.ToolEnv = map[string]string{"PATH": ws} }, ErrForbiddenEnv},
		{"LD_PRELOAD in ToolEnv", func(ws string, s *Spec) { s.ToolEnv = map[string]string{"LD_PRELOAD": ws + "/x.so"} }, ErrForbiddenEnv},
		{"lowercase path in ToolEnv", func(ws string, s *Spec) { s.ToolEnv = map[string]string{"Path": ws} }, ErrForbiddenEnv},
	}
	for _, tc := range cases {
		for _, mode := range []string{modeIsolated, modeLocal} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				r := newTestRunner(t, mode, 0)
				ws := t.TempDir()
				spec := Spec{Args: []string{"/bin/sh", "-c", "touch ran"}, Workspace: ws}
				tc.mod(ws, &spec)
				res, err := r.Run(context.Background(), spec)
				if !errors.Is(err, tc.want) || res != nil {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
					t.Error("command ran despite the rejected spec")
				}
			})
		}
	}
}
