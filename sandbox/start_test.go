//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillkit/skillkit/internal/proctest"
)

// startSh starts a shell one-liner in a fresh workspace.
func startSh(t *testing.T, r Runner, script string, spec Spec) Process {
	t.Helper()
	if spec.Workspace == "" {
		spec.Workspace = testWorkspace(t)
	}
	spec.Args = []string{"/bin/sh", "-c", script}
	pr, err := Start(context.Background(), r, spec)
	if err != nil {
		t.Fatalf("Start(%q): %v", script, err)
	}
	t.Cleanup(func() {
		pr.Kill()
		_, _ = pr.Wait()
	})
	return pr
}

// readUntil reads pr until its stdout holds want (or it ends), and
// returns what it read of each stream. The handshake is the output
// itself: no verdict depends on how fast the command runs.
func readUntil(t *testing.T, pr Process, want string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errb strings.Builder
	for !strings.Contains(out.String(), want) {
		o := pr.Read(ctx, 1<<20)
		out.Write(o.Stdout)
		errb.Write(o.Stderr)
		if o.Done && o.Pending == 0 || ctx.Err() != nil {
			break
		}
	}
	if !strings.Contains(out.String(), want) {
		t.Fatalf("stdout %q never held %q (stderr %q)", out.String(), want, errb.String())
	}
	return out.String(), errb.String()
}

// drain reads pr to its end and returns the rest of each stream.
func drain(t *testing.T, pr Process) (stdout, stderr string) {
	t.Helper()
	var out, errb strings.Builder
	for {
		o := pr.Read(context.Background(), 1<<20)
		out.Write(o.Stdout)
		errb.Write(o.Stderr)
		if o.Done && o.Pending == 0 {
			return out.String(), errb.String()
		}
	}
}

// TestStartInteractive: a started command prints, waits for stdin, echoes
// what it is sent and ends with its exit code once stdin closes.
func TestStartInteractive(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		pr := startSh(t, r, `echo ready; while read -r l; do echo "got $l"; done; echo bye >&2; exit 5`, Spec{})
		readUntil(t, pr, "ready\n")
		if n, err := pr.Write(t.Context(), []byte("hello\n")); n != 6 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		readUntil(t, pr, "got hello\n")
		if err := pr.CloseStdin(); err != nil {
			t.Fatal(err)
		}
		if err := pr.CloseStdin(); err != nil {
			t.Errorf("second CloseStdin: %v", err)
		}
		if _, err := pr.Write(t.Context(), []byte("late\n")); !errors.Is(err, ErrStdinClosed) {
			t.Errorf("Write after CloseStdin: %v, want ErrStdinClosed", err)
		}
		_, stderr := drain(t, pr)
		res, err := pr.Wait()
		if err != nil || res.ExitCode != 5 || res.Killed || res.TimedOut || stderr != "bye\n" {
			t.Fatalf("res %+v, %v, stderr %q", res, err, stderr)
		}
		if _, err := pr.Write(t.Context(), []byte("x")); !errors.Is(err, ErrStdinClosed) && !errors.Is(err, ErrProcessEnded) {
			t.Errorf("Write after the end: %v", err)
		}
	})
}

// TestStartKillTree: Kill ends the command and a grandchild it left in
// the background (under the isolated runner even one that called
// setsid: the PID namespace goes with its PID 1).
func TestStartKillTree(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		marker := "27.18" + strconv.Itoa(len(mode)) + strconv.Itoa(os.Getpid())
		t.Cleanup(func() {
			for _, pid := range proctest.WithArg(marker) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		pr := startSh(t, r, `sleep `+marker+` </dev/null >/dev/null 2>&1 & echo started; exec cat`, Spec{})
		readUntil(t, pr, "started\n")
		// The grandchild is forked before the echo; it takes the
		// marker as its argument once it has executed sleep.
		for deadline := time.Now().Add(10 * time.Second); len(proctest.WithArg(marker)) != 1 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		if len(proctest.WithArg(marker)) != 1 {
			t.Fatalf("the grandchild is not running: %v", proctest.WithArg(marker))
		}
		pr.Kill()
		res, err := pr.Wait()
		if err != nil || !res.Killed || res.ExitCode != 137 || res.Signal != int(syscall.SIGKILL) || res.TimedOut {
			t.Fatalf("res %+v, %v; want killed with 137", res, err)
		}
		// Isolated: gone when Wait returns. Local: SIGKILL is
		// asynchronous, so wait (bounded) for it to disappear.
		left := proctest.WithArg(marker)
		for deadline := time.Now().Add(5 * time.Second); mode == modeLocal && len(left) > 0 && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
			left = proctest.WithArg(marker)
		}
		if len(left) != 0 {
			t.Errorf("the grandchild %v outlived Kill", left)
		}
		pr.Kill() // killing an ended command does nothing
	})
}

