package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillkit/skillkit/internal/proctest"
	"github.com/skillkit/skillkit/internal/tracing/tracingtest"
	"github.com/skillkit/skillkit/sandbox"
	"github.com/skillkit/skillkit/workspace"
	"go.opentelemetry.io/otel/attribute"
)

// localRunner returns the unconfined local runner, which needs nothing
// of the host.
func localRunner(t testing.TB, opts *sandbox.LocalOptions) sandbox.Runner {
	t.Helper()
	var o sandbox.LocalOptions
	if opts != nil {
		o = *opts
	}
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := sandbox.NewUnconfinedLocal(&o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// bgFixture is the exec tools over a fresh Manager.
type bgFixture struct {
	et    *ExecTools
	m     *workspace.Manager
	tools map[string]Tool
	// early holds the stdout a start's result returned, for readUntil.
	early map[string]string
}

func newBgFixture(t *testing.T, r sandbox.Runner, opts *ExecOptions) bgFixture {
	t.Helper()
	m, err := workspace.New(&workspace.Options{Root: t.TempDir(), InMemoryVolumes: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	et, err := WorkspaceExecTools(WorkspaceExecConfig{Runner: r, Workspaces: m, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = et.Close() })
	f := bgFixture{et: et, m: m, tools: map[string]Tool{}, early: map[string]string{}}
	for _, tl := range et.Tools() {
		f.tools[tl.Name] = tl
	}
	return f
}

// call runs tool in session with args.
func (f bgFixture) call(t *testing.T, session, tool string, args map[string]any) Result {
	t.Helper()
	return run(t, f.tools[tool], Call{Args: argsJSON(t, args), SessionID: session})
}

// start starts command in the background in session s1 and returns its
// handle.
func (f bgFixture) start(t *testing.T, command string, extra map[string]any) string {
	t.Helper()
	a := map[string]any{"command": command, "background": true}
	for k, v := range extra {
		a[k] = v
	}
	r := f.call(t, "s1", WorkspaceExecName, a)
	res := decodeBg(t, r)
	if res.Handle == "" || r.IsError {
		t.Fatalf("start %q: %s", command, r.Text)
	}
	f.early[res.Handle] = res.Stdout
	return res.Handle
}

// startGated starts command in the background behind a gate — it runs
// once a line arrives on its stdin — so that the start's own result
// holds none of its output, and returns its handle and its entry.
func (f bgFixture) startGated(t *testing.T, command string) (string, *bgProc) {
	t.Helper()
	h := f.start(t, "read -r gate; "+command, nil)
	p := f.et.bg.lookup(workspace.IDFor("s1"), h)
	if w := f.call(t, "s1", WorkspaceExecWriteName, map[string]any{"handle": h, "input": "\n"}); w.IsError {
		t.Fatalf("open the gate: %s", w.Text)
	}
	return h, p
}

func argsJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeBg parses a BackgroundResult, checking that the structured
// content is the text.
func decodeBg(t *testing.T, r Result) BackgroundResult {
	t.Helper()
	var res BackgroundResult
	if err := json.Unmarshal([]byte(r.Text), &res); err != nil {
		t.Fatalf("not a background result: %v\n%s", err, r.Text)
	}
	if !bytes.Equal(r.Structured, []byte(r.Text)) {
		t.Errorf("structured content %s differs from the text %s", r.Structured, r.Text)
	}
	return res
}

// readUntil reads handle in s1 until its stdout holds want or it ended,
// and returns the last result with the stdout and stderr of all reads.
// The command's own output is the handshake: no verdict depends on speed.
func (f bgFixture) readUntil(t *testing.T, handle, want string) (BackgroundResult, string, string) {
	t.Helper()
	var out, errb strings.Builder
	out.WriteString(f.early[handle])
	delete(f.early, handle)
	for i := 0; i < 300; i++ {
		r := f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": handle, "wait_ms": 1000})
		res := decodeBg(t, r)
		out.WriteString(res.Stdout)
		errb.WriteString(res.Stderr)
		if (want != "" && strings.Contains(out.String(), want)) || (res.Status != StatusRunning && !res.More) {
			return res, out.String(), errb.String()
		}
	}
	t.Fatalf("%s: stdout %q never held %q", handle, out.String(), want)
	return BackgroundResult{}, "", ""
}

// bothRunners runs f with the isolated runner (skipped where the host
// lacks a feature it needs) and the unconfined local one.
func bothRunners(t *testing.T, f func(t *testing.T, name string, r sandbox.Runner)) {
	t.Run("isolated", func(t *testing.T) { f(t, "isolated", isolatedRunner(t)) })
	t.Run("local", func(t *testing.T) { f(t, "local", localRunner(t, nil)) })
}

// TestBackgroundInteractive: start a command that prints a line and
// waits for stdin, read that line, write to it, read its echo, close its
// stdin and read its exit; the handle is then forgotten.
func TestBackgroundInteractive(t *testing.T) {
	bothRunners(t, func(t *testing.T, _ string, r sandbox.Runner) {
		f := newBgFixture(t, r, nil)
		r0 := f.call(t, "s1", WorkspaceExecName, map[string]any{"command": `echo ready; while read -r l; do echo "got $l"; done; echo bye >&2; exit 3`,
			"background": true, "wait_ms": 10000})
		start := decodeBg(t, r0)
		if r0.IsError || start.Status != StatusRunning || !strings.HasPrefix(start.Handle, "bg-") || len(start.Handle) < 20 || start.ExitCode != nil {
			t.Fatalf("start: %s", r0.Text)
		}
		h := start.Handle
		if !strings.Contains(start.Stdout, "ready") {
			f.readUntil(t, h, "ready\n")
		}
		w := f.call(t, "s1", WorkspaceExecWriteName, map[string]any{"handle": h, "input": "hi\n"})
		var wr BackgroundWriteResult
		if err := json.Unmarshal([]byte(w.Text), &wr); err != nil || w.IsError || wr.BytesWritten != 3 || wr.StdinClosed {
			t.Fatalf("write: %s", w.Text)
		}
		_, out, _ := f.readUntil(t, h, "got hi\n")
		if out != "got hi\n" {
			t.Errorf("echo %q", out)
		}
		w = f.call(t, "s1", WorkspaceExecWriteName, map[string]any{"handle": h, "close_stdin": true})
		if w.IsError || !strings.Contains(w.Text, `"stdin_closed":true`) {
			t.Fatalf("close_stdin: %s", w.Text)
		}
		end, _, stderr := f.readUntil(t, h, "")
		if end.Status != StatusExited || end.ExitCode == nil || *end.ExitCode != 3 || stderr != "bye\n" {
			t.Fatalf("end: %+v, stderr %q", end, stderr)
		}
		// The end was reported with all the output: the handle is gone.
		if r := f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": h}); !r.IsError || !strings.Contains(r.Text, "unknown handle") {
			t.Errorf("read after the end: %s", r.Text)
		}
	})
}

// TestBackgroundKill: kill ends the command and a grandchild it left in
// the background, reports status killed (not an error) and forgets the
// handle.
func TestBackgroundKill(t *testing.T) {
	bothRunners(t, func(t *testing.T, name string, r sandbox.Runner) {
		f := newBgFixture(t, r, nil)
		marker := "16.18" + strconv.Itoa(len(name)) + strconv.Itoa(os.Getpid())
		t.Cleanup(func() {
			for _, pid := range proctest.WithArg(marker) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		h := f.start(t, `sleep `+marker+` </dev/null >/dev/null 2>&1 & echo started; exec cat`, nil)
		f.readUntil(t, h, "started\n")
		waitFor(t, "the grandchild to run", func() bool { return len(proctest.WithArg(marker)) == 1 })
		k := f.call(t, "s1", WorkspaceExecKillName, map[string]any{"handle": h})
		res := decodeBg(t, k)
		if k.IsError || res.Status != StatusKilled || res.ExitCode == nil || *res.ExitCode != 137 {
			t.Fatalf("kill: %s", k.Text)
		}
		waitFor(t, "the grandchild to die", func() bool { return len(proctest.WithArg(marker)) == 0 })
		if r := f.call(t, "s1", WorkspaceExecKillName, map[string]any{"handle": h}); !r.IsError || !strings.Contains(r.Text, "unknown handle") {
			t.Errorf("second kill: %s", r.Text)
		}
	})
}

// waitFor polls cond, failing the test when it stays false: for effects
// the kernel completes on its own time (a SIGKILL's delivery, an exec).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestBackgroundLimits: each bound at and over its limit.
func TestBackgroundLimits(t *testing.T) {
	r := localRunner(t, nil)
	t.Run("processes per session", func(t *testing.T) {
		f := newBgFixture(t, r, nil) // the default, 4
		var handles []string
		for i := 0; i < DefaultBackgroundProcesses; i++ {
			handles = append(handles, f.start(t, "exec cat", nil))
		}
		over := f.call(t, "s1", WorkspaceExecName, map[string]any{"command": "exec cat", "background": true})
		if !over.IsError || !strings.Contains(over.Text, "4 background commands") || !strings.Contains(over.Text, "MaxProcesses") || !strings.Contains(over.Text, handles[0]) {
			t.Fatalf("the 5th start: %s", over.Text)
		}
		// Another session has its own count.
		if r := f.call(t, "s2", WorkspaceExecName, map[string]any{"command": "exec cat", "background": true}); r.IsError {
			t.Errorf("a start in another session: %s", r.Text)
		}
		f.call(t, "s1", WorkspaceExecKillName, map[string]any{"handle": handles[0]})
		f.start(t, "exec cat", nil)
	})
	t.Run("wall time", func(t *testing.T) {
		f := newBgFixture(t, r, &ExecOptions{Background: BackgroundOptions{MaxWallTime: 300 * time.Millisecond}})
		h := f.start(t, "echo up; exec sleep 100", map[string]any{"timeout_sec": 3600})
		end, _, _ := f.readUntil(t, h, "")
		if end.Status != StatusTimedOut || end.ExitCode == nil || !strings.Contains(strings.Join(end.Notes, " "), "300ms") {
			t.Fatalf("end %+v", end)
		}
	})
	t.Run("wall time at the runner's ceiling", func(t *testing.T) {
		low := localRunner(t, &sandbox.LocalOptions{MaxStartTimeout: time.Minute})
		f := newBgFixture(t, low, nil)
		if f.et.bg.wallTime != time.Minute {
			t.Errorf("default wall time %v under a 1m ceiling", f.et.bg.wallTime)
		}
		m, _ := workspace.New(&workspace.Options{Root: t.TempDir()})
		if _, err := WorkspaceExecTools(WorkspaceExecConfig{Runner: low, Workspaces: m, Options: &ExecOptions{Background: BackgroundOptions{MaxWallTime: time.Minute}}}); err != nil {
			t.Errorf("at the ceiling: %v", err)
		}
		_, err := WorkspaceExecTools(WorkspaceExecConfig{Runner: low, Workspaces: m, Options: &ExecOptions{Background: BackgroundOptions{MaxWallTime: time.Minute + 1}}})
		if !errors.Is(err, ErrExecConfig) || !strings.Contains(err.Error(), "MaxWallTime") {
			t.Errorf("over the ceiling: %v", err)
		}
	})
	t.Run("write size", func(t *testing.T) {
		f := newBgFixture(t, r, nil)
		h := f.start(t, "exec cat >/dev/null", nil)
		at := f.call(t, "s1", WorkspaceExecWriteName, map[string]any{"handle": h, "input": strings.Repeat("a", DefaultMaxWriteBytes)})
		if at.IsError || !strings.Contains(at.Text, `"bytes_written":65536`) {
			t.Errorf("at the limit: %s", at.Text)
		}
		over := f.call(t, "s1", WorkspaceExecWriteName, map[string]any{"handle": h, "input": strings.Repeat("a", DefaultMaxWriteBytes+1)})
		if !over.IsError || !strings.Contains(over.Text, "MaxWriteBytes") {
			t.Errorf("over the limit: %s", over.Text)
		}
	})
	t.Run("a command that does not read its stdin", func(t *testing.T) {
		f := newBgFixture(t, r, &ExecOptions{Background: BackgroundOptions{WriteTimeout: 50 * time.Millisecond}})
		h := f.start(t, "echo ready; exec sleep 100", nil)
		f.readUntil(t, h, "ready\n")
		// The pipe takes some input unread; then the write times out.
		var last Result
		for i := 0; i < 64 && !last.IsError; i++ {
			last = f.call(t, "s1", WorkspaceExecWriteName, map[string]any{"handle": h, "input": strings.Repeat("a", DefaultMaxWriteBytes)})
		}
		if !last.IsError || !strings.Contains(last.Text, "read no more for 50ms") {
			t.Errorf("write to a command that does not read: %s", last.Text)
		}
	})
	t.Run("read size", func(t *testing.T) {
		f := newBgFixture(t, r, &ExecOptions{Background: BackgroundOptions{MaxReadBytes: 60}})
		h, _ := f.startGated(t, "head -c 100 /dev/zero | tr '\\0' a; exec cat")
		waitBuffered(t, f, h, 100)
		first := decodeBg(t, f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": h, "max_bytes": 40}))
		if len(first.Stdout) != 40 || !first.More || !strings.Contains(strings.Join(first.Notes, " "), "60 more bytes") {
			t.Errorf("max_bytes 40: %+v", first)
		}
		// Over the maximum: capped at MaxReadBytes (60), all that is left.
		second := decodeBg(t, f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": h, "max_bytes": 1000}))
		if len(second.Stdout) != 60 || second.More {
			t.Errorf("max_bytes over the maximum: %+v", second)
		}
	})
	t.Run("output buffer", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			n       int
			dropped int64
		}{{"at the limit", 100, 0}, {"over the limit", 150, 50}} {
			t.Run(tc.name, func(t *testing.T) {
				f := newBgFixture(t, r, &ExecOptions{Limits: sandbox.Limits{OutputBytes: 100}})
				h, p := f.startGated(t, "head -c "+strconv.Itoa(tc.n)+" /dev/zero | tr '\\0' a")
				_, _ = p.proc.Wait()
				end := decodeBg(t, f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": h}))
				notes := strings.Join(end.Notes, " ")
				if end.Status != StatusExited || len(end.Stdout) != 100 || end.StdoutDropped != tc.dropped || strings.Contains(notes, "dropped") != (tc.dropped > 0) {
					t.Errorf("%+v", end)
				}
			})
		}
	})
	t.Run("wait", func(t *testing.T) {
		f := newBgFixture(t, r, &ExecOptions{Background: BackgroundOptions{MaxWait: 10 * time.Millisecond}})
		h := f.start(t, "exec sleep 100", nil)
		res := decodeBg(t, f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": h, "wait_ms": 10}))
		if res.Status != StatusRunning || len(res.Notes) != 0 {
			t.Errorf("at the maximum: %+v", res)
		}
		res = decodeBg(t, f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": h, "wait_ms": 3600000}))
		if res.Status != StatusRunning || !strings.Contains(strings.Join(res.Notes, " "), "waited at most 10") {
			t.Errorf("over the maximum: %+v", res)
		}
	})
	t.Run("ended handles kept", func(t *testing.T) {
		f := newBgFixture(t, r, &ExecOptions{Background: BackgroundOptions{MaxProcesses: 1}})
		ended := func(p *bgProc) {
			_, _ = p.proc.Wait()
			waitFor(t, "the end to be recorded", func() bool { return p.endedAt.Load() != 0 })
		}
		first, p := f.startGated(t, "echo one")
		ended(p)
		second, p := f.startGated(t, "echo two")
		ended(p)
		// One ended handle is kept (MaxProcesses): the first one went.
		if r := f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": first}); !r.IsError || !strings.Contains(r.Text, "unknown handle") {
			t.Errorf("the older ended handle: %s", r.Text)
		}
		if r := decodeBg(t, f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": second})); r.Status != StatusExited || r.Stdout != "two\n" {
			t.Errorf("the newer ended handle: %+v", r)
		}
	})
	t.Run("ended handles expire", func(t *testing.T) {
		f := newBgFixture(t, r, &ExecOptions{Background: BackgroundOptions{KeepExited: time.Nanosecond}})
		h, p := f.startGated(t, "echo gone")
		_, _ = p.proc.Wait()
		waitFor(t, "the handle to expire", func() bool { return f.et.bg.lookup(workspace.IDFor("s1"), h) == nil })
	})
	t.Run("bad options", func(t *testing.T) {
		m, _ := workspace.New(&workspace.Options{Root: t.TempDir()})
		for _, o := range []BackgroundOptions{{MaxProcesses: -1}, {MaxWallTime: -1}, {MaxWriteBytes: -1}, {MaxReadBytes: -1}, {MaxWait: -1}, {WriteTimeout: -1}, {KeepExited: -1}} {
			if _, err := WorkspaceExecTools(WorkspaceExecConfig{Runner: r, Workspaces: m, Options: &ExecOptions{Background: o}}); !errors.Is(err, ErrExecConfig) || !strings.Contains(err.Error(), "ExecOptions.Background.") {
				t.Errorf("%+v: %v", o, err)
			}
		}
	})
}

// waitBuffered waits until n bytes of the command's output wait unread,
// peeking with zero-byte reads, which take nothing.
func waitBuffered(t *testing.T, f bgFixture, handle string, n int) {
	t.Helper()
	p := f.et.bg.lookup(workspace.IDFor("s1"), handle)
	waitFor(t, "the output", func() bool { return p.proc.Read(canceled(), 0).Pending >= n })
}

// canceled returns a context that has ended.
func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestBackgroundRefusals: the model's mistakes are error results naming
// the argument; a handle from another session is unknown.
func TestBackgroundRefusals(t *testing.T) {
	f := newBgFixture(t, localRunner(t, nil), nil)
	h := f.start(t, "exec cat", nil)
	for _, tc := range []struct {
		name, tool, session string
		args                map[string]any
		want                string
	}{
		{"unknown handle", WorkspaceExecReadName, "s1", map[string]any{"handle": "bg-nope"}, "unknown handle"},
		{"another session's handle", WorkspaceExecReadName, "s2", map[string]any{"handle": h}, "unknown handle"},
		{"another session's handle, write", WorkspaceExecWriteName, "s2", map[string]any{"handle": h, "input": "x"}, "unknown handle"},
		{"another session's handle, kill", WorkspaceExecKillName, "s2", map[string]any{"handle": h}, "unknown handle"},
		{"empty handle", WorkspaceExecReadName, "s1", map[string]any{"handle": ""}, "needs the handle"},
		{"negative wait", WorkspaceExecReadName, "s1", map[string]any{"handle": h, "wait_ms": -1}, "wait_ms -1 is negative"},
		{"negative max_bytes", WorkspaceExecReadName, "s1", map[string]any{"handle": h, "max_bytes": -1}, "max_bytes -1 is negative"},
		{"nothing to write", WorkspaceExecWriteName, "s1", map[string]any{"handle": h}, "needs input"},
		{"misspelt key", WorkspaceExecKillName, "s1", map[string]any{"handel": h}, "invalid arguments"},
		{"wait_ms without background", WorkspaceExecName, "s1", map[string]any{"command": "true", "wait_ms": 5}, "only with background"},
		{"output_files with background", WorkspaceExecName, "s1", map[string]any{"command": "true", "background": true, "output_files": []string{"out/**"}}, "output_files:"},
		{"stdin with background", WorkspaceExecName, "s1", map[string]any{"command": "cat", "background": true, "stdin": "x"}, "stdin:"},
		{"negative wait at start", WorkspaceExecName, "s1", map[string]any{"command": "true", "background": true, "wait_ms": -1}, "wait_ms -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.call(t, tc.session, tc.tool, tc.args)
			if !r.IsError || !strings.Contains(r.Text, tc.want) || !strings.HasPrefix(r.Text, "Error: ") {
				t.Errorf("%s", r.Text)
			}
		})
	}
	// The call without a session is the host's failure, not the model's.
	if _, err := f.tools[WorkspaceExecReadName].Call(t.Context(), Call{Args: argsJSON(t, map[string]any{"handle": h})}); err == nil {
		t.Error("a read without a session is not an error")
	}
	// The handle still works in its own session.
	if r := f.call(t, "s1", WorkspaceExecReadName, map[string]any{"handle": h}); r.IsError {
		t.Errorf("own session: %s", r.Text)
	}
	// A write to an ended command.
	p := f.et.bg.lookup(workspace.IDFor("s1"), h)
	f.call(t, "s1", WorkspaceExecWriteName, map[string]any{"handle": h, "close_stdin": true})
	_, _ = p.proc.Wait()
	if r := f.call(t, "s1", WorkspaceExecWriteName, map[string]any{"handle": h, "input": "x"}); !r.IsError || !strings.Contains(r.Text, "has ended") {
		t.Errorf("write after the end: %s", r.Text)
	}
}

// noStart is a runner without Start.
type noStart struct{ sandbox.Runner }

// TestBackgroundUnsupported: a runner that cannot start commands makes
// background: true an error result; the foreground-only WorkspaceExec has
// no background argument at all.
func TestBackgroundUnsupported(t *testing.T) {
	f := newBgFixture(t, noStart{localRunner(t, nil)}, nil)
	r := f.call(t, "s1", WorkspaceExecName, map[string]any{"command": "true", "background": true})
	if !r.IsError || !strings.Contains(r.Text, "cannot start background commands") {
		t.Errorf("%s", r.Text)
	}
	if r := f.call(t, "s1", WorkspaceExecName, map[string]any{"command": "echo fg"}); r.IsError || !strings.Contains(r.Text, `"stdout":"fg\n"`) {
		t.Errorf("a foreground command: %s", r.Text)
	}
	m, _ := workspace.New(&workspace.Options{Root: t.TempDir(), InMemoryVolumes: true})
	defer m.Close()
	fg, err := WorkspaceExec(WorkspaceExecConfig{Runner: localRunner(t, nil), Workspaces: m})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fg.InputSchema.Properties["background"]; ok {
		t.Error("WorkspaceExec's schema offers background")
	}
	if r := run(t, fg, Call{Args: argsJSON(t, map[string]any{"command": "true", "background": true}), SessionID: "s1"}); !r.IsError || !strings.Contains(r.Text, `"background"`) {
		t.Errorf("WorkspaceExec with background: %s", r.Text)
	}
}

// TestBackgroundEndsWithWorkspace: removing a session's workspace, closing
// its Manager, or closing the tools kills its background commands, and
// their handles are forgotten.
func TestBackgroundEndsWithWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(t *testing.T, f bgFixture)
	}{
		{"Remove", func(t *testing.T, f bgFixture) {
			if err := f.m.Remove(t.Context(), workspace.IDFor("s1")); err != nil {
				t.Fatal(err)
			}
		}},
		{"Manager Close", func(t *testing.T, f bgFixture) {
			if err := f.m.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"ExecTools Close", func(t *testing.T, f bgFixture) {
			if err := f.et.Close(); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bothRunners(t, func(t *testing.T, _ string, r sandbox.Runner) {
				f := newBgFixture(t, r, nil)
				var procs []*bgProc
				var handles []string
				for i := 0; i < 2; i++ {
					h := f.start(t, "echo up; exec cat", nil)
					f.readUntil(t, h, "up\n")
					handles = append(handles, h)
					procs = append(procs, f.et.bg.lookup(workspace.IDFor("s1"), h))
				}
				tc.end(t, f)
				for i, p := range procs {
					if !ended(p.proc) {
						t.Fatalf("%s still runs", handles[i])
					}
					if res, err := p.proc.Wait(); err != nil || !res.Killed {
						t.Errorf("%s: %+v, %v; want killed", handles[i], res, err)
					}
					if f.et.bg.lookup(workspace.IDFor("s1"), handles[i]) != nil {
						t.Errorf("%s is still known", handles[i])
					}
				}
				if tc.name == "ExecTools Close" {
					if _, err := f.tools[WorkspaceExecName].Call(t.Context(), Call{Args: argsJSON(t, map[string]any{"command": "true", "background": true}), SessionID: "s1"}); err == nil {
						t.Error("a background start after Close is not an error")
					}
				}
			})
		})
	}
}

// TestBackgroundSpans: a background command's workspace.run span starts
// under the call that started it and ends with the command.
func TestBackgroundSpans(t *testing.T) {
	tp, rec := tracingtest.Recorder(t)
	f := newBgFixture(t, localRunner(t, nil), &ExecOptions{TracerProvider: tp})
	ctx, span := tp.Tracer("test").Start(t.Context(), "call")
	r, err := f.tools[WorkspaceExecName].Call(ctx, Call{Args: argsJSON(t, map[string]any{"command": "echo secret-output; exec cat", "background": true}), SessionID: "s1"})
	span.End()
	if err != nil || r.IsError {
		t.Fatalf("%v %s", err, r.Text)
	}
	h := decodeBg(t, r).Handle
	f.call(t, "s1", WorkspaceExecKillName, map[string]any{"handle": h})
	waitFor(t, "the run span to end", func() bool { return len(rec.Ended()) == 2 })
	spans := rec.Ended()
	tracingtest.Check(t, spans, []tracingtest.Want{
		{Name: "call"},
		{Name: "workspace.run", Parent: "call", Attrs: map[attribute.Key]attribute.Value{
			"skillkit.workspace.id": tracingtest.Str("s1"), "skillkit.run.runner": tracingtest.Str("unconfined-local"),
			"skillkit.run.background": tracingtest.Bool(true), "skillkit.run.killed": tracingtest.Bool(true),
			"process.exit.code": tracingtest.Int(137), "skillkit.run.timeout_ms": tracingtest.Int64(DefaultBackgroundWallTime.Milliseconds()),
		}},
	})
	tracingtest.NoContent(t, spans, "secret-output", "echo")
}

func ExampleWorkspaceExecTools() {
	r, err := sandbox.NewIsolated(nil)
	var fe *sandbox.FeatureError
	if errors.As(err, &fe) {
		fmt.Println("hello world\nexited 0") // this kernel cannot isolate
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	root, _ := os.MkdirTemp("", "workspaces")
	defer os.RemoveAll(root)
	m, _ := workspace.New(&workspace.Options{Root: root})
	defer m.Close() // kills what still runs, unmounts the volumes
	et, err := WorkspaceExecTools(WorkspaceExecConfig{Runner: r, Workspaces: m})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer et.Close()
	tools := map[string]Tool{}
	for _, t := range et.Tools() {
		tools[t.Name] = t
	}
	call := func(name, args string) BackgroundResult {
		res, err := tools[name].Call(context.Background(), Call{SessionID: "session-1", Args: json.RawMessage(args)})
		if err != nil {
			panic(err)
		}
		var out BackgroundResult
		_ = json.Unmarshal([]byte(res.Text), &out)
		return out
	}
	// The command waits for a line on its stdin, answers and ends.
	h := call(WorkspaceExecName, `{"command": "read -r name; echo \"hello $name\"", "background": true}`).Handle
	call(WorkspaceExecWriteName, `{"handle": "`+h+`", "input": "world\n", "close_stdin": true}`)
	var stdout string
	for {
		out := call(WorkspaceExecReadName, `{"handle": "`+h+`", "wait_ms": 5000}`)
		stdout += out.Stdout
		if out.Status != StatusRunning && !out.More {
			fmt.Print(stdout)
			fmt.Println(out.Status, *out.ExitCode)
			break
		}
	}
	// Output:
	// hello world
	// exited 0
}