// TestStartOutputBounded: each stream keeps at most Limits.OutputBytes
// unread bytes, the oldest dropped first and counted; at the limit
// nothing is dropped.
func TestStartOutputBounded(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		for _, tc := range []struct {
			name          string
			stdout, extra int
		}{{"at the limit", 100, 0}, {"over the limit", 100, 50}} {
			t.Run(tc.name, func(t *testing.T) {
				n := tc.stdout + tc.extra
				pr := startSh(t, r, "head -c "+strconv.Itoa(tc.extra)+" /dev/zero | tr '\\0' o; head -c "+strconv.Itoa(tc.stdout)+" /dev/zero | tr '\\0' n",
					Spec{Limits: Limits{OutputBytes: 100}})
				res, err := pr.Wait()
				if err != nil || res.ExitCode != 0 {
					t.Fatalf("%+v, %v", res, err)
				}
				o := pr.Read(t.Context(), 1<<20)
				if string(o.Stdout) != strings.Repeat("n", tc.stdout) || o.StdoutDropped != int64(n-100) || !o.Done || o.Pending != 0 {
					t.Errorf("read %d bytes (%q...), dropped %d, done %v; want the last 100 of %d", len(o.Stdout), o.Stdout[:min(5, len(o.Stdout))], o.StdoutDropped, o.Done, n)
				}
				if res.StdoutTruncated != (tc.extra > 0) {
					t.Errorf("StdoutTruncated = %v", res.StdoutTruncated)
				}
			})
		}
	})
}

// TestStartWrite: a write to a command that does not read its stdin
// ends with the context, having written what the pipe took; the command
// is unaffected.
func TestStartWrite(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		// The command reads its stdin only once the file go exists.
		ws := testWorkspace(t)
		pr := startSh(t, r, `echo ready; while [ ! -e go ]; do sleep 0.01; done; echo reading; exec cat >/dev/null`, Spec{Workspace: ws})
		readUntil(t, pr, "ready\n")
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		big := bytes.Repeat([]byte("x"), 4<<20)
		n, err := pr.Write(ctx, big)
		if !errors.Is(err, context.DeadlineExceeded) || n >= len(big) {
			t.Fatalf("Write = %d, %v; want fewer than %d bytes and the deadline", n, err, len(big))
		}
		// Once the command reads, the next write goes through: the
		// deadline of the one before is not left behind.
		if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		readUntil(t, pr, "reading\n")
		if n, err := pr.Write(t.Context(), []byte("more\n")); n != 5 || err != nil {
			t.Errorf("Write once the command reads = %d, %v", n, err)
		}
		pr.Kill()
		if res, err := pr.Wait(); err != nil || !res.Killed {
			t.Fatalf("%+v, %v", res, err)
		}
		if _, err := pr.Write(t.Context(), []byte("x")); !errors.Is(err, ErrProcessEnded) {
			t.Errorf("Write after the end: %v, want ErrProcessEnded", err)
		}
	})
}

// TestStartDeadline: a started command is stopped at Spec.Timeout, which
// may exceed the runner's MaxTimeout up to its MaxStartTimeout.
func TestStartDeadline(t *testing.T) {
	for _, mode := range []string{modeIsolated, modeLocal} {
		t.Run(mode, func(t *testing.T) {
			var r Runner
			var err error
			switch mode {
			case modeIsolated:
				o := testIsolatedOptions(200 * time.Millisecond)
				o.MaxTimeout, o.MaxStartTimeout = 100*time.Millisecond, 300*time.Millisecond
				r, err = NewIsolated(o)
				var fe *FeatureError
				if errors.As(err, &fe) {
					t.Skipf("isolated runner needs host feature %q: %v", fe.Feature, fe.Err)
				}
			case modeLocal:
				r, err = NewUnconfinedLocal(&LocalOptions{KillGrace: 200 * time.Millisecond, MaxTimeout: 100 * time.Millisecond, MaxStartTimeout: 300 * time.Millisecond, Logger: discardLogger()})
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := MaxStartTimeout(WithEnv(r, func(context.Context) map[string]string { return nil })); !ok || got != 300*time.Millisecond {
				t.Errorf("MaxStartTimeout = %v, %v", got, ok)
			}
			ws := testWorkspace(t)
			over := Spec{Args: []string{"/bin/sleep", "10"}, Workspace: ws, Timeout: 300*time.Millisecond + 1}
			if _, err := Start(t.Context(), r, over); !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("Start over MaxStartTimeout: %v, want ErrInvalidSpec", err)
			}
			at := Spec{Args: []string{"/bin/sleep", "10"}, Workspace: ws, Timeout: 300 * time.Millisecond}
			if _, err := r.Run(t.Context(), at); !errors.Is(err, ErrInvalidSpec) {
				t.Errorf("Run over MaxTimeout: %v, want ErrInvalidSpec", err)
			}
			pr, err := Start(t.Context(), r, at)
			if err != nil {
				t.Fatal(err)
			}
			res, err := pr.Wait()
			// 143, or 137 where the helper took longer than the grace
			// to exit after SIGTERM (a race-detector build may).
			if err != nil || !res.TimedOut || res.Killed || (res.ExitCode != 143 && res.ExitCode != 137) {
				t.Fatalf("%+v, %v; want timed out with 143 or 137", res, err)
			}
		})
	}
}

// TestStartRefusals: what Start refuses, with the error callers branch on.
func TestStartRefusals(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		ws := testWorkspace(t)
		if _, err := Start(t.Context(), r, Spec{Args: []string{"/bin/cat"}, Workspace: ws, Stdin: []byte("x")}); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("Spec.Stdin: %v, want ErrInvalidSpec", err)
		}
		if _, err := Start(t.Context(), r, Spec{Args: []string{"/nonexistent/prog"}, Workspace: ws}); !errors.Is(err, ErrCommandStart) {
			t.Errorf("missing program: %v, want ErrCommandStart", err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := Start(ctx, r, Spec{Args: []string{"/bin/cat"}, Workspace: ws}); !errors.Is(err, context.Canceled) {
			t.Errorf("ended context: %v, want context.Canceled", err)
		}
	})
	if _, err := Start(t.Context(), noCeiling{}, Spec{}); !errors.Is(err, ErrStartUnsupported) {
		t.Errorf("a runner without Start: %v, want ErrStartUnsupported", err)
	}
	wrapped := WithEnv(noCeiling{}, func(context.Context) map[string]string { return map[string]string{"A": "1"} })
	if CanStart(wrapped) {
		t.Error("CanStart sees through WithEnv to a runner without Start")
	}
	if _, err := Start(t.Context(), wrapped, Spec{}); !errors.Is(err, ErrStartUnsupported) {
		t.Errorf("WithEnv over a runner without Start: %v, want ErrStartUnsupported", err)
	}
}

// TestStartWithEnv: WithEnv injects into started commands as into Run's.
func TestStartWithEnv(t *testing.T) {
	r := WithEnv(newTestRunner(t, modeLocal, time.Second), func(context.Context) map[string]string { return map[string]string{"TOKEN": "t-42"} })
	if !CanStart(r) {
		t.Fatal("CanStart(WithEnv(local)) = false")
	}
	pr := startSh(t, r, `echo "token=$TOKEN"`, Spec{})
	if out, _ := drain(t, pr); out != "token=t-42\n" {
		t.Errorf("stdout %q", out)
	}
}

// TestStartLeavesNothing: once started commands have ended, every
// goroutine the runner used for them is gone.
func TestStartLeavesNothing(t *testing.T) {
	bothModes(t, func(t *testing.T, mode string, r Runner) {
		// One command first, so that what stays for the runner's life
		// (the forker's thread, /etc snapshots) is already there.
		pr := startSh(t, r, `exit 0`, Spec{})
		_, _ = pr.Wait()
		before := runtime.NumGoroutine()
		for i := 0; i < 3; i++ {
			pr := startSh(t, r, `echo up; exec cat`, Spec{})
			readUntil(t, pr, "up\n")
			pr.Kill()
			if _, err := pr.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(5 * time.Second); n > before && time.Now().Before(deadline); n = runtime.NumGoroutine() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > before {
			t.Errorf("%d goroutines after the commands ended, %d before", n, before)
		}
	})
}

// TestStartRunnerClose: closing the isolated runner ends its started
// commands (the helpers' parent-death signal).
func TestStartRunnerClose(t *testing.T) {
	r := newTestRunner(t, modeIsolated, time.Second)
	pr := startSh(t, r, `echo up; exec cat`, Spec{})
	readUntil(t, pr, "up\n")
	if err := r.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-pr.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the command outlived its runner's Close")
	}
}

// TestOutputs: the buffer of a started command's output, without a
// process: the split of a read between the streams, the UTF-8 cut, and
// what is dropped at and over the limit.
func TestOutputs(t *testing.T) {
	type want struct {
		stdout, stderr   string
		dropOut, dropErr int64
		pending          int
	}
	for _, tc := range []struct {
		name           string
		limit, max     int
		stdout, stderr string
		want           want
	}{
		{"all fits", 10, 100, "abc", "de", want{"abc", "de", 0, 0, 0}},
		{"exactly the limit", 4, 100, "abcd", "", want{"abcd", "", 0, 0, 0}},
		{"one over the limit", 4, 100, "abcde", "", want{"bcde", "", 1, 0, 0}},
		{"halves of max", 10, 4, "abcdef", "ghijkl", want{"ab", "gh", 0, 0, 8}},
		{"stderr leaves room", 10, 4, "abcdef", "g", want{"abc", "g", 0, 0, 3}},
		{"stdout leaves room", 10, 4, "a", "bcdefg", want{"a", "bcd", 0, 0, 3}},
		{"a cut inside a rune moves back", 10, 2, "aé", "", want{"a", "", 0, 0, 2}},
		{"a complete rune is kept", 10, 6, "aé", "", want{"aé", "", 0, 0, 0}},
		{"a rune longer than max is not split to nothing", 10, 2, "€", "", want{"\xe2\x82", "", 0, 0, 1}},
		{"zero limit keeps nothing", 0, 10, "abc", "d", want{"", "", 3, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newOutputs(tc.limit)
			// Written one byte at a time too, to exercise the ring.
			for i := 0; i < len(tc.stdout); i++ {
				_, _ = o.writer(0).Write([]byte{tc.stdout[i]})
			}
			_, _ = o.writer(1).Write([]byte(tc.stderr))
			got := o.read(context.Background(), tc.max)
			g := want{string(got.Stdout), string(got.Stderr), got.StdoutDropped, got.StderrDropped, got.Pending}
			if g != tc.want {
				t.Errorf("read = %+v, want %+v", g, tc.want)
			}
			if got.Done {
				t.Error("Done before the end")
			}
			// What is left comes next, with no drop counted again.
			o.end()
			rest := o.read(context.Background(), 1<<20)
			if rest.StdoutDropped != 0 || rest.StderrDropped != 0 || rest.Pending != 0 || !rest.Done || len(rest.Stdout)+len(rest.Stderr) != tc.want.pending {
				t.Errorf("second read = %+v", rest)
			}
		})
	}
	t.Run("waits for output, the end or the context", func(t *testing.T) {
		o := newOutputs(10)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got := o.read(ctx, 10); len(got.Stdout) != 0 || got.Done {
			t.Errorf("read with an ended context = %+v", got)
		}
		done := make(chan Output)
		go func() { done <- o.read(context.Background(), 10) }()
		_, _ = o.writer(1).Write([]byte("late"))
		if got := <-done; string(got.Stderr) != "late" {
			t.Errorf("read = %+v", got)
		}
		go func() { done <- o.read(context.Background(), 10) }()
		o.end()
		if got := <-done; !got.Done {
			t.Errorf("read at the end = %+v", got)
		}
	})
}
